#include "store/redis_client.h"

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <ctime>
#include <utility>

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <sys/time.h>

#include "common/time_text.h"

namespace tandem::store {
namespace {

constexpr uint32_t kMaxTimeoutMs = 600'000;
constexpr size_t kMaxPrefixBytes = 128;
constexpr size_t kMaxUrlBytes = 4096;
constexpr int kMaxDatabase = 1'000'000;
constexpr size_t kMaxEchoBytes = 200;

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- URLs ----

bool is_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// The URL with anything that may be a password replaced by "***", cut to kMaxEchoBytes, so
// that a message may quote it: the password of the user-info, and a "port" that is not a
// number (someone who wrote redis://:secret without the '@').
std::string redacted(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return url.size() > kMaxEchoBytes ? std::string(url.substr(0, kMaxEchoBytes)) + "…"
                                      : std::string(url);
  }
  const size_t start = scheme_end + 3;
  const size_t end = std::min(url.find_first_of("/?", start), url.size());
  std::string_view authority = url.substr(start, end - start);
  std::string out(url.substr(0, start));
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    const size_t colon = userinfo.find(':');
    out +=
        colon == std::string_view::npos ? "***" : std::string(userinfo.substr(0, colon)) + ":***";
    out += '@';
    authority = authority.substr(at + 1);
  }
  const size_t bracket = authority.rfind(']');
  const size_t colon = authority.find(':', bracket == std::string_view::npos ? 0 : bracket);
  if (colon != std::string_view::npos && !is_digits(authority.substr(colon + 1))) {
    out += std::string(authority.substr(0, colon)) + ":***";
  } else {
    out += std::string(authority);
  }
  out += std::string(url.substr(end));
  if (out.size() > kMaxEchoBytes) {
    out = out.substr(0, kMaxEchoBytes) + "…";
  }
  return out;
}

Error url_error(std::string_view url, const std::string& problem) {
  return make_error(ErrorCode::kInvalidArgument,
                    "redis URL '" + redacted(url) + "' " + problem +
                        " (expected redis://[[user]:password@]host[:port][/db] or "
                        "unix:///path/to.sock[?db=N])");
}

// %XX escapes in the user-info; `what` ("user name", "password") names the part in errors,
// which never quote it.
Result<std::string> percent_decode(std::string_view url, std::string_view text,
                                   std::string_view what) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) {
      return url_error(url, "has a bad %-escape in its " + std::string(what));
    }
    const int high = hex(text[i + 1]);
    const int low = hex(text[i + 2]);
    if (high < 0 || low < 0) {
      return url_error(url, "has a bad %-escape in its " + std::string(what));
    }
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

Result<int> parse_db(std::string_view url, std::string_view text) {
  if (!is_digits(text) || text.size() > 7 || std::stoi(std::string(text)) > kMaxDatabase) {
    return url_error(
        url, "has a bad database number (expected 0.." + std::to_string(kMaxDatabase) + ")");
  }
  return std::stoi(std::string(text));
}

Result<RedisEndpoint> parse_unix_url(std::string_view url) {
  RedisEndpoint endpoint;
  std::string_view rest = url.substr(std::string_view("unix://").size());
  const size_t query = rest.find('?');
  std::string_view path = rest.substr(0, query);
  if (path.empty() || path[0] != '/') {
    return url_error(url, "needs an absolute socket path (three slashes: unix:///run/redis.sock)");
  }
  endpoint.unix_path = std::string(path);
  if (query != std::string_view::npos) {
    std::string_view parameters = rest.substr(query + 1);
    if (parameters.substr(0, 3) != "db=") {
      return url_error(url, "has an unknown parameter (only ?db=N is understood)");
    }
    auto db = parse_db(url, parameters.substr(3));
    if (!db) {
      return db.error();
    }
    endpoint.db = *db;
  }
  return endpoint;
}

