#include "net/offload.h"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace tandem::net {
namespace {

// Runs `coroutine` on a one-thread io_context (an I/O thread) to completion.
template <typename Coroutine>
void run_io(Coroutine coroutine) {
  asio::io_context io;
  std::exception_ptr failure;
  asio::co_spawn(io, std::move(coroutine), [&failure](std::exception_ptr e) { failure = e; });
  io.run();
  if (failure) {
    std::rethrow_exception(failure);
  }
}

TEST(OffloadTest, WorkRunsOnThePoolAndTheCoroutineResumesOnItsOwnThread) {
  asio::thread_pool pool(1);
  std::thread::id io_thread;
  std::thread::id work_thread;
  std::thread::id resumed_on;
  std::string result;
  run_io([&]() -> awaitable<void> {
    io_thread = std::this_thread::get_id();
    result = co_await run_on(pool, [&] {
      work_thread = std::this_thread::get_id();
      return std::string("rendered");
    });
    resumed_on = std::this_thread::get_id();
  });
  EXPECT_EQ(result, "rendered");
  EXPECT_NE(work_thread, io_thread);
  EXPECT_EQ(resumed_on, io_thread);
}

TEST(OffloadTest, TheIoThreadServesOthersWhileTheWorkRuns) {
  asio::thread_pool pool(1);
  asio::io_context io;
  std::atomic<bool> release{false};
  bool other_ran_during_work = false;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        co_await run_on(pool, [&] {
          while (!release.load()) {
            std::this_thread::yield();
          }
          return 0;
        });
      },
      asio::detached);
  asio::post(io, [&] {
    other_ran_during_work = true;
    release.store(true);
  });
  io.run();
  EXPECT_TRUE(other_ran_during_work);
}

TEST(OffloadTest, AnExceptionFromTheWorkIsRethrownInTheCoroutine) {
  asio::thread_pool pool(1);
  bool caught = false;
  run_io([&]() -> awaitable<void> {
    try {
      co_await run_on(pool, []() -> int { throw std::runtime_error("bad template"); });
    } catch (const std::runtime_error& e) {
      caught = std::string(e.what()) == "bad template";
    }
  });
  EXPECT_TRUE(caught);
}

}  // namespace
}  // namespace tandem::net
