#pragma once
// Live statistics over a sliding time window, for the status page: exact latency percentiles
// (LatencyWindow) and counts of named events (WindowedCounter), e.g. "p99 over the last
// minute" and "requests per tier over the last minute". Prometheus histograms answer the same
// questions for dashboards, but only to a bucket's resolution and only after a scrape.
//
// Time is passed in by the caller (milliseconds on any monotonic scale), never read from a
// clock here, so tests drive the window without sleeping.
//
// Thread-safety: every method may be called from any thread; each object guards its state
// with its own mutex.

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::telemetry {

// The newest samples (at most `capacity`) of the last `window_ms` milliseconds, and exact
// percentiles over them.
//
// A sample taken at time t is in the window of `now_ms` when now_ms - window_ms < t: the
// window is the half-open interval (now_ms - window_ms, now_ms], so a sample exactly
// window_ms old is out. Samples stamped after now_ms (a thread that read the clock later but
// got the lock first) count as in.
class LatencyWindow {
 public:
  struct Summary {
    size_t count = 0;
    // Nearest-rank percentiles: p-th is the smallest sample such that at least p% of the
    // samples are <= it, i.e. the ceil(p/100 * count)-th smallest. Always an observed value.
    double p50 = 0;
    double p90 = 0;
    double p99 = 0;
    double mean = 0;
    double max = 0;
  };

  // Requires window_ms >= 1 and capacity >= 1 (asserted; release builds use 1 instead). The
  // ring of `capacity` samples is allocated here, so add() never allocates.
  LatencyWindow(int64_t window_ms, size_t capacity);

  // Records `value` (e.g. a latency in ms) taken at `now_ms`. Negative and non-finite values
  // are ignored. When the ring is full the oldest sample is dropped, so under heavy traffic
  // the statistics cover the newest `capacity` samples rather than the whole window.
  void add(double value, int64_t now_ms);

  // Statistics over the samples in the window of `now_ms`; count 0 and all zeros when empty.
  // Copies the samples under the lock and sorts them outside it: O(n log n) in the samples
  // held, which is meant for a status page, not for the request path.
  Summary summary(int64_t now_ms) const;

  int64_t window_ms() const { return window_ms_; }
  size_t capacity() const { return ring_.size(); }

 private:
  struct Sample {
    double value = 0;
    int64_t time_ms = 0;
  };

  const int64_t window_ms_;
  mutable std::mutex mutex_;
  std::vector<Sample> ring_;  // guarded by mutex_; fixed size, the capacity
  size_t oldest_ = 0;         // guarded by mutex_; index of the oldest sample held
  size_t size_ = 0;           // guarded by mutex_; samples held
};

// Counts of named events (e.g. "edge", "cloud", "human") over the last `window_ms`, in
// memory bounded by the number of distinct keys times kBuckets, whatever the event rate.
//
// Granularity: time is cut into buckets of bucket_ms() = ceil(window_ms / kBuckets) ms (1 s
// for a one-minute window), and events leave the window a whole bucket at a time: the bucket
// an event fell in counts while fewer than ceil(window_ms / bucket_ms()) buckets have begun
// after it. So an event counts for window_ms give or take less than one bucket. When window_ms
// divides into whole buckets (a multiple of kBuckets, e.g. a minute; or at most kBuckets) an
// event is never counted late, and one at the start of a bucket is out exactly window_ms
// later, as in LatencyWindow.
class WindowedCounter {
 public:
  static constexpr int64_t kBuckets = 60;

  // Requires window_ms >= 1 (asserted; release builds use 1 instead).
  explicit WindowedCounter(int64_t window_ms);

  // Counts `n` events of `key` at `now_ms`. Events already outside the window of the newest
  // time seen (older than what the buckets hold) are dropped. Keys are meant to be a small
  // fixed set: each distinct key costs memory in every bucket it occurs in.
  void add(std::string_view key, int64_t now_ms, uint64_t n = 1);

  // Per-key counts in the window of `now_ms`; keys without events in it are absent.
  std::map<std::string, uint64_t> counts(int64_t now_ms) const;
  // All events in the window of `now_ms`.
  uint64_t total(int64_t now_ms) const;

  int64_t window_ms() const { return window_ms_; }
  int64_t bucket_ms() const { return bucket_ms_; }

 private:
  struct Bucket {
    int64_t index = 0;  // floor(time / bucket_ms_) of the events counted here
    std::map<std::string, uint64_t, std::less<>> counts;
  };

  int64_t bucket_index(int64_t time_ms) const;
  // Whether bucket `index` lies in the window of the bucket of now, `now_index`.
  bool in_window(int64_t index, int64_t now_index) const;

  const int64_t window_ms_;
  const int64_t bucket_ms_;
  const int64_t bucket_count_;  // buckets spanning the window: ceil(window_ms_ / bucket_ms_)
  mutable std::mutex mutex_;
  std::vector<Bucket> buckets_;  // guarded by mutex_; slot index mod bucket_count_
};

}  // namespace tandem::telemetry
