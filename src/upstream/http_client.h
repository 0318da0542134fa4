#pragma once
// One HTTP/1.1 exchange with an upstream over a fresh connection, plain or TLS (certificate
// and host name verified unless configured otherwise), with the four timeouts a streaming
// client needs: connect, first byte (request sent -> response header), idle (between body
// reads) and total. The body is read incrementally, so a stream is relayed as it arrives.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel.h"
#include "config/config.h"
#include "net/asio.h"
#include "upstream/connection_pool.h"
#include "upstream/egress.h"

namespace tandem::upstream {

// Where a base URL points.
struct Endpoint {
  bool tls = false;
  std::string host;
  std::string port;
  std::string base_path;  // e.g. "/v1", no trailing slash
};

Result<Endpoint> parse_base_url(const std::string& url);

// Why an exchange failed, in the terms retries and circuit breaking need.
struct HttpFailure {
  enum class Kind {
    kConnect,    // DNS, TCP or TLS: the request never reached the upstream
    kTimeout,    // a timeout expired; `phase` says which
    kProtocol,   // the upstream broke HTTP or closed/reset the connection
    kStatus,     // a complete response with a non-2xx status
    kTooLarge,   // the response exceeded max_response_bytes
    kCancelled,  // our side cancelled (client gone, shutdown)
    kRefused     // the egress guard kept the body on the device: nothing was sent
  };
  Kind kind = Kind::kProtocol;
  int status = 0;                                        // with kStatus
  std::string message;                                   // for logs and client-facing errors
  std::string body;                                      // with kStatus: the error body (truncated)
  std::optional<std::chrono::milliseconds> retry_after;  // with kStatus 429/503
};

// Parses a Retry-After value: delta seconds or an HTTP date (relative to now).
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value);

class HttpExchange {
 public:
  using Clock = std::chrono::steady_clock;

  virtual ~HttpExchange() = default;

  int status() const { return status_; }
  const std::string& content_type() const { return content_type_; }
  const std::string& retry_after() const { return retry_after_; }

  // Next bytes of the body; an empty string at the end. Idle and total timeouts apply.
  virtual net::awaitable<std::variant<std::string, HttpFailure>> read_some() = 0;

  // Reads the rest of the body, up to `limit` bytes.
  net::awaitable<std::variant<std::string, HttpFailure>> read_all(size_t limit);

  // Closes the connection at once; a pending read fails with kCancelled. Any thread.
  virtual void cancel() = 0;

 protected:
  int status_ = 0;
  std::string content_type_;
  std::string retry_after_;
};

// A request to an upstream. Its body is one the egress guard admitted (egress.h): there is no
// other way to give the network bytes.
struct HttpRequest {
  HttpRequest(std::string method_, std::string path_, GuardedBody body_)
      : method(std::move(method_)), path(std::move(path_)), body(std::move(body_)) {}

  std::string method;
  std::string path;  // appended to the endpoint's base path
  GuardedBody body;
  std::map<std::string, std::string> headers;
};

// Connects (or reuses an idle connection from `pool`, when given, for plain HTTP), sends
// `request` and reads the response header. A non-2xx response is returned as an exchange too
// (its status set), so the caller can read the error body. An exchange whose response was
// read to the end goes back to the pool when destroyed. `cancel`, when given, ends the wait at
// once (kCancelled) — connecting, sending or waiting for the first byte — so a client that
// leaves does not hold the upstream until first_byte_ms; it must be cancelled on the calling
// coroutine's executor (as the HTTP session's disconnect watch and deadline do).
net::awaitable<std::variant<std::unique_ptr<HttpExchange>, HttpFailure>> open_exchange(
    net::ssl::context& tls, const Endpoint& endpoint, const HttpRequest& request,
    const config::Timeouts& timeouts, size_t max_response_bytes, ConnectionPool* pool = nullptr,
    CancelSignal* cancel = nullptr);

// A TLS client context that verifies peers against the system trust store or `ca_file`.
std::unique_ptr<net::ssl::context> make_tls_context(bool verify, const std::string& ca_file);

}  // namespace tandem::upstream
