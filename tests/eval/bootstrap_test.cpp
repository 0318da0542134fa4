#include "eval/bootstrap.h"

#include <gtest/gtest.h>

namespace tandem::eval {
namespace {

TEST(Bootstrap, TheIntervalIsThe2_5thAnd97_5thPercentileOfTheDraws) {
  std::vector<double> draws;
  for (int i = 100; i >= 0; --i) {  // unsorted on purpose
    draws.push_back(i);
  }
  const Interval interval = percentile_interval(42.0, draws);
  EXPECT_EQ(interval.estimate, 42.0);
  EXPECT_EQ(interval.low, 2.0);
  EXPECT_EQ(interval.high, 97.0);
  EXPECT_FALSE(interval.below_zero());
  EXPECT_TRUE(interval.above_zero());
  EXPECT_TRUE(percentile_interval(-1.0, {-3.0, -2.0, -1.0}).below_zero());
  EXPECT_FALSE(percentile_interval(0.0, {-1.0, 0.0, 1.0}).above_zero());
}

TEST(Bootstrap, OneDrawIsBothEnds) {
  const Interval interval = percentile_interval(0.5, {0.25});
  EXPECT_EQ(interval.low, 0.25);
  EXPECT_EQ(interval.high, 0.25);
}

}  // namespace
}  // namespace tandem::eval
