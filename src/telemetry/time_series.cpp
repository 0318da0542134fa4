#include "telemetry/time_series.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "telemetry/ring_math.h"

namespace tandem::telemetry {
namespace {

using namespace ring_math;

constexpr const char* kTierNames[kSeriesTiers] = {"edge", "cloud", "human", "none"};

// Floor division, so that negative times and indices fall below as positive ones do.
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t quotient = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient;
}

size_t tier_index(SeriesTier tier) {
  return std::min(static_cast<size_t>(tier), kSeriesTiers - 1);
}

}  // namespace

const char* series_tier_name(SeriesTier tier) {
  return kTierNames[tier_index(tier)];
}

SeriesTier series_tier(const char* name) {
  for (size_t i = 0; i < kSeriesTiers; ++i) {
    if (std::strcmp(name, kTierNames[i]) == 0) {
      return static_cast<SeriesTier>(i);
    }
  }
  return SeriesTier::kNone;
}

uint64_t SeriesBucket::total_requests() const {
  uint64_t total = 0;
  for (const uint64_t n : requests) {
    total += n;
  }
  return total;
}

void SeriesBucket::merge(const SeriesBucket& later) {
  for (size_t i = 0; i < kSeriesTiers; ++i) {
    requests[i] += later.requests[i];
  }
  escalations += later.escalations;
  routed += later.routed;
  routed_cloud += later.routed_cloud;
  spend_usd += later.spend_usd;
  all_cloud_usd += later.all_cloud_usd;
  saved_usd += later.saved_usd;
  for (size_t i = 0; i < kLatencyTiers; ++i) {
    latency_ms[i].merge(later.latency_ms[i]);
    ttft_ms[i].merge(later.ttft_ms[i]);
  }
  if (later.decode_tokens_per_s) {
    decode_tokens_per_s = later.decode_tokens_per_s;
  }
  if (later.decode_baseline) {
    decode_baseline = later.decode_baseline;
  }
  cloud_samples += later.cloud_samples;
  cloud_online += later.cloud_online;
}

TimeSeries::TimeSeries(Options options)
    : bucket_ms_(at_least_one(options.bucket_ms)), slots_(at_least_one(options.buckets)) {
  // Every slot starts as a bucket far in the past, so none counts before its first record.
  for (Slot& slot : slots_) {
    slot.index = kNoBucket;
  }
}

size_t TimeSeries::bucket_bytes() {
  return sizeof(Slot);
}

int64_t TimeSeries::bucket_index(int64_t time_ms) const {
  return floor_div(time_ms, bucket_ms_);
}

SeriesBucket* TimeSeries::bucket_for(int64_t index) {
  const auto size = static_cast<int64_t>(slots_.size());
  const int64_t position = ((index % size) + size) % size;
  Slot& slot = slots_[static_cast<size_t>(position)];
  if (slot.index == index) {
    return &slot.bucket;
  }
  if (slot.index > index) {
    return nullptr;  // the slot already holds a newer bucket: this one left the ring
  }
  slot.index = index;
  slot.bucket = SeriesBucket{};
  return &slot.bucket;
}

void TimeSeries::record_request(const SeriesRequest& request, int64_t now_ms) {
  const size_t tier = tier_index(request.tier);
  std::lock_guard lock(mutex_);
  SeriesBucket* bucket = bucket_for(bucket_index(now_ms));
  if (bucket == nullptr) {
    return;
  }
  ++bucket->requests[tier];
  if (request.escalated) {
    ++bucket->escalations;
  }
  if (request.routed && request.tier != SeriesTier::kNone) {
    ++bucket->routed;
    if (request.tier == SeriesTier::kCloud) {
      ++bucket->routed_cloud;
    }
  }
  bucket->spend_usd += request.spend_usd;
  if (request.all_cloud_usd) {
    bucket->all_cloud_usd += *request.all_cloud_usd;
    bucket->saved_usd += std::max(0.0, *request.all_cloud_usd - request.spend_usd);
  }
  if (tier < kLatencyTiers) {
    bucket->latency_ms[tier].add(request.latency_ms);  // negative: ignored
    bucket->ttft_ms[tier].add(request.ttft_ms);
  }
}

void TimeSeries::record_gauges(const SeriesGauges& gauges, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  SeriesBucket* bucket = bucket_for(bucket_index(now_ms));
  if (bucket == nullptr) {
    return;
  }
  if (gauges.decode_tokens_per_s) {
    bucket->decode_tokens_per_s = gauges.decode_tokens_per_s;
  }
  if (gauges.decode_baseline) {
    bucket->decode_baseline = gauges.decode_baseline;
  }
  if (gauges.cloud_online) {
    ++bucket->cloud_samples;
    if (*gauges.cloud_online) {
      ++bucket->cloud_online;
    }
  }
}

std::vector<TimeSeries::Point> TimeSeries::query(int64_t now_ms, int64_t window_ms,
                                                 size_t max_points) const {
  const auto capacity = static_cast<int64_t>(slots_.size());
  // Buckets in (now - window, now]: the bucket of now and those before it, within the ring.
  const int64_t wanted = floor_div(std::max<int64_t>(window_ms, 1) + bucket_ms_ - 1, bucket_ms_);
  const int64_t count = std::clamp<int64_t>(wanted, 1, capacity);
  const int64_t step = floor_div(count + static_cast<int64_t>(at_least_one(max_points)) - 1,
                                 static_cast<int64_t>(at_least_one(max_points)));
  const int64_t now_index = bucket_index(now_ms);
  const int64_t oldest_kept = now_index - capacity + 1;
  const int64_t first_point = floor_div(now_index - count + 1, step);
  const int64_t last_point = floor_div(now_index, step);

  std::vector<Point> points;
  points.reserve(static_cast<size_t>(last_point - first_point + 1));
  std::lock_guard lock(mutex_);
  for (int64_t p = first_point; p <= last_point; ++p) {
    Point point;
    point.start_ms = p * step * bucket_ms_;
    point.span_ms = step * bucket_ms_;
    for (int64_t index = p * step; index < (p + 1) * step && index <= now_index; ++index) {
      if (index < oldest_kept) {
        continue;
      }
      const int64_t position = ((index % capacity) + capacity) % capacity;
      const Slot& slot = slots_[static_cast<size_t>(position)];
      if (slot.index == index) {
        point.data.merge(slot.bucket);
      }
    }
    points.push_back(std::move(point));
  }
  return points;
}

}  // namespace tandem::telemetry
