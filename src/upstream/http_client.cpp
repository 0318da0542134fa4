#include "upstream/http_client.h"

#include <atomic>
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
      if (pool_ != nullptr && parser_.is_done() && parser_.get().keep_alive() && !cancelled_ &&
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

  net::awaitable<std::optional<Failure>> send(net::http::request<net::http::string_body>& req) {
    boost::system::error_code ec;
    arm(timeouts_.idle_ms);
    if constexpr (std::is_same_v<Stream, net::beast::tcp_stream>) {
      ec = co_await net::write_message(stream_, req);
    } else {
      co_await net::http::async_write(stream_, req,
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
    const auto& head = parser_.get();
    status_ = static_cast<int>(head.result_int());
    content_type_ = std::string(head[net::http::field::content_type]);
    retry_after_ = std::string(head[net::http::field::retry_after]);
    co_return std::nullopt;
  }

  net::awaitable<std::variant<std::string, Failure>> read_some() override {
    while (true) {
      if (parser_.is_done()) {
        co_return std::string();
      }
      parser_.get().body().data = chunk_;
      parser_.get().body().size = sizeof(chunk_);
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
      const size_t n = sizeof(chunk_) - parser_.get().body().size;
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
  net::http::response_parser<net::http::buffer_body> parser_;
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

net::http::request<net::http::string_body> build_request(const Endpoint& at,
                                                         const HttpRequest& request) {
  net::http::request<net::http::string_body> req;
  req.method(net::http::string_to_verb(request.method));
  req.target(at.base_path + request.path);
  req.version(11);
  const bool default_port = (at.tls && at.port == "443") || (!at.tls && at.port == "80");
  req.set(net::http::field::host, default_port ? at.host : at.host + ":" + at.port);
  req.set(net::http::field::user_agent, "tandem/0.1");
  for (const auto& [name, value] : request.headers) {
    req.set(name, value);
  }
  if (!request.body.bytes().empty() || request.method == "POST") {
    req.set(net::http::field::content_type, "application/json");
    req.body() = request.body.bytes();
    req.prepare_payload();
  }
  return req;
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
    all += bytes;
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
  auto req = build_request(endpoint, request);
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
      auto failed = co_await exchange->send(req);
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
    if (auto f = co_await exchange->send(req)) {
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
  if (auto f = co_await exchange->send(req)) {
    co_return guard.fail(std::move(*f));
  }
  co_return std::unique_ptr<HttpExchange>(std::move(exchange));
}

}  // namespace tandem::upstream
