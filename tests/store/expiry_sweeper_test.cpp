// The consistency memory's expiry sweeps: expired routes go on a timer, so the table holds at
// most one TTL plus one interval of routes whatever the traffic, and a stopped sweeper is gone.

#include "store/expiry_sweeper.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include <gtest/gtest.h>

#include "../support/eventually.h"
#include "store/consistency_memory.h"

namespace tandem::store {
namespace {

using std::chrono::milliseconds;

// The rows in the memory's table, expired ones included.
int64_t rows(Database& db) {
  Connection connection = db.acquire();
  auto stmt = connection.prepare("SELECT COUNT(*) FROM consistency_routes");
  EXPECT_TRUE(stmt) << stmt.error().message;
  if (!stmt) {
    return -1;
  }
  auto row = stmt->step();
  EXPECT_TRUE(row && *row);
  return stmt->column_int64(0);
}

class ExpirySweeperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = Database::open(":memory:");
    ASSERT_TRUE(db) << db.error().message;
    db_ = *db;
    memory_ = std::make_unique<SqliteConsistencyMemory>(db_);
  }

  std::shared_ptr<Database> db_;
  std::unique_ptr<SqliteConsistencyMemory> memory_;
  std::atomic<int64_t> now_ms_{0};
};

TEST_F(ExpirySweeperTest, TheIntervalIsAQuarterOfTheTtlWithinBounds) {
  EXPECT_EQ(ExpirySweeper::interval_for(std::chrono::hours(1)), std::chrono::seconds(60));
  EXPECT_EQ(ExpirySweeper::interval_for(std::chrono::seconds(40)), std::chrono::seconds(10));
  EXPECT_EQ(ExpirySweeper::interval_for(std::chrono::seconds(1)), std::chrono::seconds(1));
}

// A client that asks one new question a second, for longer than several TTLs: lookups never
// delete, so without sweeps every route stays. With a sweep every `interval` the table never
// holds more than the routes of one TTL plus one interval.
TEST_F(ExpirySweeperTest, TheTableStaysBoundedUnderSteadyTraffic) {
  constexpr int64_t kTtl = 10'000;
  constexpr int64_t kInterval = 2'000;
  constexpr int kSeconds = 200;  // under the memory's own trimming cadence, which is not judged
  ExpirySweeper sweeper(*memory_, std::chrono::hours(24), [this] { return now_ms_.load(); });
  int64_t most = 0;
  for (int second = 0; second < kSeconds; ++second) {
    now_ms_ = second * 1000;
    ASSERT_TRUE(
        memory_->remember("alice", {static_cast<uint64_t>(second)}, "cloud", "why", now_ms_, kTtl));
    if (now_ms_ % kInterval == 0) {
      ASSERT_TRUE(sweeper.sweep_once());  // what the timer does every interval
    }
    most = std::max(most, rows(*db_));
  }
  EXPECT_LE(most, (kTtl + kInterval) / 1000 + 1);
  EXPECT_GE(sweeper.deleted(), static_cast<uint64_t>(kSeconds - most));
  EXPECT_EQ(sweeper.sweeps(), static_cast<uint64_t>(kSeconds * 1000 / kInterval));
}

TEST_F(ExpirySweeperTest, TheTimerSweepsOnItsOwnThreadUntilStopped) {
  for (uint64_t key = 0; key < 5; ++key) {
    ASSERT_TRUE(memory_->remember("bob", {key}, "edge", "why", 0, 1000));
  }
  ASSERT_TRUE(memory_->remember("bob", {99}, "edge", "why", 0, 1'000'000));
  now_ms_ = 5000;  // the first five have expired, the last has not
  ExpirySweeper sweeper(*memory_, milliseconds(10), [this] { return now_ms_.load(); });
  ASSERT_TRUE(test::eventually([&] { return sweeper.deleted() == 5; }));
  EXPECT_EQ(rows(*db_), 1);
  sweeper.stop();
  const uint64_t sweeps = sweeper.sweeps();
  ASSERT_TRUE(memory_->remember("bob", {7}, "edge", "why", 5000, 1));
  now_ms_ = 10'000;
  sweeper.stop();                       // idempotent
  EXPECT_EQ(sweeper.sweeps(), sweeps);  // joined: no sweep after stop() returned
  EXPECT_EQ(rows(*db_), 2);
}

}  // namespace
}  // namespace tandem::store