Result<RedisEndpoint> parse_tcp_url(std::string_view url) {
  RedisEndpoint endpoint;
  std::string_view rest = url.substr(std::string_view("redis://").size());
  const size_t authority_end = std::min(rest.find_first_of("/?"), rest.size());
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view path = rest.substr(authority_end);

  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    const size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      return url_error(url,
                       "has user-info without a password; write redis://:password@host "
                       "(or redis://user:password@host)");
    }
    auto user = percent_decode(url, userinfo.substr(0, colon), "user name");
    if (!user) {
      return user.error();
    }
    auto password = percent_decode(url, userinfo.substr(colon + 1), "password");
    if (!password) {
      return password.error();
    }
    endpoint.username = std::move(*user);
    endpoint.password = std::move(*password);
    authority = authority.substr(at + 1);
  }

  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return url_error(url, "has an IPv6 address without its closing ']'");
    }
    endpoint.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        return url_error(url, "has text after the IPv6 address where a ':port' belongs");
      }
      port = after.substr(1);
      if (port.empty()) {
        return url_error(url, "has an empty port");
      }
    }
  } else {
    const size_t colon = authority.find(':');
    endpoint.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) {
        return url_error(url, "has an empty port");
      }
    }
  }
  if (endpoint.host.empty()) {
    return url_error(url, "has no host");
  }
  if (!port.empty()) {
    if (!is_digits(port) || port.size() > 5 || std::stoi(std::string(port)) < 1 ||
        std::stoi(std::string(port)) > 65535) {
      return url_error(url, "has a bad port (expected a number 1..65535)");
    }
    endpoint.port = static_cast<uint16_t>(std::stoi(std::string(port)));
  }

  if (!path.empty() && path[0] == '?') {
    return url_error(url, "has query parameters, which redis:// URLs do not take");
  }
  if (path.size() > 1) {
    std::string_view db = path.substr(1);
    if (db.find('?') != std::string_view::npos) {
      return url_error(url, "has query parameters, which redis:// URLs do not take");
    }
    auto number = parse_db(url, db);
    if (!number) {
      return number.error();
    }
    endpoint.db = *number;
  }
  return endpoint;
}

std::string describe(const RedisEndpoint& endpoint) {
  if (!endpoint.unix_path.empty()) {
    return "unix://" + endpoint.unix_path +
           (endpoint.db != 0 ? "?db=" + std::to_string(endpoint.db) : "");
  }
  const bool ipv6 = endpoint.host.find(':') != std::string::npos;
  return "redis://" + (ipv6 ? "[" + endpoint.host + "]" : endpoint.host) + ":" +
         std::to_string(endpoint.port) + "/" + std::to_string(endpoint.db);
}

// ---- replies ----

timeval to_timeval(uint32_t ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

// A command's name for messages: argv[0] upper-cased, or "command" when it does not look like
// one (it is the only argument ever quoted, and it must not carry data).
std::string command_name(std::string_view name) {
  if (name.empty() || name.size() > 32) {
    return "command";
  }
  std::string out;
  for (char c : name) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.';
    if (!word) {
      return "command";
    }
    out.push_back(c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
  }
  return out;
}

// An error reply's text, made safe to show: Redis quotes the arguments of an unknown command
// ("…, with args beginning with: 'secret'"), so that part is cut, and so is anything long.
std::string safe_error_text(std::string_view text) {
  const size_t args = text.find(", with args beginning with");
  if (args != std::string_view::npos) {
    text = text.substr(0, args);
  }
  std::string out;
  for (char c : text.substr(0, std::min(text.size(), kMaxEchoBytes))) {
    out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  if (text.size() > kMaxEchoBytes) {
    out += "…";
  }
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  return out;
}

ErrorCode error_reply_code(std::string_view text) {
  const std::string_view word = text.substr(0, text.find(' '));
  for (std::string_view busy : {"BUSY", "LOADING", "OOM", "READONLY", "TRYAGAIN", "MASTERDOWN",
                                "CLUSTERDOWN", "NOREPLICAS"}) {
    if (word == busy) {
      return ErrorCode::kBusy;
    }
  }
  for (std::string_view auth : {"NOAUTH", "WRONGPASS", "NOPERM"}) {
    if (word == auth) {
      return ErrorCode::kInvalidArgument;
    }
  }
  return ErrorCode::kInternal;
}

Error reply_error(std::string_view what, std::string_view text) {
  std::string message = "redis " + std::string(what) + " failed: " + safe_error_text(text);
  const ErrorCode code = error_reply_code(text);
  if (text.substr(0, 6) == "NOAUTH") {
    message += " (the server needs a password: set it in the URL or the password option)";
  }
  return make_error(code, std::move(message));
}

// hiredis's reply as a RedisReply; an error reply anywhere in it becomes an Error.
Result<RedisReply> convert(const redisReply* raw, std::string_view what) {
  RedisReply reply;
  switch (raw->type) {
    case REDIS_REPLY_NIL:
      return reply;
    case REDIS_REPLY_INTEGER:
      reply.type = RedisReply::Type::kInteger;
      reply.integer = static_cast<int64_t>(raw->integer);
      return reply;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      reply.type =
          raw->type == REDIS_REPLY_STRING ? RedisReply::Type::kString : RedisReply::Type::kStatus;
      reply.text.assign(raw->str, raw->len);
      return reply;
    case REDIS_REPLY_ARRAY:
      reply.type = RedisReply::Type::kArray;
      reply.elements.reserve(raw->elements);
      for (size_t i = 0; i < raw->elements; ++i) {
        auto element = convert(raw->element[i], what);
        if (!element) {
          return element.error();
        }
        reply.elements.push_back(std::move(element).value());
      }
      return reply;
    case REDIS_REPLY_ERROR:
      return reply_error(what, std::string_view(raw->str, raw->len));
    default:
      return make_error(ErrorCode::kInternal, "redis " + std::string(what) +
                                                  " returned a reply of unknown type " +
                                                  std::to_string(raw->type));
  }
}

bool is_error_reply(const redisReply* raw, std::string_view code) {
  return raw->type == REDIS_REPLY_ERROR &&
         std::string_view(raw->str, raw->len).substr(0, code.size()) == code;
}

// hiredis writes with write(2), which raises SIGPIPE when the server has reset the connection;
// its default action would kill the gateway. This blocks SIGPIPE on the calling thread for one
// round trip and swallows one raised meanwhile, leaving the process's signal handling alone.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    const int saved = errno;
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{};
        while (sigtimedwait(&pipe_, nullptr, &zero) == -1 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    errno = saved;
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

}  // namespace

// ---- options ----

Result<RedisEndpoint> parse_redis_url(std::string_view url) {
  if (url.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the redis URL is empty (expected redis://host:port or "
                      "unix:///path/to.sock)");
  }
  if (url.size() > kMaxUrlBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the redis URL is " + std::to_string(url.size()) + " bytes; at most " +
                          std::to_string(kMaxUrlBytes) + " are read");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return url_error(url, "contains a space or a control character");
    }
  }
  if (url.substr(0, 8) == "redis://") {
    return parse_tcp_url(url);
  }
  if (url.substr(0, 7) == "unix://") {
    return parse_unix_url(url);
  }
  if (url.substr(0, 9) == "rediss://") {
    return url_error(url, "asks for TLS (rediss://), which this build does not support");
  }
  return url_error(url, "has an unknown scheme");
}

