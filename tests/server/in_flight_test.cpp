// The requests shutdown cancels: a request is in the set exactly as long as its guard lives,
// however its coroutine ends, so shutdown never reaches a signal that is gone.

#include "server/in_flight.h"

#include <stdexcept>

#include <gtest/gtest.h>

#include "net/asio.h"
#include "net/spawn.h"

namespace tandem::server {
namespace {

TEST(InFlightRequestsTest, AGuardRegistersItsSignalForItsLifetime) {
  InFlightRequests in_flight;
  CancelSignal kept;
  const auto kept_guard = in_flight.enter(kept);
  {
    CancelSignal done;
    const auto guard = in_flight.enter(done);
    EXPECT_EQ(in_flight.size(), 2u);
  }
  EXPECT_EQ(in_flight.size(), 1u);
  in_flight.cancel_all();
  EXPECT_TRUE(kept.cancelled());
}

TEST(InFlightRequestsTest, AnExceptionLeavesNoSignalBehind) {
  InFlightRequests in_flight;
  EXPECT_THROW(
      {
        CancelSignal cancel;
        const auto guard = in_flight.enter(cancel);
        throw std::runtime_error("malformed upstream field");
      },
      std::runtime_error);
  EXPECT_EQ(in_flight.size(), 0u);
  in_flight.cancel_all();  // reaches nothing destroyed (ASan would say)
}

// As a request's coroutine: the exception ends it, its frame goes, and so does the entry.
TEST(InFlightRequestsTest, ACoroutineThatThrowsLeavesTheSetEmpty) {
  InFlightRequests in_flight;
  net::asio::io_context ioc;
  bool failed = false;
  auto request = [&]() -> net::awaitable<void> {
    CancelSignal cancel;
    const auto guard = in_flight.enter(cancel);
    net::asio::steady_timer timer(ioc, std::chrono::milliseconds(1));
    co_await timer.async_wait(net::use_awaitable);
    throw std::runtime_error("prompt_tokens is null");
  };
  net::asio::co_spawn(ioc, request(), net::on_failure("test", "request", [&](std::exception_ptr) {
                        failed = true;
                      }));
  ioc.run();
  EXPECT_TRUE(failed);
  EXPECT_EQ(in_flight.size(), 0u);
  in_flight.cancel_all();
}

}  // namespace
}  // namespace tandem::server
