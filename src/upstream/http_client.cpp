#include "upstream/http_client.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <ctime>
#include <limits>

#include "net/http_read.h"
#include "net/http_write.h"

namespace tandem::upstream {
namespace {

using Failure = HttpFailure;
using Kind = HttpFailure::Kind;
using std::chrono::milliseconds;

constexpr size_t kReadChunk = 16 << 10;

Failure failure(Kind kind, std::string message) {
  Failure f;
  f.kind = kind;
  f.message = std::move(message);
  return f;
}

// Classifies a transport error code from a given phase ("connecting", "reading the body"...).
Failure from_error(const boost::system::error_code& ec, const char* phase, bool cancelled) {
  if (cancelled || ec == net::asio::error::operation_aborted) {
    return failure(Kind::kCancelled, std::string("cancelled while ") + phase);
  }
  if (ec == net::beast::error::timeout) {
    return failure(Kind::kTimeout, std::string("timed out ") + phase);
  }
  return failure(Kind::kProtocol, std::string("failed ") + phase + ": " + ec.message());
}

template <typename Stream>
auto& lowest(Stream& stream) {
  return net::beast::get_lowest_layer(stream);
}

// Reads an upstream's response: its status, the two fields the gateway uses and the body, which
// goes straight into the caller's buffer. Beast's response parser would also store every field
// of the head in a container of its own, filled and freed on every request for nothing.
class ResponseParser final : public net::http::basic_parser<false> {
 public:
  int status() const { return status_; }
  // Once the head is read: the fields move to their owner.
  std::string take_content_type() { return std::move(content_type_); }
  std::string take_retry_after() { return std::move(retry_after_); }

  // Where the next body bytes go, and how many of them fit.
  void body_into(char* data, size_t size) {
    data_ = data;
    space_ = size;
  }
  size_t space_left() const { return space_; }

 private:
  using error_code = boost::system::error_code;
  using string_view = net::beast::string_view;

  void on_request_impl(net::http::verb, string_view, string_view, int, error_code&) override {}
  void on_response_impl(int code, string_view, int, error_code&) override { status_ = code; }
  void on_field_impl(net::http::field name, string_view, string_view value, error_code&) override {
    if (name == net::http::field::content_type) {
      content_type_.assign(value.data(), value.size());
    } else if (name == net::http::field::retry_after) {
      retry_after_.assign(value.data(), value.size());
    }
  }
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>&, error_code&) override {}
  // As Beast's buffer_body: what fits is taken, the rest waits for the next buffer.
  size_t on_body_impl(string_view body, error_code& ec) override {
    const size_t taken = std::min(body.size(), space_);
    if (taken > 0) {
      std::memcpy(data_, body.data(), taken);
      data_ += taken;
      space_ -= taken;
    }
    if (taken < body.size()) {
      ec = net::http::error::need_buffer;
    }
    return taken;
  }
  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
  size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) override {
    return on_body_impl(body, ec);
  }
  void on_finish_impl(error_code&) override {}

  int status_ = 0;
  std::string content_type_;
  std::string retry_after_;
  char* data_ = nullptr;
  size_t space_ = 0;
};

template <typename Stream>
class Exchange final : public HttpExchange {
 public:
  // `executor` is the calling coroutine's: cancel() closes the socket there. A pooled socket
  // keeps the executor of the request that opened it, so the stream's own may be another's.
  template <typename... Args>
  Exchange(net::asio::any_io_executor executor, const config::Timeouts& timeouts, size_t max_bytes,
           Args&&... args)
      : stream_(std::forward<Args>(args)...),
        executor_(std::move(executor)),
        timeouts_(timeouts),
        max_bytes_(max_bytes),
        deadline_(Clock::now() + milliseconds(timeouts.total_ms)) {
    // Enforced by max_bytes_ with a clearer message.
    parser_.body_limit(std::numeric_limits<std::uint64_t>::max());
  }

  ~Exchange() override {
    if constexpr (std::is_same_v<Stream, net::beast::tcp_stream>) {
      // Back to the pool only when the connection is in a clean state: the whole response
      // read, the upstream willing to keep it, nothing cancelled or failed.
      if (pool_ != nullptr && parser_.is_done() && parser_.keep_alive() && !cancelled_ &&
          !failed_ && lowest(stream_).socket().is_open()) {
        pool_->give(lowest(stream_).release_socket());
      }
    }
  }

