#pragma once
// A cancellable sleep for coroutines: the periodic loops (health probes, device polling,
// canaries) wait between rounds with it and stop at once at shutdown.

#include <chrono>
#include <memory>

#include "common/cancel.h"
#include "net/asio.h"

namespace tandem::net {

// Sleeps on the calling coroutine's executor, waking early (returning false) when `cancel`
// fires. The timer is cancelled through a post to that executor, never from the canceller's
// thread, so the timer is only touched where it waits. That executor must therefore be a strand
// (or an io_context run by one thread): on a bare multi-threaded io_context the posted cancel
// may run beside the coroutine.
inline awaitable<bool> sleep_for(std::chrono::milliseconds duration, CancelSignal& cancel) {
  auto executor = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(executor, duration);
  CancelRegistration registration(
      cancel, [timer, executor] { asio::post(executor, [timer] { timer->cancel(); }); });
  boost::system::error_code ec;
  co_await timer->async_wait(asio::redirect_error(use_awaitable, ec));
  co_return !cancel.cancelled();
}

}  // namespace tandem::net
