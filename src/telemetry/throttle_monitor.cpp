#include "telemetry/throttle_monitor.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

namespace tandem::telemetry {
namespace {

// Text that reads back as the same double: "85", "0.6", "1e+300", "nan".
std::string num(double value) {
  // Whole numbers print as such ("1000000", not the shorter "1e+06"): people read these.
  if (std::isfinite(value) && value == std::trunc(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return error == std::errc() ? std::string(buffer, end) : std::string("?");
}

// One decimal, for details people read: "86.5".
std::string one_decimal(double value) {
  return num(std::round(value * 10.0) / 10.0);
}

std::string percent(double ratio) {
  return num(std::round(ratio * 100.0)) + "%";
}

bool in_unit_interval(double value) {
  return std::isfinite(value) && value > 0.0 && value <= 1.0;
}

// Checks every field in a fixed order and returns the first problem. With `repair`, each invalid
// field (or pair of fields) is also reset to its default, so later checks see usable values.
std::string check_options(ThrottleOptions& o, bool repair) {
  const ThrottleOptions defaults;
  std::string first;
  const auto bad = [&](std::string message, auto reset) {
    if (first.empty()) {
      first = std::move(message);
    }
    if (repair) {
      reset();
    }
  };
  if (!std::isfinite(o.max_temp_c)) {
    bad("max_temp_c (" + num(o.max_temp_c) + ") must be a finite temperature",
        [&] { o.max_temp_c = defaults.max_temp_c; });
  }
  if (!std::isfinite(o.resume_temp_c) || !(o.resume_temp_c < o.max_temp_c)) {
    bad("resume_temp_c (" + num(o.resume_temp_c) + ") must be below max_temp_c (" +
            num(o.max_temp_c) + ")",
        [&] {
          o.max_temp_c = defaults.max_temp_c;
          o.resume_temp_c = defaults.resume_temp_c;
        });
  }
  if (!(o.min_battery_percent >= 0.0 && o.min_battery_percent <= 100.0)) {
    bad("min_battery_percent (" + num(o.min_battery_percent) + ") must be within 0..100",
        [&] { o.min_battery_percent = defaults.min_battery_percent; });
  }
  if (!in_unit_interval(o.min_throughput_ratio)) {
    bad("min_throughput_ratio (" + num(o.min_throughput_ratio) + ") must be in (0, 1]",
        [&] { o.min_throughput_ratio = defaults.min_throughput_ratio; });
  }
  if (!in_unit_interval(o.resume_throughput_ratio) ||
      o.resume_throughput_ratio < o.min_throughput_ratio) {
    bad("resume_throughput_ratio (" + num(o.resume_throughput_ratio) +
            ") must be in (0, 1] and not below min_throughput_ratio (" +
            num(o.min_throughput_ratio) + ")",
        [&] {
          o.min_throughput_ratio = defaults.min_throughput_ratio;
          o.resume_throughput_ratio = defaults.resume_throughput_ratio;
        });
  }
  if (!in_unit_interval(o.ewma_alpha)) {
    bad("ewma_alpha (" + num(o.ewma_alpha) + ") must be in (0, 1]",
        [&] { o.ewma_alpha = defaults.ewma_alpha; });
  }
  if (!(std::isfinite(o.baseline_tokens_per_s) && o.baseline_tokens_per_s >= 0.0 &&
        o.baseline_tokens_per_s <= kMaxPlausibleTokensPerS)) {
    bad("baseline_tokens_per_s (" + num(o.baseline_tokens_per_s) + ") must be within 0.." +
            num(kMaxPlausibleTokensPerS) + " (0 learns it)",
        [&] { o.baseline_tokens_per_s = defaults.baseline_tokens_per_s; });
  }
  if (o.baseline_generations < 1 || o.baseline_generations > kMaxBaselineGenerations) {
    bad("baseline_generations (" + std::to_string(o.baseline_generations) + ") must be within 1.." +
            std::to_string(kMaxBaselineGenerations),
        [&] { o.baseline_generations = defaults.baseline_generations; });
  }
  if (o.throughput_stale_ms < 0) {
    bad("throughput_stale_ms (" + std::to_string(o.throughput_stale_ms) +
            ") must not be negative (0 never drops the average)",
        [&] { o.throughput_stale_ms = defaults.throughput_stale_ms; });
  }
  return first;
}

ThrottleOptions repaired(ThrottleOptions options) {
  check_options(options, /*repair=*/true);
  return options;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
}

// Whether more than `limit` ms separate `earlier` from `later`, without overflow for any
// int64 values; time that runs backwards counts as no time.
bool longer_than(int64_t earlier, int64_t later, int64_t limit) {
  if (later <= earlier) {
    return false;
  }
  const uint64_t elapsed = static_cast<uint64_t>(later) - static_cast<uint64_t>(earlier);
  return elapsed > static_cast<uint64_t>(limit);
}

}  // namespace

std::string ThrottleOptions::validate() const {
  ThrottleOptions copy = *this;
  return check_options(copy, /*repair=*/false);
}

const char* throttle_state_name(ThrottleState state) {
  switch (state) {
    case ThrottleState::kNormal:
      return "normal";
    case ThrottleState::kThrottled:
      return "throttled";
  }
  return "normal";
}

ThrottleMonitor::ThrottleMonitor(ThrottleOptions options) : options_(repaired(options)) {
  if (options_.baseline_tokens_per_s > 0.0) {
    baseline_ = options_.baseline_tokens_per_s;
  }
}

void ThrottleMonitor::record_decode(double tokens_per_s, uint32_t tokens,
                                    uint32_t concurrent_sequences, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  const bool qualifies = tokens >= options_.min_tokens && std::isfinite(tokens_per_s) &&
                         tokens_per_s > 0.0 && tokens_per_s <= kMaxPlausibleTokensPerS &&
                         concurrent_sequences == 1;
  if (!qualifies) {
    ++ignored_samples_;
    update(now_ms);
    return;
  }
  ++samples_;
  if (!baseline_) {
    baseline_samples_.push_back(tokens_per_s);
    if (baseline_samples_.size() >= options_.baseline_generations) {
      baseline_ = median(std::move(baseline_samples_));
      baseline_samples_ = {};
    }
  }
  // A stale average is dropped before the new sample is blended into it, not after.
  drop_stale_average(now_ms);
  ewma_ = ewma_ ? options_.ewma_alpha * tokens_per_s + (1.0 - options_.ewma_alpha) * *ewma_
                : tokens_per_s;
  last_sample_ms_ = now_ms;
  update(now_ms);
}

void ThrottleMonitor::record_device(const DeviceState& state, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  max_temp_c_.reset();
  hottest_zone_.clear();
  for (const ThermalZone& zone : state.zones) {
    if (!max_temp_c_ || zone.temp_c > *max_temp_c_) {
      max_temp_c_ = zone.temp_c;
      hottest_zone_ = zone.type.empty() ? zone.name : zone.name + " (" + zone.type + ")";
    }
  }
  on_battery_ = state.on_battery();
  battery_percent_ = state.battery_percent();
  update(now_ms);
}

ThrottleMonitor::Snapshot ThrottleMonitor::snapshot() const {
  std::lock_guard lock(mutex_);
  Snapshot snap;
  snap.state = state_;
  snap.reasons = reasons_;
  snap.since_ms = since_ms_;
  snap.transitions = transitions_;
  snap.ewma_tokens_per_s = ewma_;
  snap.baseline_tokens_per_s = baseline_;
  snap.throughput_ratio = throughput_ratio();
  snap.max_temp_c = max_temp_c_;
  snap.on_battery = on_battery_;
  snap.battery_percent = battery_percent_;
  snap.samples = samples_;
  snap.ignored_samples = ignored_samples_;
  return snap;
}

std::optional<double> ThrottleMonitor::throughput_ratio() const {
  if (!ewma_ || !baseline_ || !(*baseline_ > 0.0)) {
    return std::nullopt;
  }
  return *ewma_ / *baseline_;
}

std::vector<ThrottleMonitor::Reason> ThrottleMonitor::active_causes(ThrottleState state) const {
  const bool holding = state == ThrottleState::kThrottled;
  std::vector<Reason> causes;

  const double temp_limit = holding ? options_.resume_temp_c : options_.max_temp_c;
  if (max_temp_c_ && (holding ? *max_temp_c_ > temp_limit : *max_temp_c_ >= temp_limit)) {
    const std::string zone = hottest_zone_.empty() ? "hottest zone" : hottest_zone_;
    causes.push_back({"device.thermal", zone + " at " + one_decimal(*max_temp_c_) +
                                            " C; throttles at " + num(options_.max_temp_c) +
                                            " C, resumes at or below " +
                                            num(options_.resume_temp_c) + " C"});
  }

  if (on_battery_) {
    const double resume_percent = options_.min_battery_percent + kBatteryResumeMarginPercent;
    const double low_limit = holding ? resume_percent : options_.min_battery_percent;
    if (battery_percent_ && *battery_percent_ <= low_limit) {
      causes.push_back({"device.battery",
                        "on battery at " + one_decimal(*battery_percent_) +
                            "%; throttles at or below " + num(options_.min_battery_percent) +
                            "%, resumes above " + num(resume_percent) + "% or on external power"});
    } else if (options_.on_battery_throttles) {
      causes.push_back(
          {"device.battery", "on battery (on_battery_throttles); resumes on external power"});
    }
  }

  if (const std::optional<double> ratio = throughput_ratio()) {
    const double ratio_limit =
        holding ? options_.resume_throughput_ratio : options_.min_throughput_ratio;
    if (*ratio < ratio_limit) {
      causes.push_back(
          {"device.throughput", "decoding at " + one_decimal(*ewma_) + " tokens/s, " +
                                    percent(*ratio) + " of the " + one_decimal(*baseline_) +
                                    " tokens/s baseline; throttles below " +
                                    percent(options_.min_throughput_ratio) + ", resumes at " +
                                    percent(options_.resume_throughput_ratio)});
    }
  }
  return causes;
}

void ThrottleMonitor::drop_stale_average(int64_t now_ms) {
  if (ewma_ && options_.throughput_stale_ms > 0 &&
      longer_than(last_sample_ms_, now_ms, options_.throughput_stale_ms)) {
    ewma_.reset();
  }
}

void ThrottleMonitor::update(int64_t now_ms) {
  if (!started_) {
    started_ = true;
    since_ms_ = now_ms;
  }
  drop_stale_average(now_ms);
  const bool any_active = !active_causes(state_).empty();
  const ThrottleState next = any_active ? ThrottleState::kThrottled : ThrottleState::kNormal;
  if (next != state_) {
    state_ = next;
    since_ms_ = now_ms;
    ++transitions_;
  }
  // Listed under the thresholds of the state now in force: when it just tripped, that adds the
  // causes between their trip and resume levels, which now also hold it.
  reasons_ = state_ == ThrottleState::kThrottled ? active_causes(state_) : std::vector<Reason>{};
}

}  // namespace tandem::telemetry
