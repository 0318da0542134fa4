#include "telemetry/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tandem::telemetry {

void LatencyHistogram::add(double ms) {
  if (!std::isfinite(ms) || ms < 0) {
    return;
  }
  uint32_t& bin = counts_[bin_of(ms)];
  if (bin == std::numeric_limits<uint32_t>::max()) {
    return;  // saturated: a count that wrapped would misplace every percentile
  }
  ++bin;
  ++count_;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBins; ++i) {
    const uint64_t sum = uint64_t{counts_[i]} + other.counts_[i];
    const uint64_t kept = std::min<uint64_t>(sum, std::numeric_limits<uint32_t>::max());
    count_ += kept - counts_[i];
    counts_[i] = static_cast<uint32_t>(kept);
  }
}

std::optional<double> LatencyHistogram::percentile(double percent) const {
  if (count_ == 0) {
    return std::nullopt;
  }
  const double p = std::isfinite(percent) ? std::clamp(percent, 1e-9, 100.0) : 100.0;
  // 1-based nearest rank; at least 1, at most count_.
  const auto rank = std::clamp<uint64_t>(
      static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_))), 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBins; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      return bin_value(i);
    }
  }
  return bin_value(kBins - 1);
}

size_t LatencyHistogram::bin_of(double ms) {
  const double min_ms = std::ldexp(1.0, kMinOctave);
  if (!(ms >= min_ms)) {
    return 0;
  }
  // Bin i >= 1 covers [2^(kMinOctave + (i-1)/k), 2^(kMinOctave + i/k)).
  const double position = (std::log2(ms) - kMinOctave) * kBinsPerOctave;
  // Compared as a double first: an infinite or huge value must not reach the integer cast.
  if (!(position < static_cast<double>(kBins - 1))) {
    return kBins - 1;
  }
  return static_cast<size_t>(std::floor(position)) + 1;
}

double LatencyHistogram::bin_value(size_t bin) {
  if (bin == 0) {
    return std::ldexp(1.0, kMinOctave) / 2;
  }
  const double lower = kMinOctave + static_cast<double>(bin - 1) / kBinsPerOctave;
  return std::exp2(lower + 0.5 / kBinsPerOctave);
}

}  // namespace tandem::telemetry
