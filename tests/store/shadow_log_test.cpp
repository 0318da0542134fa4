// The shadow log: samples and traffic in, per-kind totals out; validation, the bound on rows,
// the time cut, and persistence across a restart.

#include "store/shadow_log.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace tandem::store {
namespace {

using testing::TempDir;

ShadowSample compared(const std::string& kind, int64_t at_ms, bool agreed, double f1 = 1.0) {
  ShadowSample s;
  s.unix_ms = at_ms;
  s.kind = kind;
  s.outcome = ShadowOutcome::kCompared;
  s.agreed = agreed;
  s.f1 = f1;
  s.edge_tokens = 10;
  s.edge_confidence = 0.8;
  s.mean_logprob = -0.5;
  s.min_logprob = -2.0;
  s.mean_entropy = 1.0;
  s.mean_margin = 3.0;
  s.edge_ms = 40.0;
  s.cloud_ms = 200.0;
  return s;
}

ShadowSample skipped(const std::string& kind, int64_t at_ms, ShadowOutcome outcome) {
  ShadowSample s;
  s.unix_ms = at_ms;
  s.kind = kind;
  s.outcome = outcome;
  return s;
}

class ShadowLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = Database::open(":memory:");
    ASSERT_TRUE(db) << db.error().message;
    db_ = *db;
    log_ = std::make_unique<ShadowLog>(db_, 5);
  }

  std::vector<ShadowKindTotals> totals(int64_t since = 0) {
    auto t = log_->totals(since);
    EXPECT_TRUE(t) << t.error().message;
    return t ? t.value() : std::vector<ShadowKindTotals>{};
  }

  std::shared_ptr<Database> db_;
  std::unique_ptr<ShadowLog> log_;
};

TEST_F(ShadowLogTest, SumsSamplesAndTrafficPerKind) {
  ASSERT_TRUE(log_->append(
      {compared("math", 1000, true, 1.0), compared("math", 2000, false, 0.5),
       skipped("math", 2500, ShadowOutcome::kEdgeBusy), compared("factoid", 3000, true, 0.75),
       skipped("factoid", 3500, ShadowOutcome::kEdgeFailed)},
      {{"math", 0, 10, 8}, {"factoid", 0, 4, 4}, {"open", 0, 6, 0}}));
  const auto t = totals();
  ASSERT_EQ(t.size(), 3U);  // sorted by kind
  EXPECT_EQ(t[0].kind, "factoid");
  EXPECT_EQ(t[0].compared, 1);
  EXPECT_EQ(t[0].edge_failed, 1);
  EXPECT_DOUBLE_EQ(t[0].sum_f1, 0.75);
  EXPECT_EQ(t[1].kind, "math");
  EXPECT_EQ(t[1].compared, 2);
  EXPECT_EQ(t[1].agreed, 1);
  EXPECT_EQ(t[1].edge_busy, 1);
  EXPECT_DOUBLE_EQ(t[1].sum_f1, 1.5);
  EXPECT_DOUBLE_EQ(t[1].sum_edge_confidence, 1.6);  // skipped samples add nothing
  EXPECT_DOUBLE_EQ(t[1].sum_edge_ms, 80.0);
  EXPECT_DOUBLE_EQ(t[1].sum_cloud_ms, 400.0);
  EXPECT_EQ(t[1].sum_edge_tokens, 20);
  EXPECT_EQ(t[1].requests, 10);
  EXPECT_EQ(t[1].shadowed, 8);
  EXPECT_EQ(t[1].first_unix_ms, 1000);
  EXPECT_EQ(t[1].last_unix_ms, 2500);
  EXPECT_EQ(t[2].kind, "open");  // traffic without samples
  EXPECT_EQ(t[2].compared, 0);
  EXPECT_EQ(t[2].requests, 6);
}

TEST_F(ShadowLogTest, TrafficOfTheSameHourAddsUp) {
  ASSERT_TRUE(log_->append({}, {{"code", kShadowHourMs, 3, 1}}));
  ASSERT_TRUE(log_->append({}, {{"code", kShadowHourMs, 2, 2}, {"code", 2 * kShadowHourMs, 1, 1}}));
  auto t = totals();
  ASSERT_EQ(t.size(), 1U);
  EXPECT_EQ(t[0].requests, 6);
  EXPECT_EQ(t[0].shadowed, 4);
  // The cut keeps buckets that start at or after it.
  t = totals(2 * kShadowHourMs);
  ASSERT_EQ(t.size(), 1U);
  EXPECT_EQ(t[0].requests, 1);
}

