#include "telemetry/time_series.h"

#include <cmath>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::telemetry {
namespace {

constexpr int64_t kBucket = 10'000;
// A fixed start far from zero, so that nothing depends on time starting at 0.
constexpr int64_t kT0 = 1'700'000'000'000;

SeriesRequest request(SeriesTier tier, double latency_ms = 100) {
  SeriesRequest r;
  r.tier = tier;
  r.latency_ms = latency_ms;
  r.ttft_ms = latency_ms / 10;
  return r;
}

TimeSeries ring(size_t buckets) {
  return TimeSeries({.bucket_ms = kBucket, .buckets = buckets});
}

TEST(TimeSeries, CountsRequestsPerTierInTheirBucket) {
  TimeSeries series = ring(6);
  series.record_request(request(SeriesTier::kEdge), kT0);
  series.record_request(request(SeriesTier::kEdge), kT0 + 9'999);
  series.record_request(request(SeriesTier::kCloud), kT0 + 10'000);
  const auto points = series.query(kT0 + 10'000, 2 * kBucket, 100);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].start_ms, kT0);
  EXPECT_EQ(points[0].span_ms, kBucket);
  EXPECT_EQ(points[0].data.requests[0], 2u);
  EXPECT_EQ(points[0].data.requests[1], 0u);
  EXPECT_EQ(points[1].start_ms, kT0 + kBucket);
  EXPECT_EQ(points[1].data.requests[1], 1u);
  EXPECT_EQ(points[1].data.total_requests(), 1u);
}

TEST(TimeSeries, EmptyBucketsAreEmptyPointsSoTheAxisIsRegular) {
  TimeSeries series = ring(10);
  series.record_request(request(SeriesTier::kEdge), kT0);
  const auto points = series.query(kT0 + 5 * kBucket, 6 * kBucket, 100);
  ASSERT_EQ(points.size(), 6u);
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].start_ms, kT0 + static_cast<int64_t>(i) * kBucket);
    EXPECT_EQ(points[i].data.total_requests(), i == 0 ? 1u : 0u);
  }
}

TEST(TimeSeries, RolloverReusesTheOldestSlot) {
  TimeSeries series = ring(3);
  series.record_request(request(SeriesTier::kEdge), kT0);
  series.record_request(request(SeriesTier::kCloud), kT0 + 3 * kBucket);  // same slot, 3 later
  const auto points = series.query(kT0 + 3 * kBucket, 10 * kBucket, 100);
  ASSERT_EQ(points.size(), 3u) << "a window longer than the ring is cut to the ring";
  EXPECT_EQ(points.front().start_ms, kT0 + kBucket);
  uint64_t edge = 0;
  uint64_t cloud = 0;
  for (const auto& p : points) {
    edge += p.data.requests[0];
    cloud += p.data.requests[1];
  }
  EXPECT_EQ(edge, 0u) << "the first bucket was overwritten";
  EXPECT_EQ(cloud, 1u);
}

TEST(TimeSeries, AnEventOlderThanTheRingIsDropped) {
  TimeSeries series = ring(3);
  series.record_request(request(SeriesTier::kCloud), kT0 + 3 * kBucket);
  series.record_request(request(SeriesTier::kEdge), kT0);  // its slot holds a newer bucket
  const auto points = series.query(kT0 + 3 * kBucket, 3 * kBucket, 100);
  uint64_t total = 0;
  for (const auto& p : points) {
    total += p.data.total_requests();
  }
  EXPECT_EQ(total, 1u);
}

TEST(TimeSeries, AQueryIgnoresBucketsThatLeftTheWindow) {
  TimeSeries series = ring(100);
  series.record_request(request(SeriesTier::kEdge), kT0);
  series.record_request(request(SeriesTier::kEdge), kT0 + 20 * kBucket);
  const auto recent = series.query(kT0 + 20 * kBucket, 5 * kBucket, 100);
  ASSERT_EQ(recent.size(), 5u);
  uint64_t total = 0;
  for (const auto& p : recent) {
    total += p.data.total_requests();
  }
  EXPECT_EQ(total, 1u);
  // A time far in the future: every bucket held is out of the window.
  for (const auto& p : series.query(kT0 + 1'000 * kBucket, 5 * kBucket, 100)) {
    EXPECT_EQ(p.data.total_requests(), 0u);
  }
}

TEST(TimeSeries, MaxPointsMergesWholeAlignedSteps) {
  TimeSeries series = ring(60);
  for (int i = 0; i < 60; ++i) {
    series.record_request(request(SeriesTier::kEdge), kT0 + i * kBucket);
  }
  const int64_t now = kT0 + 59 * kBucket;
  const auto points = series.query(now, 60 * kBucket, 10);  // step = 6 buckets
  ASSERT_GE(points.size(), 10u);
  ASSERT_LE(points.size(), 11u);
  for (const auto& p : points) {
    EXPECT_EQ(p.span_ms, 6 * kBucket);
    EXPECT_EQ(p.start_ms % (6 * kBucket), 0) << "aligned to the step on the bucket grid";
    EXPECT_LE(p.data.total_requests(), 6u);
  }
  uint64_t total = 0;
  for (const auto& p : points) {
    total += p.data.total_requests();
  }
  EXPECT_EQ(total, 60u);
  // Queries a bucket apart keep the same alignment: a merged point is stable while it fills.
  const auto later = series.query(now + kBucket, 60 * kBucket, 10);
  EXPECT_EQ(later.front().start_ms % (6 * kBucket), 0);
}

TEST(TimeSeries, EscalationsRoutedShareCostAndLatency) {
  TimeSeries series = ring(6);
  SeriesRequest escalated = request(SeriesTier::kCloud, 900);
  escalated.escalated = true;
  escalated.routed = true;
  escalated.spend_usd = 0.002;
  escalated.all_cloud_usd = 0.002;
  SeriesRequest edge = request(SeriesTier::kEdge, 20);
  edge.routed = true;
  edge.all_cloud_usd = 0.003;
  SeriesRequest failed = request(SeriesTier::kNone, 5);
  failed.routed = true;
  for (const auto& r : {escalated, edge, edge, failed}) {
    series.record_request(r, kT0);
  }
  const auto points = series.query(kT0, kBucket, 1);
  ASSERT_EQ(points.size(), 1u);
  const SeriesBucket& b = points[0].data;
  EXPECT_EQ(b.total_requests(), 4u);
  EXPECT_EQ(b.escalations, 1u);
  EXPECT_EQ(b.routed, 3u) << "a failed request is not among the routed answers";
  EXPECT_EQ(b.routed_cloud, 1u);
  EXPECT_DOUBLE_EQ(b.spend_usd, 0.002);
  EXPECT_DOUBLE_EQ(b.all_cloud_usd, 0.008);
  EXPECT_DOUBLE_EQ(b.saved_usd, 0.006);
  EXPECT_EQ(b.latency_ms[0].count(), 2u);
  EXPECT_EQ(b.latency_ms[1].count(), 1u);
  EXPECT_NEAR(*b.latency_ms[1].percentile(95), 900, 900 * 0.13);
  EXPECT_NEAR(*b.ttft_ms[0].percentile(50), 2, 2 * 0.13);
}

TEST(TimeSeries, GaugesKeepTheLatestReadingAndCountCloudSamples) {
  TimeSeries series = ring(6);
  series.record_gauges({.decode_tokens_per_s = 100, .decode_baseline = 120, .cloud_online = true},
                       kT0);
  series.record_gauges(
      {.decode_tokens_per_s = 80, .decode_baseline = std::nullopt, .cloud_online = false},
      kT0 + 1'000);
  series.record_gauges(
      {.decode_tokens_per_s = 60, .decode_baseline = std::nullopt, .cloud_online = std::nullopt},
      kT0 + kBucket);
  const auto each = series.query(kT0 + kBucket, 2 * kBucket, 100);
  ASSERT_EQ(each.size(), 2u);
  EXPECT_EQ(each[0].data.decode_tokens_per_s, 80);
  EXPECT_EQ(each[0].data.decode_baseline, 120);
  EXPECT_EQ(each[0].data.cloud_samples, 2u);
  EXPECT_EQ(each[0].data.cloud_online, 1u);
  EXPECT_EQ(each[1].data.cloud_samples, 0u) << "no cloud configured: no samples";
  const auto merged = series.query(kT0 + kBucket, 2 * kBucket, 1);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].data.decode_tokens_per_s, 60) << "the latest bucket's reading wins";
  EXPECT_EQ(merged[0].data.decode_baseline, 120) << "...where it has one";
}

TEST(TimeSeries, MemoryIsFixedAtConstruction) {
  const TimeSeries series({});
  EXPECT_EQ(series.capacity(), 2'160u);
  EXPECT_EQ(series.retention_ms(), 6 * 3'600'000);
  EXPECT_EQ(series.bytes(), 2'160 * TimeSeries::bucket_bytes());
  // The documented bound (docs/OPERATIONS.md): 2 KiB a bucket, 4.3 MB for the default ring.
  EXPECT_LE(TimeSeries::bucket_bytes(), 2048u);
  EXPECT_LE(series.bytes(), 4'320'000u);
}

TEST(TimeSeries, NegativeTimesUseFloorBuckets) {
  TimeSeries series = ring(4);
  series.record_request(request(SeriesTier::kEdge), -1);
  const auto points = series.query(-1, kBucket, 10);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].start_ms, -kBucket);
  EXPECT_EQ(points[0].data.requests[0], 1u);
}

TEST(TimeSeries, ConcurrentRecordsAreAllCounted) {
  TimeSeries series = ring(10);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&series] {
      for (int i = 0; i < 1000; ++i) {
        series.record_request(request(SeriesTier::kEdge), kT0 + i);
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(series.query(kT0 + 999, kBucket, 1)[0].data.requests[0], 4000u);
}

TEST(TimeSeries, TierNamesRoundTrip) {
  for (const char* name : {"edge", "cloud", "human", "none"}) {
    EXPECT_STREQ(series_tier_name(series_tier(name)), name);
  }
  EXPECT_EQ(series_tier("bogus"), SeriesTier::kNone);
}

}  // namespace
}  // namespace tandem::telemetry
