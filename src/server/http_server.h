#pragma once
// Tandem's HTTP front: OpenAI-compatible endpoints over Boost.Beast, one coroutine per
// connection (no thread per connection), SSE streaming, API keys, limits on body, header and
// request time, and a graceful shutdown that lets in-flight requests finish.

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/gateway.h"

namespace tandem::server {

class HttpServer {
 public:
  // Binds at once so that a port in use is an error here, not later.
  static Result<std::unique_ptr<HttpServer>> create(std::shared_ptr<Gateway> gateway);
  ~HttpServer();

  uint16_t port() const { return port_; }

  // Serves on `threads` I/O threads until shutdown() completes. Blocks.
  void run();

  // Stops accepting, lets in-flight requests finish for up to shutdown_grace_ms, cancels the
  // rest, then makes run() return. Thread-safe and idempotent; safe from a signal handler's
  // asio::signal_set callback.
  void shutdown();

  struct State;

 private:
  explicit HttpServer(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
  uint16_t port_ = 0;
};

}  // namespace tandem::server