Result<RedisEndpoint> check_redis_options(const RedisOptions& options) {
  auto endpoint = parse_redis_url(options.url);
  if (!endpoint) {
    return endpoint.error();
  }
  const std::pair<const char*, uint32_t> timeouts[] = {
      {"connect_timeout_ms", options.connect_timeout_ms},
      {"command_timeout_ms", options.command_timeout_ms}};
  for (const auto& [name, value] : timeouts) {
    if (value < 1 || value > kMaxTimeoutMs) {
      return make_error(ErrorCode::kInvalidArgument, std::string("redis ") + name + " must be 1.." +
                                                         std::to_string(kMaxTimeoutMs) + ", not " +
                                                         std::to_string(value));
    }
  }
  if (options.prefix.empty() || options.prefix.size() > kMaxPrefixBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the redis key prefix must be 1.." + std::to_string(kMaxPrefixBytes) +
                          " bytes, not " + std::to_string(options.prefix.size()));
  }
  for (char c : options.prefix) {
    if (c <= 0x20 || c >= 0x7f) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the redis key prefix may hold printable ASCII without spaces only");
    }
  }
  if (!options.password.empty()) {
    endpoint->password = options.password;
  }
  return endpoint;
}

// ---- RedisClient ----

void RedisContextFree::operator()(redisContext* context) const {
  redisFree(context);
}

void RedisReplyFree::operator()(redisReply* reply) const {
  freeReplyObject(reply);
}

RedisClient::RedisClient(RedisOptions options, RedisEndpoint endpoint)
    : options_(std::move(options)), endpoint_(std::move(endpoint)), address_(describe(endpoint_)) {}

RedisClient::~RedisClient() = default;

Result<std::unique_ptr<RedisClient>> RedisClient::connect(const RedisOptions& options) {
  auto endpoint = check_redis_options(options);
  if (!endpoint) {
    return endpoint.error();
  }
  std::unique_ptr<RedisClient> client(new RedisClient(options, std::move(endpoint).value()));
  {
    std::lock_guard lock(client->mutex_);
    if (Status status = client->connect_locked(); !status) {
      return status.error();
    }
  }
  return client;
}

std::string RedisClient::key(std::string_view suffix) const {
  std::string out = options_.prefix;
  out += suffix;
  return out;
}