  void set_pool(ConnectionPool* pool) { pool_ = pool; }
  Stream& stream() { return stream_; }
  Clock::time_point deadline() const { return deadline_; }

  // Bounded by the phase's timeout and by what is left of the total.
  void arm(uint32_t phase_ms) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline_ - Clock::now());
    lowest(stream_).expires_after(
        std::max(milliseconds(1), std::min(milliseconds(phase_ms), left)));
  }

  // Sends the request's head and body in one write, then reads the response's head.
  net::awaitable<std::optional<Failure>> send(const std::string& head, const std::string& body) {
    boost::system::error_code ec;
    arm(timeouts_.idle_ms);
    if constexpr (std::is_same_v<Stream, net::beast::tcp_stream>) {
      const std::array<std::string_view, 2> parts{head, body};
      ec = co_await net::write_parts(stream_, parts);
    } else {
      const std::array<net::asio::const_buffer, 2> parts{net::asio::buffer(head),
                                                         net::asio::buffer(body)};
      co_await net::asio::async_write(stream_, parts,
                                      net::asio::redirect_error(net::use_awaitable, ec));
    }
    if (ec) {
      co_return from_error(ec, "sending the request", cancelled_);
    }
    arm(timeouts_.first_byte_ms);
    if constexpr (std::is_same_v<Stream, net::beast::tcp_stream>) {
      ec = co_await net::read_header(stream_, buffer_, parser_);
    } else {
      co_await net::http::async_read_header(stream_, buffer_, parser_,
                                            net::asio::redirect_error(net::use_awaitable, ec));
    }
    if (ec) {
      Failure f = from_error(ec, "waiting for the response header (first byte)", cancelled_);
      co_return f;
    }
    status_ = parser_.status();
    content_type_ = parser_.take_content_type();
    retry_after_ = parser_.take_retry_after();
    co_return std::nullopt;
  }

  net::awaitable<std::variant<std::string, Failure>> read_some() override {
    while (true) {
      if (parser_.is_done()) {
        co_return std::string();
      }
      parser_.body_into(chunk_, sizeof(chunk_));
      arm(timeouts_.idle_ms);
      boost::system::error_code ec;
      if constexpr (std::is_same_v<Stream, net::beast::tcp_stream>) {
        ec = co_await net::read_some(stream_, buffer_, parser_);
      } else {
        co_await net::http::async_read_some(stream_, buffer_, parser_,
                                            net::asio::redirect_error(net::use_awaitable, ec));
      }
      if (ec && ec != net::http::error::need_buffer) {
        failed_ = true;
        co_return from_error(ec, "reading the response body", cancelled_);
      }
      const size_t n = sizeof(chunk_) - parser_.space_left();
      received_ += n;
      if (received_ > max_bytes_) {
        co_return failure(Kind::kTooLarge,
                          "the upstream response exceeds " + std::to_string(max_bytes_) + " bytes");
      }
      if (n > 0) {
        co_return std::string(chunk_, n);
      }
    }
  }

  void cancel() override {
    cancelled_ = true;
    // The close runs later on the exchange's executor, and the caller may destroy the exchange
    // first (it cancelled and returned at once, or the read it was waiting for completed just
    // before the close was posted): the close then finds `alive_` gone and does nothing.
    net::asio::post(executor_, [this, alive = std::weak_ptr<bool>(alive_)] {
      if (alive.expired()) {
        return;
      }
      boost::system::error_code ignored;
      lowest(stream_).socket().shutdown(net::tcp::socket::shutdown_both, ignored);
      lowest(stream_).socket().close(ignored);
    });
  }

 private:
  Stream stream_;
  net::asio::any_io_executor executor_;
  config::Timeouts timeouts_;
  size_t max_bytes_;
  Clock::time_point deadline_;
  net::beast::flat_buffer buffer_;
  ResponseParser parser_;
  char chunk_[kReadChunk];
  size_t received_ = 0;
  bool failed_ = false;
  ConnectionPool* pool_ = nullptr;
  std::atomic<bool> cancelled_{false};
  // Expires with the exchange; a posted close checks it on the same executor (cancel()).
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Cancels an exchange that is still being opened while it lives; `signal` may be null.
class OpenGuard {
 public:
  OpenGuard(CancelSignal* signal, HttpExchange& exchange) : signal_(signal) {
    if (signal_ != nullptr) {
      id_ = signal_->on_cancel([&exchange] { exchange.cancel(); });
    }
  }
  ~OpenGuard() {
    if (signal_ != nullptr) {
      signal_->remove(id_);
    }
  }
  OpenGuard(const OpenGuard&) = delete;
  OpenGuard& operator=(const OpenGuard&) = delete;

