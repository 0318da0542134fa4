#include "telemetry/latency_window.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::telemetry {
namespace {

constexpr int64_t kMinute = 60'000;

TEST(LatencyWindow, EmptyWindowGivesZeros) {
  const LatencyWindow window(kMinute, 100);
  const LatencyWindow::Summary summary = window.summary(1'000);
  EXPECT_EQ(summary.count, 0u);
  EXPECT_EQ(summary.p50, 0);
  EXPECT_EQ(summary.p90, 0);
  EXPECT_EQ(summary.p99, 0);
  EXPECT_EQ(summary.mean, 0);
  EXPECT_EQ(summary.max, 0);
}

TEST(LatencyWindow, NearestRankOnOneToHundred) {
  std::vector<double> values(100);
  std::iota(values.begin(), values.end(), 1.0);
  std::shuffle(values.begin(), values.end(), std::mt19937(42));  // order must not matter
  LatencyWindow window(kMinute, 1000);
  for (const double v : values) {
    window.add(v, 5'000);
  }
  const LatencyWindow::Summary summary = window.summary(5'000);
  EXPECT_EQ(summary.count, 100u);
  EXPECT_EQ(summary.p50, 50);  // ceil(0.50 * 100) = 50th smallest
  EXPECT_EQ(summary.p90, 90);
  EXPECT_EQ(summary.p99, 99);
  EXPECT_EQ(summary.mean, 50.5);
  EXPECT_EQ(summary.max, 100);
}

TEST(LatencyWindow, NearestRankOnSmallSets) {
  struct Case {
    std::vector<double> values;
    double p50, p90, p99;
  };
  const std::vector<Case> cases = {
      {{7}, 7, 7, 7},
      {{20, 15, 50, 40, 35}, 35, 50, 50},           // ranks ceil(2.5)=3, ceil(4.5)=5, ceil(4.95)=5
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5, 9, 10},  // ranks 5, 9, ceil(9.9)=10
      {{3, 1}, 1, 3, 3},
  };
  for (const Case& c : cases) {
    LatencyWindow window(kMinute, 100);
    for (const double v : c.values) {
      window.add(v, 0);
    }
    const LatencyWindow::Summary summary = window.summary(0);
    EXPECT_EQ(summary.count, c.values.size());
    EXPECT_EQ(summary.p50, c.p50) << c.values.size() << " samples";
    EXPECT_EQ(summary.p90, c.p90) << c.values.size() << " samples";
    EXPECT_EQ(summary.p99, c.p99) << c.values.size() << " samples";
  }
}

TEST(LatencyWindow, SampleExactlyWindowOldIsOut) {
  LatencyWindow window(1'000, 10);
  window.add(5, 10'000);
  EXPECT_EQ(window.summary(10'000).count, 1u);
  EXPECT_EQ(window.summary(10'999).count, 1u);  // 999 ms old: in
  EXPECT_EQ(window.summary(11'000).count, 0u);  // 1000 ms old: out, the window is (now-1000, now]
  EXPECT_EQ(window.summary(9'000).count, 1u);   // stamped after now: counts as in
}

TEST(LatencyWindow, OnlyRecentSamplesCount) {
  LatencyWindow window(1'000, 10);
  window.add(100, 0);
  window.add(200, 0);
  window.add(1, 600);
  window.add(3, 700);
  const LatencyWindow::Summary summary = window.summary(1'200);
  EXPECT_EQ(summary.count, 2u);
  EXPECT_EQ(summary.max, 3);
  EXPECT_EQ(summary.mean, 2);
  // An add() long after drops the expired samples; nothing old comes back.
  window.add(9, 5'000);
  EXPECT_EQ(window.summary(5'000).count, 1u);
  EXPECT_EQ(window.summary(5'000).max, 9);
}

TEST(LatencyWindow, OutOfOrderTimestampsAreFilteredOneByOne) {
  LatencyWindow window(1'000, 10);
  window.add(1, 500);
  window.add(2, 100);  // a thread that read the clock earlier took the lock later
  window.add(3, 900);
  EXPECT_EQ(window.summary(1'200).count, 2u);  // the sample at 100 is out, those at 500, 900 in
  EXPECT_EQ(window.summary(1'200).mean, 2);
}

TEST(LatencyWindow, CapacityDropsTheOldestFirst) {
  LatencyWindow window(kMinute, 3);
  EXPECT_EQ(window.capacity(), 3u);
  for (const double v : {10.0, 20.0, 30.0, 40.0}) {
    window.add(v, 0);
  }
  LatencyWindow::Summary summary = window.summary(0);
  EXPECT_EQ(summary.count, 3u);
  EXPECT_EQ(summary.mean, 30);  // 20, 30, 40: the 10 went first
  EXPECT_EQ(summary.max, 40);
  for (const double v : {1.0, 2.0}) {
    window.add(v, 0);
  }
  summary = window.summary(0);
  EXPECT_EQ(summary.count, 3u);
  EXPECT_EQ(summary.max, 40);  // 40, 1, 2
  EXPECT_EQ(summary.p50, 2);
}

TEST(LatencyWindow, IgnoresNonFiniteAndNegativeValues) {
  LatencyWindow window(kMinute, 10);
  window.add(std::numeric_limits<double>::quiet_NaN(), 0);
  window.add(std::numeric_limits<double>::infinity(), 0);
  window.add(-std::numeric_limits<double>::infinity(), 0);
  window.add(-1, 0);
  EXPECT_EQ(window.summary(0).count, 0u);
  window.add(0, 0);  // zero is a valid latency
  EXPECT_EQ(window.summary(0).count, 1u);
}

TEST(LatencyWindow, ExtremeTimesDoNotOverflow) {
  LatencyWindow window(kMinute, 10);
  window.add(1, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(window.summary(std::numeric_limits<int64_t>::max()).count, 0u);
  window.add(2, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(window.summary(std::numeric_limits<int64_t>::max()).count, 1u);
}

TEST(LatencyWindow, ConcurrentAddsAreAllKept) {
  LatencyWindow window(kMinute, 10'000);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&window, t] {
      for (int i = 0; i < 1'000; ++i) {
        window.add(t, i);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  const LatencyWindow::Summary summary = window.summary(1'000);
  EXPECT_EQ(summary.count, 4'000u);
  EXPECT_EQ(summary.mean, 1.5);
  EXPECT_EQ(summary.max, 3);
}

TEST(WindowedCounter, CountsPerKeyAndTotal) {
  WindowedCounter counter(kMinute);
  counter.add("edge", 1'000);
  counter.add("edge", 2'500, 2);
  counter.add("cloud", 30'000);
  counter.add("human", 30'000, 0);  // adds nothing
  EXPECT_EQ(counter.counts(31'000), (std::map<std::string, uint64_t>{{"cloud", 1}, {"edge", 3}}));
  EXPECT_EQ(counter.total(31'000), 4u);
}

TEST(WindowedCounter, BucketsOfASecondForAMinute) {
  EXPECT_EQ(WindowedCounter(kMinute).bucket_ms(), 1'000);
  EXPECT_EQ(WindowedCounter(10 * kMinute).bucket_ms(), 10'000);
  EXPECT_EQ(WindowedCounter(30).bucket_ms(), 1);
  EXPECT_EQ(WindowedCounter(61).bucket_ms(), 2);
}

TEST(WindowedCounter, ExpiresAWholeBucketAtTheWindowEdge) {
  WindowedCounter counter(kMinute);
  counter.add("edge", 1'000);   // the start of bucket [1000, 2000)
  counter.add("cloud", 1'999);  // the end of the same bucket
  EXPECT_EQ(counter.total(60'999), 2u);
  // Both leave when the bucket does: the first exactly window_ms later, the second 999 ms early.
  EXPECT_EQ(counter.total(61'000), 0u);
  EXPECT_TRUE(counter.counts(61'000).empty());
}

TEST(WindowedCounter, ReusedSlotForgetsTheOldBucket) {
  WindowedCounter counter(kMinute);
  counter.add("old", 500);     // bucket 0
  counter.add("new", 60'500);  // bucket 60, the same slot
  EXPECT_EQ(counter.counts(60'500), (std::map<std::string, uint64_t>{{"new", 1}}));
  // An event older than the window of what the slot holds is dropped.
  counter.add("late", 700);
  EXPECT_EQ(counter.counts(60'500), (std::map<std::string, uint64_t>{{"new", 1}}));
}

TEST(WindowedCounter, SlidesAcrossManyWindows) {
  WindowedCounter counter(10'000);  // buckets of 167 ms
  // One event every 100 ms for ten minutes.
  for (int64_t t = 0; t < 10 * kMinute; t += 100) {
    counter.add("tick", t);
  }
  const uint64_t total = counter.total(10 * kMinute - 100);
  // About 100 events in 10 s, give or take a bucket's worth (two events).
  EXPECT_GE(total, 98u);
  EXPECT_LE(total, 102u);
  EXPECT_EQ(counter.total(10 * kMinute + 20'000), 0u);
}

TEST(WindowedCounter, NegativeTimesFloorIntoTheirBucket) {
  WindowedCounter counter(kMinute);
  counter.add("a", -1);      // bucket -1: [-1000, 0)
  counter.add("a", -1'000);  // same bucket
  EXPECT_EQ(counter.total(58'999), 2u);
  EXPECT_EQ(counter.total(59'000), 0u);
}

TEST(WindowedCounter, ConcurrentAddsAreExact) {
  WindowedCounter counter(kMinute);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&counter, t] {
      const std::string key = t % 2 == 0 ? "even" : "odd";
      for (int i = 0; i < 10'000; ++i) {
        counter.add(key, i % 5'000);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(counter.counts(5'000),
            (std::map<std::string, uint64_t>{{"even", 20'000}, {"odd", 20'000}}));
}

}  // namespace
}  // namespace tandem::telemetry