Status RedisClient::connect_locked() {
  context_.reset();
  const timeval connect_timeout = to_timeval(options_.connect_timeout_ms);
  RedisContextPtr context(
      endpoint_.unix_path.empty()
          ? redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, connect_timeout)
          : redisConnectUnixWithTimeout(endpoint_.unix_path.c_str(), connect_timeout));
  if (!context) {
    return make_error(ErrorCode::kInternal, "cannot allocate a redis connection");
  }
  if (context->err != 0) {
    return make_error(ErrorCode::kBusy,
                      "cannot connect to redis at " + address_ + ": " + context->errstr);
  }
  if (redisSetTimeout(context.get(), to_timeval(options_.command_timeout_ms)) != REDIS_OK) {
    return make_error(ErrorCode::kInternal,
                      "cannot set the redis command timeout: " + std::string(context->errstr));
  }
  if (endpoint_.unix_path.empty()) {
    // Notices a peer that vanished without closing (a crashed host) on an idle connection.
    (void)redisEnableKeepAlive(context.get());
  }
  context_ = std::move(context);

  // The handshake runs without the reconnect-and-retry of ordinary commands: a failure here
  // is reported as it is.
  auto handshake = [this](const std::vector<std::string_view>& argv,
                          std::string_view what) -> Status {
    bool dropped = false;
    auto raw = attempt_locked(argv, what, &dropped);
    if (!raw) {
      return make_error(raw.error().code,
                        "cannot connect to redis at " + address_ + ": " + raw.error().message);
    }
    auto reply = convert(raw->get(), what);
    if (!reply) {
      context_.reset();
      return make_error(reply.error().code,
                        "cannot connect to redis at " + address_ + ": " + reply.error().message);
    }
    return {};
  };
  if (!endpoint_.password.empty()) {
    std::vector<std::string_view> auth = {"AUTH"};
    if (!endpoint_.username.empty()) {
      auth.push_back(endpoint_.username);
    }
    auth.push_back(endpoint_.password);
    if (Status status = handshake(auth, "AUTH"); !status) {
      return status;
    }
  }
  if (endpoint_.db != 0) {
    const std::string db = std::to_string(endpoint_.db);
    if (Status status = handshake({"SELECT", db}, "SELECT"); !status) {
      return status;
    }
  }
  return handshake({"PING"}, "PING");
}

Result<RedisReplyPtr> RedisClient::attempt_locked(const std::vector<std::string_view>& argv,
                                                  std::string_view what, bool* dropped) {
  *dropped = false;
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  pointers.reserve(argv.size());
  lengths.reserve(argv.size());
  for (std::string_view arg : argv) {
    pointers.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  void* raw = nullptr;
  int saved_errno = 0;
  {
    SigpipeGuard guard;
    errno = 0;
    raw = redisCommandArgv(context_.get(), static_cast<int>(argv.size()), pointers.data(),
                           lengths.data());
    saved_errno = errno;
  }
  RedisReplyPtr reply(static_cast<redisReply*>(raw));
  if (reply) {
    return reply;
  }
  // hiredis leaves a context unusable after any failure: the next call starts afresh.
  const int err = context_->err;
  const std::string detail = context_->errstr;
  context_.reset();
  if (err == REDIS_ERR_EOF ||
      (err == REDIS_ERR_IO &&
       (saved_errno == ECONNRESET || saved_errno == EPIPE || saved_errno == ECONNABORTED))) {
    *dropped = true;
    return make_error(ErrorCode::kBusy, "redis " + std::string(what) + " failed: the server at " +
                                            address_ + " closed the connection");
  }
  if (err == REDIS_ERR_IO && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK)) {
    return make_error(ErrorCode::kBusy, "redis " + std::string(what) + " failed: no reply from " +
                                            address_ + " within " +
                                            std::to_string(options_.command_timeout_ms) + " ms");
  }
  return make_error(err == REDIS_ERR_OOM ? ErrorCode::kInternal : ErrorCode::kBusy,
                    "redis " + std::string(what) + " failed: " + address_ + ": " + detail);
}

Result<RedisReplyPtr> RedisClient::roundtrip_locked(const std::vector<std::string_view>& argv,
                                                    std::string_view what) {
  if (!context_) {
    if (Status status = connect_locked(); !status) {
      note_failure(status.error());
      return status.error();
    }
  }
  bool dropped = false;
  auto reply = attempt_locked(argv, what, &dropped);
  if (!reply && dropped) {
    // The server closed the connection without answering: it restarted, or dropped an idle
    // client. It then never read the command, so sending it once more is safe. (Only a server
    // that crashes between running a command and replying could see it twice.)
    if (Status status = connect_locked(); !status) {
      note_failure(status.error());
      return status.error();
    }
    reply = attempt_locked(argv, what, &dropped);
  }
  if (!reply) {
    note_failure(reply.error());
  }
  return reply;
}