  // A failure while opening, reported as a cancellation when the signal fired: a connect
  // aborted by it is not the upstream's fault (no circuit failure, no "offline").
  Failure fail(Failure f) const {
    if (signal_ != nullptr && signal_->cancelled() && f.kind != Kind::kCancelled) {
      f = failure(Kind::kCancelled, "cancelled while " + f.message);
    }
    return f;
  }

 private:
  CancelSignal* signal_;
  size_t id_ = static_cast<size_t>(-1);
};

// Resolves and connects `lowest(stream)` within the connect timeout.
template <typename Stream>
net::awaitable<std::optional<Failure>> connect(Exchange<Stream>& exchange, const Endpoint& at,
                                               uint32_t connect_ms) {
  auto executor = co_await net::asio::this_coro::executor;
  boost::system::error_code ec;
  std::vector<net::tcp::endpoint> endpoints;
  const auto literal = net::asio::ip::make_address(at.host, ec);
  if (!ec) {  // an IP address: no resolver round trip (it runs on a thread of its own)
    endpoints.emplace_back(literal, static_cast<uint16_t>(std::stoi(at.port)));
  } else {
    net::tcp::resolver resolver(executor);
    ec.clear();
    auto results = co_await resolver.async_resolve(
        at.host, at.port, net::asio::redirect_error(net::use_awaitable, ec));
    if (ec) {
      co_return failure(Kind::kConnect, "cannot resolve " + at.host + ": " + ec.message());
    }
    for (const auto& entry : results) {
      endpoints.push_back(entry.endpoint());
    }
  }
  exchange.arm(connect_ms);
  co_await lowest(exchange.stream())
      .async_connect(endpoints, net::asio::redirect_error(net::use_awaitable, ec));
  if (ec) {
    Failure f = from_error(ec, "connecting", false);
    f.kind = Kind::kConnect;
    f.message = "cannot connect to " + at.host + ":" + at.port + ": " +
                (ec == net::beast::error::timeout ? "timed out" : ec.message());
    co_return f;
  }
  lowest(exchange.stream()).socket().set_option(net::tcp::no_delay(true), ec);
  co_return std::nullopt;
}

// A header field the head may carry: no line break or NUL in its name or value, which would
// end the field early and let the rest pass as fields or a request of its own.
bool safe_field(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// Beast's case-insensitive comparison, over the standard library's string views.
bool same_field(std::string_view a, std::string_view b) {
  return net::beast::iequals(net::beast::string_view(a.data(), a.size()),
                             net::beast::string_view(b.data(), b.size()));
}

void append_field(std::string& head, std::string_view name, std::string_view value) {
  head.append(name);
  head += ": ";
  head.append(value);
  head += "\r\n";
}

// The request's head as it goes on the wire: Host, User-Agent, the request's own headers, then
// the body's type and length (a GET without a body has neither). Written straight into one
// string: the fields are known, and a field container per request costs an allocation each.
Result<std::string> request_head(const Endpoint& at, const HttpRequest& request) {
  // Fields the head writes itself: a request's header of the same name is not written twice.
  static constexpr std::array<std::string_view, 4> kOwn{"Host", "User-Agent", "Content-Type",
                                                        "Content-Length"};
  std::string head;
  head.reserve(192 + at.base_path.size() + request.path.size());
  head.append(request.method);
  head += ' ';
  head.append(at.base_path);
  head.append(request.path);
  head += " HTTP/1.1\r\n";
  const bool default_port = (at.tls && at.port == "443") || (!at.tls && at.port == "80");
  head += "Host: ";
  head.append(at.host);
  if (!default_port) {
    head += ':';
    head.append(at.port);
  }
  head += "\r\n";
  std::string_view user_agent = "tandem/0.1";
  for (const auto& [name, value] : request.headers) {
    if (!safe_field(name) || !safe_field(value)) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the request header '" + name + "' holds a line break or a NUL byte");
    }
    if (same_field(name, "User-Agent")) {
      user_agent = value;
    }
  }
  append_field(head, "User-Agent", user_agent);
  for (const auto& header : request.headers) {
    // Not a structured binding: Clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::string& name = header.first;
    const bool own = std::any_of(kOwn.begin(), kOwn.end(), [&name](std::string_view field) {
      return same_field(name, field);
    });
    if (!own) {
      append_field(head, name, header.second);
    }
  }
  const std::string& body = request.body.bytes();
  if (!body.empty() || request.method == "POST") {
    append_field(head, "Content-Type", "application/json");
    append_field(head, "Content-Length", std::to_string(body.size()));
  }
  head += "\r\n";
  return head;
}

}  // namespace

