#pragma once
// A queue that any thread pushes into and one coroutine awaits. The consumer must run on a
// strand (or a single-threaded executor): push() posts a wake-up to that executor, so the
// wake-up can never slip between the consumer's "queue empty?" check and its wait.

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "net/asio.h"

namespace tandem::net {

template <typename T>
class AsyncQueue : public std::enable_shared_from_this<AsyncQueue<T>> {
 public:
  using Clock = std::chrono::steady_clock;

  explicit AsyncQueue(asio::any_io_executor executor) : timer_(executor) {}

  // Thread-safe.
  void push(T item) {
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(item));
    }
    asio::post(timer_.get_executor(), [self = this->shared_from_this()] { self->timer_.cancel(); });
  }

  // Waits for the next item until `deadline`; nullopt means the deadline passed (or the
  // wait was cancelled by the executor's shutdown).
  awaitable<std::optional<T>> pop(Clock::time_point deadline = Clock::time_point::max()) {
    while (true) {
      {
        std::lock_guard lock(mutex_);
        if (!items_.empty()) {
          T item = std::move(items_.front());
          items_.pop_front();
          co_return item;
        }
      }
      if (Clock::now() >= deadline) {
        co_return std::nullopt;
      }
      timer_.expires_at(deadline);
      boost::system::error_code ec;
      co_await timer_.async_wait(asio::redirect_error(use_awaitable, ec));
      if (!ec && Clock::now() >= deadline) {
        co_return std::nullopt;
      }
    }
  }

 private:
  std::mutex mutex_;
  std::deque<T> items_;  // guarded by mutex_
  asio::steady_timer timer_;
};

}  // namespace tandem::net
