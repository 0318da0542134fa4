#include "telemetry/latency_histogram.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace tandem::telemetry {
namespace {

// Every value must be reported within one bin's half-width: a factor 2^(1/6).
const double kTolerance = std::exp2(1.0 / 6.0) + 1e-9;

void expect_near_ratio(double reported, double exact) {
  EXPECT_LE(reported, exact * kTolerance) << "exact " << exact;
  EXPECT_GE(reported, exact / kTolerance) << "exact " << exact;
}

TEST(LatencyHistogram, EmptyHasNoPercentile) {
  const LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_FALSE(h.percentile(50).has_value());
}

TEST(LatencyHistogram, EveryValueInRangeIsReportedWithinHalfABin) {
  for (double ms = 0.125; ms < 4'000'000; ms *= 1.07) {
    LatencyHistogram h;
    h.add(ms);
    ASSERT_TRUE(h.percentile(50).has_value());
    expect_near_ratio(*h.percentile(50), ms);
  }
}

TEST(LatencyHistogram, NearestRankOverBins) {
  LatencyHistogram h;
  for (int i = 0; i < 90; ++i) {
    h.add(10);
  }
  for (int i = 0; i < 10; ++i) {
    h.add(1000);
  }
  expect_near_ratio(*h.percentile(50), 10);
  expect_near_ratio(*h.percentile(90), 10);  // the 90th smallest is still a 10
  expect_near_ratio(*h.percentile(95), 1000);
  expect_near_ratio(*h.percentile(100), 1000);
}

TEST(LatencyHistogram, OutOfRangeValuesLandInTheEndBinsAndInvalidOnesAreIgnored) {
  LatencyHistogram h;
  h.add(-1);
  h.add(std::numeric_limits<double>::quiet_NaN());
  h.add(std::numeric_limits<double>::infinity());
  EXPECT_EQ(h.count(), 0u);
  h.add(0);
  EXPECT_EQ(LatencyHistogram::bin_of(0), 0u);
  EXPECT_EQ(LatencyHistogram::bin_of(1e12), LatencyHistogram::kBins - 1);
  EXPECT_EQ(LatencyHistogram::bin_of(std::numeric_limits<double>::infinity()),
            LatencyHistogram::kBins - 1);
  EXPECT_EQ(LatencyHistogram::bin_of(std::numeric_limits<double>::quiet_NaN()), 0u);
  EXPECT_EQ(h.count(), 1u);
}

TEST(LatencyHistogram, MergeAddsCounts) {
  LatencyHistogram a;
  LatencyHistogram b;
  a.add(5);
  b.add(500);
  b.add(500);
  a.merge(b);
  EXPECT_EQ(a.count(), 3u);
  expect_near_ratio(*a.percentile(34), 500);
  expect_near_ratio(*a.percentile(33), 5);
}

}  // namespace
}  // namespace tandem::telemetry