std::optional<milliseconds> parse_retry_after(std::string_view value) {
  if (value.empty()) {
    return std::nullopt;
  }
  if (value.find_first_not_of("0123456789") == std::string_view::npos && value.size() < 10) {
    return milliseconds(std::stoll(std::string(value)) * 1000);
  }
  std::tm tm{};
  const std::string text(value);
  if (strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm) == nullptr) {
    return std::nullopt;
  }
  const std::time_t at = timegm(&tm);
  const std::time_t now = std::time(nullptr);
  return milliseconds(std::max<std::time_t>(0, at - now) * 1000);
}

net::awaitable<std::variant<std::string, HttpFailure>> HttpExchange::read_all(size_t limit) {
  std::string all;
  while (true) {
    auto part = co_await read_some();
    if (auto* failed = std::get_if<HttpFailure>(&part)) {
      co_return std::move(*failed);
    }
    auto& bytes = std::get<std::string>(part);
    if (bytes.empty()) {
      co_return all;
    }
    if (all.size() + bytes.size() > limit) {
      co_return failure(Kind::kTooLarge,
                        "the upstream response exceeds " + std::to_string(limit) + " bytes");
    }
    if (all.empty()) {
      all = std::move(bytes);  // most bodies come in one read: no second copy
    } else {
      all += bytes;
    }
  }
}

Result<Endpoint> parse_base_url(const std::string& url) {
  Endpoint at;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    at.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return make_error(ErrorCode::kInvalidArgument, "'" + url + "' is not an http(s) URL");
  }
  const auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  at.base_path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!at.base_path.empty() && at.base_path.back() == '/') {
    at.base_path.pop_back();
  }
  if (!authority.empty() && authority.front() == '[') {  // [::1]:8080
    const auto close = authority.find(']');
    if (close == std::string::npos) {
      return make_error(ErrorCode::kInvalidArgument, "'" + url + "' has an unclosed IPv6 address");
    }
    at.host = authority.substr(1, close - 1);
    authority = authority.substr(close + 1);
    at.port = authority.rfind(':', 0) == 0 ? authority.substr(1) : "";
  } else {
    const auto colon = authority.rfind(':');
    at.host = authority.substr(0, colon);
    at.port = colon == std::string::npos ? "" : authority.substr(colon + 1);
  }
  if (at.port.empty()) {
    at.port = at.tls ? "443" : "80";
  }
  if (at.host.empty() || at.port.find_first_not_of("0123456789") != std::string::npos) {
    return make_error(ErrorCode::kInvalidArgument, "'" + url + "' has no valid host and port");
  }
  return at;
}

std::unique_ptr<net::ssl::context> make_tls_context(bool verify, const std::string& ca_file) {
  auto tls = std::make_unique<net::ssl::context>(net::ssl::context::tls_client);
  tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                   net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                   net::ssl::context::no_tlsv1_1);
  if (verify) {
    tls->set_verify_mode(net::ssl::verify_peer);
    if (ca_file.empty()) {
      tls->set_default_verify_paths();
    } else {
      tls->load_verify_file(ca_file);
    }
  } else {
    tls->set_verify_mode(net::ssl::verify_none);
  }
  return tls;
}