TEST_F(ShadowLogTest, SinceLeavesOutOlderSamples) {
  ASSERT_TRUE(log_->append({compared("math", 1000, false), compared("math", 5000, true)}, {}));
  const auto t = totals(5000);
  ASSERT_EQ(t.size(), 1U);
  EXPECT_EQ(t[0].compared, 1);
  EXPECT_EQ(t[0].agreed, 1);
  EXPECT_TRUE(totals(6000).empty());
}

TEST_F(ShadowLogTest, KeepsOnlyTheNewestMaxRows) {
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        log_->append({compared("code", 100 * i, true), compared("code", 100 * i + 50, false)}, {}));
  }
  auto count = log_->count();
  ASSERT_TRUE(count);
  EXPECT_EQ(*count, 5U);  // max_rows of this log
  auto recent = log_->recent(10);
  ASSERT_TRUE(recent);
  ASSERT_EQ(recent->size(), 5U);
  EXPECT_EQ((*recent)[0].unix_ms, 350);  // newest first
  EXPECT_EQ((*recent)[4].unix_ms, 150);
  EXPECT_FALSE((*recent)[0].agreed);
  EXPECT_DOUBLE_EQ((*recent)[0].mean_margin, 3.0);
}

TEST_F(ShadowLogTest, OldTrafficBucketsExpire) {
  ASSERT_TRUE(log_->append({}, {{"open", 0, 1, 1}}));
  ASSERT_TRUE(log_->append({}, {{"open", kShadowTrafficRetentionMs + kShadowHourMs, 2, 0}}));
  const auto t = totals();
  ASSERT_EQ(t.size(), 1U);
  EXPECT_EQ(t[0].requests, 2);
}

TEST_F(ShadowLogTest, RefusesMalformedRowsAndStoresNothingOfTheBatch) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto bad_f1 = compared("math", 1, true, 1.5);
  auto bad_nan = compared("math", 1, true);
  bad_nan.edge_ms = nan;
  auto bad_kind = compared("Math!", 1, true);
  auto empty_kind = compared("", 1, true);
  auto agreed_busy = skipped("math", 1, ShadowOutcome::kEdgeBusy);
  agreed_busy.agreed = true;
  auto negative = compared("math", 1, true);
  negative.edge_tokens = -1;
  for (const auto& [sample, words] :
       std::vector<std::pair<ShadowSample, std::string>>{{bad_f1, "f1"},
                                                         {bad_nan, "edge_ms"},
                                                         {bad_kind, "Math!"},
                                                         {empty_kind, "1 to 64"},
                                                         {agreed_busy, "edge_busy"},
                                                         {negative, "edge_tokens"}}) {
    const Status status = log_->append({compared("math", 1, true), sample}, {});
    ASSERT_FALSE(status) << words;
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find(words), std::string::npos) << status.error().message;
  }
  const Status traffic = log_->append({}, {{"math", 0, 1, 2}});
  ASSERT_FALSE(traffic);
  EXPECT_NE(traffic.error().message.find("shadowed <= requests"), std::string::npos);
  EXPECT_FALSE(log_->append({}, {{"math", 17, 1, 0}}));  // not on the hour
  EXPECT_TRUE(totals().empty());
  EXPECT_FALSE(log_->recent(0));
  EXPECT_FALSE(log_->recent(1001));
}

TEST(ShadowLogFile, SurvivesARestart) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("tandem.db");
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db) << db.error().message;
    ShadowLog log(*db);
    ASSERT_TRUE(
        log.append({compared("multiple_choice", 42, true)}, {{"multiple_choice", 0, 1, 1}}));
  }
  auto db = Database::open(path);
  ASSERT_TRUE(db) << db.error().message;
  ShadowLog log(*db);
  auto t = log.totals(0);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->size(), 1U);
  EXPECT_EQ((*t)[0].kind, "multiple_choice");
  EXPECT_EQ((*t)[0].agreed, 1);
  EXPECT_EQ((*t)[0].requests, 1);
}

}  // namespace
}  // namespace tandem::store
