#include "store/redis_client.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <ctime>
#include <utility>

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <sys/time.h>

#include "common/time_text.h"
#include "store/redis_reply.h"
#include "store/redis_url.h"

namespace tandem::store {
namespace {

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

timeval to_timeval(uint32_t ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

// hiredis writes with write(2), which raises SIGPIPE when the server has reset the connection;
// its default action would kill the gateway. This blocks SIGPIPE on the calling thread for one
// round trip and swallows one raised meanwhile, leaving the process's signal handling alone.
// Thread-safety: lives on the stack of the thread whose mask it changes.
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

void RedisContextFree::operator()(redisContext* context) const {
  redisFree(context);
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

}  // namespace tandem::store