net::awaitable<std::variant<std::unique_ptr<HttpExchange>, HttpFailure>> open_exchange(
    net::ssl::context& tls, const Endpoint& endpoint, const HttpRequest& request,
    const config::Timeouts& timeouts, size_t max_response_bytes, ConnectionPool* pool,
    CancelSignal* cancel) {
  auto executor = co_await net::asio::this_coro::executor;
  auto written = request_head(endpoint, request);
  if (!written.ok()) {
    co_return failure(Kind::kProtocol, written.error().message);
  }
  const std::string& head = written.value();
  const std::string& body = request.body.bytes();
  if (cancel != nullptr && cancel->cancelled()) {
    co_return failure(Kind::kCancelled, "cancelled before connecting");
  }
  if (!endpoint.tls) {
    // An idle pooled connection first; the upstream may have closed it meanwhile, which shows
    // as a failure before any response byte: then once more on a new connection.
    while (pool != nullptr) {
      auto idle = pool->take(net::asio::query(executor, net::asio::execution::context));
      if (!idle) {
        break;
      }
      auto exchange = std::make_unique<Exchange<net::beast::tcp_stream>>(
          executor, timeouts, max_response_bytes, std::move(*idle));
      exchange->set_pool(pool);
      OpenGuard guard(cancel, *exchange);
      auto failed = co_await exchange->send(head, body);
      if (!failed) {
        co_return std::unique_ptr<HttpExchange>(std::move(exchange));
      }
      const Failure f = guard.fail(std::move(*failed));
      if (f.kind != Kind::kProtocol) {
        co_return f;  // a timeout or a cancellation is not a stale socket
      }
    }
    auto exchange = std::make_unique<Exchange<net::beast::tcp_stream>>(
        executor, timeouts, max_response_bytes, executor);
    OpenGuard guard(cancel, *exchange);
    if (auto f = co_await connect(*exchange, endpoint, timeouts.connect_ms)) {
      co_return guard.fail(std::move(*f));
    }
    if (cancel != nullptr && cancel->cancelled()) {  // while resolving: nothing was closed yet
      co_return failure(Kind::kCancelled, "cancelled while connecting");
    }
    exchange->set_pool(pool);
    if (auto f = co_await exchange->send(head, body)) {
      co_return guard.fail(std::move(*f));
    }
    co_return std::unique_ptr<HttpExchange>(std::move(exchange));
  }

  using TlsStream = net::beast::ssl_stream<net::beast::tcp_stream>;
  auto exchange =
      std::make_unique<Exchange<TlsStream>>(executor, timeouts, max_response_bytes, executor, tls);
  OpenGuard guard(cancel, *exchange);
  if (auto f = co_await connect(*exchange, endpoint, timeouts.connect_ms)) {
    co_return guard.fail(std::move(*f));
  }
  if (cancel != nullptr && cancel->cancelled()) {
    co_return failure(Kind::kCancelled, "cancelled while connecting");
  }
  auto* ssl = exchange->stream().native_handle();
  if (!SSL_set_tlsext_host_name(ssl, endpoint.host.c_str())) {
    co_return failure(Kind::kConnect, "cannot set TLS server name " + endpoint.host);
  }
  exchange->stream().set_verify_callback(net::ssl::host_name_verification(endpoint.host));
  exchange->arm(timeouts.connect_ms);
  boost::system::error_code ec;
  co_await exchange->stream().async_handshake(net::ssl::stream_base::client,
                                              net::asio::redirect_error(net::use_awaitable, ec));
  if (ec) {
    co_return guard.fail(failure(
        Kind::kConnect, "TLS handshake with " + endpoint.host + " failed: " + ec.message()));
  }
  if (auto f = co_await exchange->send(head, body)) {
    co_return guard.fail(std::move(*f));
  }
  co_return std::unique_ptr<HttpExchange>(std::move(exchange));
}

}  // namespace tandem::upstream
