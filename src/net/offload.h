#pragma once
// CPU work a coroutine hands to a worker pool so the I/O thread it runs on keeps serving other
// connections meanwhile (a chat template rendered, a long prompt tokenized, a grammar built).
// The coroutine resumes on its own executor with the result; an exception from the work is
// rethrown there.

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "net/asio.h"

namespace tandem::net {

template <typename Work>
awaitable<std::invoke_result_t<Work&>> run_on(asio::thread_pool& pool, Work work) {
  using Value = std::invoke_result_t<Work&>;
  std::optional<Value> value;
  co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(std::exception_ptr)>(
      [&pool, &work, &value](auto handler) {
        asio::post(pool, [&work, &value, handler = std::move(handler)]() mutable {
          std::exception_ptr failure;
          try {
            value.emplace(work());
          } catch (...) {
            failure = std::current_exception();
          }
          auto executor = asio::get_associated_executor(handler);
          asio::dispatch(executor, [handler = std::move(handler), failure]() mutable {
            std::move(handler)(failure);
          });
        });
      },
      use_awaitable);
  co_return std::move(*value);
}

}  // namespace tandem::net
