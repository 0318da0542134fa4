#include "telemetry/latency_window.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "telemetry/ring_math.h"

namespace tandem::telemetry {
namespace {

using namespace ring_math;

// Whether `time` is in the window (now - span, now] or after now. Computed on unsigned
// differences so that no time, however far off, overflows.
bool within(int64_t time, int64_t now, int64_t span) {
  return time > now ||
         static_cast<uint64_t>(now) - static_cast<uint64_t>(time) < static_cast<uint64_t>(span);
}

// The nearest-rank p-th percentile of sorted, non-empty `values`: the ceil(p/100 * n)-th
// smallest, computed in integers so that p90 of 10 samples is exactly the 9th.
double nearest_rank(const std::vector<double>& sorted, size_t percent) {
  const size_t rank = (percent * sorted.size() + 99) / 100;  // 1-based, >= 1 for percent >= 1
  return sorted[rank - 1];
}

}  // namespace

LatencyWindow::LatencyWindow(int64_t window_ms, size_t capacity)
    : window_ms_(at_least_one(window_ms)), ring_(at_least_one(capacity)) {}

void LatencyWindow::add(double value, int64_t now_ms) {
  if (!std::isfinite(value) || value < 0) {
    return;
  }
  std::lock_guard lock(mutex_);
  // Samples arrive in (nearly) time order, so the expired ones are at the front; dropping them
  // keeps summary() from copying a full ring of stale samples after traffic slows down.
  while (size_ > 0 && !within(ring_[oldest_].time_ms, now_ms, window_ms_)) {
    oldest_ = (oldest_ + 1) % ring_.size();
    --size_;
  }
  if (size_ == ring_.size()) {
    ring_[oldest_] = Sample{value, now_ms};  // overwrites the oldest
    oldest_ = (oldest_ + 1) % ring_.size();
  } else {
    ring_[(oldest_ + size_) % ring_.size()] = Sample{value, now_ms};
    ++size_;
  }
}

LatencyWindow::Summary LatencyWindow::summary(int64_t now_ms) const {
  std::vector<double> values;
  {
    std::lock_guard lock(mutex_);
    values.reserve(size_);
    for (size_t i = 0; i < size_; ++i) {
      const Sample& sample = ring_[(oldest_ + i) % ring_.size()];
      if (within(sample.time_ms, now_ms, window_ms_)) {
        values.push_back(sample.value);
      }
    }
  }
  Summary summary;
  if (values.empty()) {
    return summary;
  }
  std::sort(values.begin(), values.end());
  double total = 0;
  for (const double value : values) {
    total += value;
  }
  summary.count = values.size();
  summary.p50 = nearest_rank(values, 50);
  summary.p90 = nearest_rank(values, 90);
  summary.p99 = nearest_rank(values, 99);
  summary.mean = total / static_cast<double>(values.size());
  summary.max = values.back();
  return summary;
}

WindowedCounter::WindowedCounter(int64_t window_ms)
    : window_ms_(at_least_one(window_ms)),
      bucket_ms_((window_ms_ + kBuckets - 1) / kBuckets),
      bucket_count_((window_ms_ + bucket_ms_ - 1) / bucket_ms_),
      buckets_(static_cast<size_t>(bucket_count_)) {
  // Every slot starts as a bucket far in the past, so none counts before its first add().
  for (Bucket& bucket : buckets_) {
    bucket.index = kNoBucket;
  }
}

int64_t WindowedCounter::bucket_index(int64_t time_ms) const {
  // Floor division, so that negative times fall in the bucket below as positive ones do.
  const int64_t quotient = time_ms / bucket_ms_;
  return (time_ms % bucket_ms_ < 0) ? quotient - 1 : quotient;
}

bool WindowedCounter::in_window(int64_t index, int64_t now_index) const {
  return within(index, now_index, bucket_count_);
}

void WindowedCounter::add(std::string_view key, int64_t now_ms, uint64_t n) {
  if (n == 0) {
    return;
  }
  const int64_t index = bucket_index(now_ms);
  // The slot's position is the index modulo the bucket count, as a non-negative remainder.
  const int64_t slot = ((index % bucket_count_) + bucket_count_) % bucket_count_;
  std::lock_guard lock(mutex_);
  Bucket& bucket = buckets_[static_cast<size_t>(slot)];
  if (bucket.index != index) {
    if (bucket.index > index) {
      return;  // the slot already holds a newer bucket: this event is older than the window
    }
    bucket.index = index;
    bucket.counts.clear();
  }
  if (const auto it = bucket.counts.find(key); it != bucket.counts.end()) {
    it->second += n;
  } else {
    bucket.counts.emplace(std::string(key), n);
  }
}

std::map<std::string, uint64_t> WindowedCounter::counts(int64_t now_ms) const {
  const int64_t now_index = bucket_index(now_ms);
  std::map<std::string, uint64_t> counts;
  std::lock_guard lock(mutex_);
  for (const Bucket& bucket : buckets_) {
    if (in_window(bucket.index, now_index)) {
      for (const auto& [key, count] : bucket.counts) {
        counts[key] += count;
      }
    }
  }
  return counts;
}

uint64_t WindowedCounter::total(int64_t now_ms) const {
  const int64_t now_index = bucket_index(now_ms);
  uint64_t total = 0;
  std::lock_guard lock(mutex_);
  for (const Bucket& bucket : buckets_) {
    if (in_window(bucket.index, now_index)) {
      for (const auto& [key, count] : bucket.counts) {
        total += count;
      }
    }
  }
  return total;
}

}  // namespace tandem::telemetry
