// CancelSignal: every action runs once, a removed action never runs, and remove() returns only
// once its action can no longer run — waiting for one running on another thread, never for one
// running on its own (remove from inside an action).

#include "common/cancel.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "../support/eventually.h"

namespace tandem {
namespace {

using test::eventually;

TEST(CancelSignalTest, EveryActionRunsOnceAndLateOnesAtOnce) {
  CancelSignal signal;
  int a = 0;
  int b = 0;
  signal.on_cancel([&] { ++a; });
  signal.on_cancel([&] { ++b; });
  signal.cancel();
  signal.cancel();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  EXPECT_TRUE(signal.cancelled());
  int late = 0;
  EXPECT_EQ(signal.on_cancel([&] { ++late; }), CancelSignal::kRanAlready);
  EXPECT_EQ(late, 1);
  signal.remove(CancelSignal::kRanAlready);  // harmless
}

TEST(CancelSignalTest, ARemovedActionNeverRunsAndLeavesNothingBehind) {
  CancelSignal signal;
  bool ran = false;
  for (int i = 0; i < 1000; ++i) {  // a long-lived signal (the probes' stop) sees many
    signal.remove(signal.on_cancel([&] { ran = true; }));
  }
  EXPECT_EQ(signal.pending(), 0u);
  signal.cancel();
  EXPECT_FALSE(ran);
}

// The action reaches its target through a pointer that a remove() on another thread is about
// to invalidate: remove() must wait for the running action to return.
TEST(CancelSignalTest, RemoveWaitsForTheActionRunningOnAnotherThread) {
  CancelSignal signal;
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  std::atomic<bool> finished{false};
  const size_t id = signal.on_cancel([&] {
    started = true;
    while (!release) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    finished = true;
  });
  std::thread canceller([&] { signal.cancel(); });
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  std::atomic<bool> removed{false};
  bool finished_when_removed = false;
  std::thread remover([&] {
    signal.remove(id);
    finished_when_removed = finished;
    removed = true;
  });
  // The remover is (or is about to be) waiting; it may not return before the action does.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(removed);
  release = true;
  remover.join();
  canceller.join();
  EXPECT_TRUE(removed);
  EXPECT_TRUE(finished_when_removed);
}

TEST(CancelSignalTest, ARegistrationGoingAwayWaitsForItsRunningAction) {
  CancelSignal signal;
  std::atomic<bool> started{false};
  std::atomic<bool> release{false};
  std::atomic<int> target_alive{1};
  std::atomic<int> seen{0};
  auto registration = std::make_unique<CancelRegistration>(signal, [&] {
    started = true;
    while (!release) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    seen = target_alive.load();  // the target must still be there
  });
  std::thread canceller([&] { signal.cancel(); });
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  std::thread owner([&] {
    registration.reset();  // waits for the action
    target_alive = 0;      // the target goes away only now
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  release = true;
  owner.join();
  canceller.join();
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(target_alive, 0);
}

// Called from inside an action (the cancelling thread) remove() never waits: an action may
// remove itself, and removing one not yet run keeps it from running.
TEST(CancelSignalTest, RemoveFromInsideAnActionNeitherWaitsNorRunsTheRemoved) {
  CancelSignal signal;
  size_t self = 0;
  size_t later = 0;
  bool later_ran = false;
  bool first_done = false;
  self = signal.on_cancel([&] {
    signal.remove(self);   // itself: would deadlock if it waited
    signal.remove(later);  // not yet run: dropped
    first_done = true;
  });
  later = signal.on_cancel([&] { later_ran = true; });
  signal.cancel();
  EXPECT_TRUE(first_done);
  EXPECT_FALSE(later_ran);
}

// The same through a registration an action destroys (its owner torn down by the cancel): the
// destroyed registration's action, not yet run, never runs.
TEST(CancelSignalTest, AnActionMayDestroyARegistrationOfItsSignal) {
  CancelSignal signal;
  std::unique_ptr<CancelRegistration> victim;
  bool victim_ran = false;
  const CancelRegistration killer(signal, [&] { victim.reset(); });
  victim = std::make_unique<CancelRegistration>(signal, [&] { victim_ran = true; });
  signal.cancel();
  EXPECT_FALSE(victim);
  EXPECT_FALSE(victim_ran);
}

}  // namespace
}  // namespace tandem
