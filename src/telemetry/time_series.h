#pragma once
// The gateway's recent history, for the dashboard's plots: per fixed interval (a bucket, 10 s
// by default) the requests per answering tier, escalations, routed requests and how many of
// them the cloud answered, latency and TTFT distributions per tier, spend and cost saved, the
// edge's decode speed against its baseline, and how often the cloud tier was reachable. A
// window query merges consecutive buckets into at most a given number of points, so a six-hour
// plot is as cheap to draw as a five-minute one.
//
// Bound: a ring of `buckets` buckets allocated at construction, each of bucket_bytes(); nothing
// grows with traffic, clients or time. The defaults keep 2,160 buckets of 10 s (6 hours) in
// 4.3 MB (2,000 bytes a bucket). A bucket's slot is reused once it is `buckets` intervals old.
//
// Time is passed in by the caller (unix milliseconds in the gateway, anything in tests), never
// read from a clock here. An event older than what its slot now holds (a clock that went back
// more than the whole ring) is dropped.
//
// Thread-safety: every method may be called from any thread; one mutex guards the ring. A
// record is a few additions under it; a query merges at most `buckets` buckets under it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "telemetry/latency_histogram.h"

namespace tandem::telemetry {

// The tiers a request can end in, as indices into a bucket's arrays. kNone: it failed.
enum class SeriesTier : size_t { kEdge = 0, kCloud = 1, kHuman = 2, kNone = 3 };
inline constexpr size_t kSeriesTiers = 4;
// Tiers with latency distributions: every answering tier, not kNone.
inline constexpr size_t kLatencyTiers = 3;

// "edge", "cloud", "human" or "none" by index, and back (anything else is kNone).
const char* series_tier_name(SeriesTier tier);
SeriesTier series_tier(const char* name);

// One finished request, as the time series counts it.
struct SeriesRequest {
  SeriesTier tier = SeriesTier::kNone;
  bool escalated = false;  // the edge answered first and a higher tier replaced it
  // The router decided (model `tandem`). Counted with `tier` for the routed cloud share the
  // gaming plots compare flagged clients with.
  bool routed = false;
  double latency_ms = -1;  // negative: not measured
  double ttft_ms = -1;
  double spend_usd = 0;                 // edge plus cloud
  std::optional<double> all_cloud_usd;  // what all-cloud would have cost, when priced
};

// Readings of state that lasts (not events): sampled periodically and at request ends.
struct SeriesGauges {
  std::optional<double> decode_tokens_per_s;  // the edge's decode-speed average
  std::optional<double> decode_baseline;      // ...and the baseline it is compared with
  std::optional<bool> cloud_online;           // unset when no cloud tier is configured
};

struct SeriesBucket {
  std::array<uint64_t, kSeriesTiers> requests{};
  uint64_t escalations = 0;
  uint64_t routed = 0;        // answered requests the router decided
  uint64_t routed_cloud = 0;  // ...of them, answered by the cloud
  double spend_usd = 0;
  double all_cloud_usd = 0;  // over the priced requests only
  double saved_usd = 0;      // all-cloud cost minus spend, per priced request, at least 0
  std::array<LatencyHistogram, kLatencyTiers> latency_ms{};
  std::array<LatencyHistogram, kLatencyTiers> ttft_ms{};
  // The latest readings in the bucket (for a merged point: in its latest bucket that has one).
  std::optional<double> decode_tokens_per_s;
  std::optional<double> decode_baseline;
  uint32_t cloud_samples = 0;  // readings of the cloud tier's reachability
  uint32_t cloud_online = 0;   // ...that found it online

  uint64_t total_requests() const;
  // Adds `later`'s counts; its gauges, where set, replace these.
  void merge(const SeriesBucket& later);
};

class TimeSeries {
 public:
  struct Options {
    int64_t bucket_ms = 10'000;
    size_t buckets = 2'160;  // 6 hours of 10 s
  };
  // Bucket sizes and counts below 1 are programmer errors (asserted; release builds use 1).
  explicit TimeSeries(Options options);

  void record_request(const SeriesRequest& request, int64_t now_ms);
  void record_gauges(const SeriesGauges& gauges, int64_t now_ms);

  // Consecutive buckets merged: [start_ms, start_ms + span_ms).
  struct Point {
    int64_t start_ms = 0;
    int64_t span_ms = 0;
    SeriesBucket data;
  };

  // The window (now_ms - window_ms, now_ms] (at most the whole ring; at least one bucket) as
  // points of `step` whole buckets each, step = ceil(buckets in the window / max_points).
  // Points are aligned to multiples of the step on the bucket grid, so successive queries put
  // the same buckets together; hence the first point may begin before the window, and there
  // may be max_points + 1 of them. The last point holds the bucket of now_ms, still filling.
  // Buckets with nothing recorded are empty points, never left out, so the x axis is regular.
  std::vector<Point> query(int64_t now_ms, int64_t window_ms, size_t max_points) const;

  int64_t bucket_ms() const { return bucket_ms_; }
  size_t capacity() const { return slots_.size(); }
  // How far back the ring reaches: capacity() buckets.
  int64_t retention_ms() const { return bucket_ms_ * static_cast<int64_t>(slots_.size()); }
  // One bucket's size in bytes (2,000, nearly all of it latency bins), and the ring's,
  // allocated at construction.
  static size_t bucket_bytes();
  size_t bytes() const { return slots_.size() * bucket_bytes(); }

 private:
  struct Slot {
    int64_t index = 0;  // floor(time / bucket_ms_) of what this slot holds
    SeriesBucket bucket;
  };

  int64_t bucket_index(int64_t time_ms) const;
  // The slot for `index`, cleared when it held an older bucket; null when it holds a newer one
  // (the event is older than the ring). Requires mutex_ held.
  SeriesBucket* bucket_for(int64_t index);

  const int64_t bucket_ms_;
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;  // guarded by mutex_; fixed size, slot = index mod size
};

}  // namespace tandem::telemetry
