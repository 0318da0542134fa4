#pragma once
// Idle keep-alive connections to one plain-HTTP upstream endpoint, kept as open sockets still
// registered with their io_context's reactor. Reusing one saves a TCP handshake, a resolver
// round trip and a TIME_WAIT socket per request; keeping it registered saves the reactor's
// bookkeeping on every reuse (the kernel's epoll registration, the non-blocking flag, the
// local-address query), which handing a bare descriptor from request to request costs.
//
// The sockets are held by a service of the io_context they belong to, not by the pool: a
// socket must not outlive its io_context, and a pool (an upstream) may outlive the io_contexts
// it served (a test's, a server's). When an io_context shuts down its idle sockets are closed
// with it; the idle sockets of a pool that is gone are closed on the next use of that context.
// A pool hands out only sockets of the io_context that asks, so a session never adopts a
// socket another reactor watches. TLS connections are not pooled.
//
// Thread-safety: take() and give() may be called from any thread at the same time.

#include <cstddef>
#include <memory>
#include <optional>

#include "net/asio.h"

namespace tandem::upstream {

class ConnectionPool {
 public:
  // At most `max_idle` idle connections per io_context; more given back are closed.
  explicit ConnectionPool(size_t max_idle = 64) : max_idle_(max_idle) {}
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // The most recently used idle connection of `context` (the least likely to have been
  // closed by the upstream meanwhile), or nullopt.
  std::optional<net::tcp::socket> take(net::asio::execution_context& context);

  // Keeps `socket` (open, its response read to the end) for the next request on its
  // io_context; closes it when that context already holds max_idle of this pool's.
  void give(net::tcp::socket socket);

  // Idle connections of this pool on `context`.
  size_t idle(net::asio::execution_context& context) const;

 private:
  size_t max_idle_;
  // This pool's identity in the io_contexts' idle sets: they hold it weakly, so the sockets
  // of a pool that is gone are recognised as such and closed.
  std::shared_ptr<const char> identity_ = std::make_shared<const char>('\0');
};

}  // namespace tandem::upstream
