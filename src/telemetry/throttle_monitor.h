#pragma once
// Whether the edge device is throttled: too hot, running down its battery, or decoding well
// below its own usual speed. Routing reads the snapshot and, where its policy allows, shifts
// work to the cloud while the edge is throttled. This class only observes and decides; it does
// no I/O and reads no clock: device readings and the time come in through record_*(), so tests
// replay any history exactly.
//
// Thread-safety: every method may be called from any thread; one mutex guards all state. The
// engine records decode speeds from its thread, a poller records device readings from another,
// and the server takes snapshots from request threads.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/device_state.h"

namespace tandem::telemetry {

// Above this a single-sequence decode speed is a measuring error, not a fast device; one such
// sample would otherwise dominate the average for thousands of generations.
inline constexpr double kMaxPlausibleTokensPerS = 1e6;
// The most generations the baseline may be learned from (their speeds are kept until then).
inline constexpr uint32_t kMaxBaselineGenerations = 1000;
// How far above min_battery_percent the battery must charge before it stops counting.
inline constexpr double kBatteryResumeMarginPercent = 5.0;

struct ThrottleOptions {
  // Throttled when the hottest zone reaches this; back only at or below resume_temp_c. The gap
  // keeps a device hovering at the limit from flapping between edge and cloud.
  double max_temp_c = 85.0;
  double resume_temp_c = 80.0;
  // Whether running on battery at all throttles (send work to the cloud to save the battery).
  bool on_battery_throttles = false;
  // On battery and at or below this: throttled, whatever on_battery_throttles says. Back above
  // this plus kBatteryResumeMarginPercent, or once external power returns. 0 all but disables it.
  double min_battery_percent = 15.0;
  // Throttled when the decode-speed average falls below this share of the baseline; back at or
  // above resume_throughput_ratio. Both in (0, 1], resume not below min.
  double min_throughput_ratio = 0.6;
  double resume_throughput_ratio = 0.75;
  // Weight of the newest sample in the exponentially weighted average, in (0, 1].
  double ewma_alpha = 0.2;
  // Generations shorter than this are ignored: prompt processing and start-up dominate their
  // timing, so their tokens/s is noise.
  uint32_t min_tokens = 16;
  // The device's normal single-sequence decode speed; 0 learns it as the median of the first
  // baseline_generations qualifying generations (the median, so one slow outlier does not set
  // it). The throughput check is inactive until a baseline exists.
  double baseline_tokens_per_s = 0.0;
  uint32_t baseline_generations = 5;
  // A decode average older than this is dropped (0 keeps it forever). Without this a
  // throughput throttle would never end: the router sends the work to the cloud, so no new edge
  // samples arrive to show the device has recovered. Once dropped, the next edge generation
  // starts a fresh average, which acts as the probe.
  int64_t throughput_stale_ms = 300'000;  // 5 minutes

  // "" when the options are usable; otherwise the first problem, naming the field and the
  // value, e.g. "resume_temp_c (90) must be below max_temp_c (85)".
  std::string validate() const;
};

enum class ThrottleState {
  // The edge runs at its usual speed and within its thermal and power limits: route normally.
  kNormal,
  // At least one cause (heat, battery, slow decoding) is past its limit, or tripped and has not
  // yet recovered to its resume level: prefer the cloud where the routing policy allows.
  kThrottled,
};

// "normal" or "throttled".
const char* throttle_state_name(ThrottleState state);

class ThrottleMonitor {
 public:
  // `options` should pass validate(); the config layer reports failures to the user. Here an
  // invalid field is replaced by its default rather than refused, so a bad value cannot turn the
  // arithmetic undefined.
  explicit ThrottleMonitor(ThrottleOptions options);

  // One finished edge generation: its decode speed (`tokens_per_s`, generated tokens over the
  // decode time), its generated `tokens`, and how many sequences the engine was decoding at
  // the same time. Ignored (counted in ignored_samples) when tokens < min_tokens, when
  // tokens_per_s is not finite, not positive or above kMaxPlausibleTokensPerS, or when
  // concurrent_sequences is not 1: a batched sequence decodes slower per sequence by design,
  // and only single-sequence generations compare with a single-sequence baseline. A qualifying
  // sample feeds the baseline while it is being learned and the average (which starts at the
  // first sample), then the state is re-decided at `now_ms`.
  void record_decode(double tokens_per_s, uint32_t tokens, uint32_t concurrent_sequences,
                     int64_t now_ms);

  // The latest device reading; it replaces the previous one. A reading without temperatures
  // clears the thermal cause: the monitor throttles on evidence, not on its absence.
  void record_device(const DeviceState& state, int64_t now_ms);

  struct Reason {
    std::string code;    // "device.thermal", "device.battery" or "device.throughput"
    std::string detail;  // for people: the reading and the limits that apply
  };

  struct Snapshot {
    ThrottleState state = ThrottleState::kNormal;
    // Why throttled, in the order thermal, battery, throughput; empty when normal. While
    // throttled, every cause not yet back to its resume level is listed, including ones that
    // did not trip it: the state recovers only when all have.
    std::vector<Reason> reasons;
    // When the state last changed; before any change, the time of the first record_*() call
    // (0 before any).
    int64_t since_ms = 0;
    uint64_t transitions = 0;
    std::optional<double> ewma_tokens_per_s;
    std::optional<double> baseline_tokens_per_s;
    std::optional<double> throughput_ratio;  // ewma / baseline, when both exist
    std::optional<double> max_temp_c;
    bool on_battery = false;
    std::optional<double> battery_percent;
    uint64_t samples = 0;          // decode samples that qualified
    uint64_t ignored_samples = 0;  // decode samples that did not (short, batched, invalid)
  };

  // A consistent copy of everything above, as decided by the last record_*() call.
  Snapshot snapshot() const;

 private:
  // Causes active under the thresholds of the given state: trip levels when normal, resume
  // levels when throttled. Requires mutex_ held.
  std::vector<Reason> active_causes(ThrottleState state) const;
  // Forgets the decode average when its last sample is older than throughput_stale_ms.
  // Requires mutex_ held.
  void drop_stale_average(int64_t now_ms);
  // Drops a stale decode average, then re-decides the state at `now_ms`. Requires mutex_ held.
  void update(int64_t now_ms);
  std::optional<double> throughput_ratio() const;  // requires mutex_ held

  const ThrottleOptions options_;
  mutable std::mutex mutex_;
  ThrottleState state_ = ThrottleState::kNormal;  // guarded by mutex_
  std::vector<Reason> reasons_;                   // guarded by mutex_
  bool started_ = false;                          // guarded by mutex_
  int64_t since_ms_ = 0;                          // guarded by mutex_
  uint64_t transitions_ = 0;                      // guarded by mutex_
  std::optional<double> ewma_;                    // guarded by mutex_
  int64_t last_sample_ms_ = 0;                    // guarded by mutex_
  std::optional<double> baseline_;                // guarded by mutex_
  std::vector<double> baseline_samples_;          // guarded by mutex_; until baseline_ is set
  uint64_t samples_ = 0;                          // guarded by mutex_
  uint64_t ignored_samples_ = 0;                  // guarded by mutex_
  std::optional<double> max_temp_c_;              // guarded by mutex_
  std::string hottest_zone_;                      // guarded by mutex_; "name (type)"
  bool on_battery_ = false;                       // guarded by mutex_
  std::optional<double> battery_percent_;         // guarded by mutex_
};

}  // namespace tandem::telemetry