std::optional<Error> RedisClient::refuse_while_down(std::string_view what) {
  if (reachable()) {
    return std::nullopt;
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  const auto outage = this->outage();
  const std::string since =
      outage ? " since " + utc_iso8601(outage->since_unix_ms) + " (" + outage->reason + ")" : "";
  return make_error(ErrorCode::kBusy, "redis " + std::string(what) + " not sent: the server at " +
                                          address_ + " is unreachable" + since +
                                          "; it is probed in the background");
}

void RedisClient::note_failure(const Error& error) {
  // Only a server out of reach is an outage: an error reply, a refused password or a full
  // memory leaves the server usable for the next call.
  if (error.code != ErrorCode::kBusy) {
    return;
  }
  std::lock_guard lock(outage_mutex_);
  if (!down_.load(std::memory_order_relaxed)) {
    outage_ = {wall_clock_ms(), error.message};
    down_.store(true, std::memory_order_release);
  }
}

std::optional<RedisOutage> RedisClient::outage() const {
  std::lock_guard lock(outage_mutex_);
  if (!down_.load(std::memory_order_relaxed)) {
    return std::nullopt;
  }
  return outage_;
}

Status RedisClient::probe() {
  std::lock_guard lock(mutex_);
  Status status = connect_locked();
  if (!status) {
    note_failure(status.error());
    return status;
  }
  std::lock_guard outage_lock(outage_mutex_);
  down_.store(false, std::memory_order_release);
  return {};
}

Result<RedisReply> RedisClient::command(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "a redis command needs at least its name");
  }
  const std::string what = command_name(argv[0]);
  if (auto refused = refuse_while_down(what)) {
    return *refused;
  }
  std::vector<std::string_view> views(argv.begin(), argv.end());
  std::lock_guard lock(mutex_);
  // Checked again: the outage may have begun while this call waited for the connection.
  if (auto refused = refuse_while_down(what)) {
    return *refused;
  }
  auto raw = roundtrip_locked(views, what);
  if (!raw) {
    return raw.error();
  }
  return convert(raw->get(), what);
}

Result<std::string> RedisClient::script_sha_locked(const RedisScript& script, bool reload) {
  if (!reload) {
    if (auto it = script_shas_.find(script.name); it != script_shas_.end()) {
      return it->second;
    }
  }
  const std::string what = "SCRIPT LOAD (script " + script.name + ")";
  auto raw = roundtrip_locked({"SCRIPT", "LOAD", script.source}, what);
  if (!raw) {
    return raw.error();
  }
  auto reply = convert(raw->get(), what);
  if (!reply) {
    return reply.error();
  }
  if (!reply->is_string()) {
    return make_error(ErrorCode::kInternal, "redis " + what + " did not return a SHA1");
  }
  script_shas_[script.name] = reply->text;
  return reply->text;
}

Result<RedisReply> RedisClient::eval(const RedisScript& script,
                                     const std::vector<std::string>& keys,
                                     const std::vector<std::string>& args) {
  const std::string what = "EVALSHA (script " + script.name + ")";
  const std::string key_count = std::to_string(keys.size());
  if (auto refused = refuse_while_down(what)) {
    return *refused;
  }
  std::lock_guard lock(mutex_);
  if (auto refused = refuse_while_down(what)) {
    return *refused;
  }
  for (int attempt = 0;; ++attempt) {
    auto sha = script_sha_locked(script, attempt > 0);
    if (!sha) {
      return sha.error();
    }
    std::vector<std::string_view> argv;
    argv.reserve(3 + keys.size() + args.size());
    argv.push_back("EVALSHA");
    argv.push_back(*sha);
    argv.push_back(key_count);
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    auto raw = roundtrip_locked(argv, what);
    if (!raw) {
      return raw.error();
    }
    // The server forgot the script (a restart, SCRIPT FLUSH): load it again, once.
    if (attempt == 0 && is_error_reply(raw->get(), "NOSCRIPT")) {
      continue;
    }
    return convert(raw->get(), what);
  }
}

std::optional<int64_t> RedisReply::as_int64() const {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (type != Type::kString || ec != std::errc() || ptr != end || text.empty()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace tandem::store
