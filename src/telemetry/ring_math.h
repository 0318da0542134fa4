#pragma once
// Arithmetic the time-bucketed rings share (latency_window.cpp, time_series.cpp). Internal to
// the telemetry component.

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace tandem::telemetry::ring_math {

// The index of a bucket that holds nothing yet: no time maps to it.
inline constexpr int64_t kNoBucket = std::numeric_limits<int64_t>::min();

// Sizes of 0 are programmer errors; release builds use 1 rather than divide by zero.
inline int64_t at_least_one(int64_t value) {
  assert(value >= 1);
  return std::max<int64_t>(value, 1);
}
inline size_t at_least_one(size_t value) {
  assert(value >= 1);
  return std::max<size_t>(value, 1);
}

}  // namespace tandem::telemetry::ring_math
