#pragma once
// Completion handlers for co_spawn. asio::detached drops an exception that escapes a spawned
// coroutine without a word: the coroutine's frame (a client's connection, a probe loop) just
// goes away. Every co_spawn in Tandem passes one of these instead, so such an exception is at
// least logged, with what was running; where something must be answered or released when the
// coroutine dies, its own handler does that (see `on_failure`).

#include <exception>
#include <string>
#include <utility>

#include "common/log.h"

namespace tandem::net {

// What an exception_ptr holds, as text for a log line.
inline std::string exception_text(const std::exception_ptr& failure) {
  if (!failure) {
    return "";
  }
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

// Logs an exception that ended a spawned coroutine: error level, component `component`, event
// "coroutine_failed", `task` naming the coroutine. Returns whether there was one.
inline bool log_coroutine_failure(const std::exception_ptr& failure, const char* component,
                                  const char* task) {
  if (!failure) {
    return false;
  }
  log_event(LogLevel::kError, component, "coroutine_failed",
            {{"task", task}, {"message", exception_text(failure)}});
  return true;
}

// co_spawn(executor, coroutine, log_failure("server", "accept_loop")): logs an exception
// that escapes the coroutine instead of dropping it.
inline auto log_failure(const char* component, const char* task) {
  return [component, task](std::exception_ptr failure) {
    log_coroutine_failure(failure, component, task);
  };
}

// The same, then `then(failure)` when there was one: for a coroutine whose death must be
// answered (a verdict someone waits for, a state to settle).
template <typename Then>
auto on_failure(const char* component, const char* task, Then then) {
  return [component, task, then = std::move(then)](std::exception_ptr failure) mutable {
    if (log_coroutine_failure(failure, component, task)) {
      then(failure);
    }
  };
}

}  // namespace tandem::net
