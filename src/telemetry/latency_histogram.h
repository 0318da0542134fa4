#pragma once
// A fixed-size histogram of latencies in milliseconds, for the dashboard's plots of percentiles
// over time: one per tier per time bucket (telemetry/time_series.h), merged when a plot shows
// several buckets as one point. Exact percentiles (LatencyWindow) need the samples; this keeps
// counts in log-spaced bins instead, so its size never depends on the traffic and two of them
// merge by adding.
//
// Bins: kBinsPerOctave per doubling from kMinMs to kMaxMs (1/8 ms to about 70 min), plus one
// bin for everything below kMinMs; values above kMaxMs count in the last bin. A percentile is
// reported as its bin's geometric midpoint, within a factor 2^(1/6) (about 12 %) of every value
// in the bin.
//
// Thread-safety: none; a value type. Its owner (TimeSeries) guards it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace tandem::telemetry {

class LatencyHistogram {
 public:
  static constexpr int kBinsPerOctave = 3;
  static constexpr int kMinOctave = -3;  // 2^-3 ms
  static constexpr int kMaxOctave = 22;  // 2^22 ms, about 70 minutes
  static constexpr size_t kBins =
      static_cast<size_t>((kMaxOctave - kMinOctave) * kBinsPerOctave) + 1;

  // Counts one value. Negative and non-finite values are ignored.
  void add(double ms);
  // Adds another histogram's counts to this one.
  void merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }

  // The nearest-rank `percent`-th percentile (the bin holding the ceil(percent/100 * count)-th
  // smallest value), as that bin's representative value; nullopt when empty. `percent` in
  // (0, 100]; others are clamped into it.
  std::optional<double> percentile(double percent) const;

  // The bin a value falls in, and the value a bin stands for (its geometric midpoint; for the
  // bin below kMinMs, half of it).
  static size_t bin_of(double ms);
  static double bin_value(size_t bin);

 private:
  // uint32_t per bin: 4 billion requests per bin per bucket is far beyond any gateway's rate,
  // and half the size of uint64_t keeps the time series' bound small.
  std::array<uint32_t, kBins> counts_{};
  uint64_t count_ = 0;
};

}  // namespace tandem::telemetry
