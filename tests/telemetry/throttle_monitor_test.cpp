// ThrottleMonitor with injected time and device readings.

#include "telemetry/throttle_monitor.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::telemetry {
namespace {

constexpr uint32_t kTokens = 64;  // comfortably above min_tokens

DeviceState with_temp(double temp_c) {
  DeviceState state;
  state.zones.push_back({"thermal_zone0", "x86_pkg_temp", temp_c});
  return state;
}

DeviceState battery(const std::string& status, double percent, bool mains_online) {
  DeviceState state;
  state.supplies.push_back({"AC", "Mains", mains_online, "", std::nullopt, ""});
  state.supplies.push_back({"BAT0", "Battery", std::nullopt, status, percent, "System"});
  return state;
}

DeviceState on_battery(double percent) {
  return battery("Discharging", percent, false);
}
DeviceState plugged_in(double percent) {
  return battery("Charging", percent, true);
}

std::vector<std::string> codes(const ThrottleMonitor::Snapshot& snap) {
  std::vector<std::string> out;
  for (const auto& reason : snap.reasons) {
    out.push_back(reason.code);
  }
  return out;
}

void decode(ThrottleMonitor& monitor, double tokens_per_s, int64_t now_ms) {
  monitor.record_decode(tokens_per_s, kTokens, 1, now_ms);
}

TEST(ThrottleStateTest, Names) {
  EXPECT_STREQ(throttle_state_name(ThrottleState::kNormal), "normal");
  EXPECT_STREQ(throttle_state_name(ThrottleState::kThrottled), "throttled");
}

TEST(ThrottleMonitorTest, StartsNormalWithNothingKnown) {
  const ThrottleMonitor monitor(ThrottleOptions{});
  const auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kNormal);
  EXPECT_TRUE(snap.reasons.empty());
  EXPECT_EQ(snap.since_ms, 0);
  EXPECT_EQ(snap.transitions, 0u);
  EXPECT_FALSE(snap.ewma_tokens_per_s.has_value());
  EXPECT_FALSE(snap.baseline_tokens_per_s.has_value());
  EXPECT_FALSE(snap.throughput_ratio.has_value());
  EXPECT_FALSE(snap.max_temp_c.has_value());
  EXPECT_FALSE(snap.on_battery);
  EXPECT_FALSE(snap.battery_percent.has_value());
  EXPECT_EQ(snap.samples, 0u);
}

TEST(ThrottleMonitorTest, ThermalTripWithHysteresis) {
  ThrottleMonitor monitor(ThrottleOptions{});  // trips at 85, resumes at or below 80

  monitor.record_device(with_temp(84), 1000);
  auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kNormal);
  EXPECT_EQ(snap.since_ms, 1000);  // first observation
  EXPECT_EQ(snap.max_temp_c, 84.0);

  monitor.record_device(with_temp(86), 2000);
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  EXPECT_EQ(snap.since_ms, 2000);
  EXPECT_EQ(snap.transitions, 1u);
  ASSERT_EQ(codes(snap), std::vector<std::string>{"device.thermal"});
  EXPECT_EQ(snap.reasons[0].detail,
            "thermal_zone0 (x86_pkg_temp) at 86 C; throttles at 85 C, resumes at or below 80 C");

  monitor.record_device(with_temp(82), 3000);
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);  // above the resume level
  EXPECT_EQ(snap.since_ms, 2000);
  EXPECT_EQ(codes(snap), std::vector<std::string>{"device.thermal"});

  monitor.record_device(with_temp(79), 4000);
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kNormal);
  EXPECT_EQ(snap.since_ms, 4000);
  EXPECT_EQ(snap.transitions, 2u);
  EXPECT_TRUE(snap.reasons.empty());
}

TEST(ThrottleMonitorTest, ThermalLimitsAreInclusive) {
  ThrottleMonitor monitor(ThrottleOptions{});
  monitor.record_device(with_temp(85), 1);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kThrottled);
  monitor.record_device(with_temp(80), 2);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kNormal);
}

TEST(ThrottleMonitorTest, ReadingWithoutTemperaturesClearsTheThermalCause) {
  ThrottleMonitor monitor(ThrottleOptions{});
  monitor.record_device(with_temp(95), 1);
  monitor.record_device(DeviceState{}, 2);
  const auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kNormal);
  EXPECT_FALSE(snap.max_temp_c.has_value());
}

TEST(ThrottleMonitorTest, LowBatteryThrottlesEvenWithTheBatteryRuleOff) {
  ThrottleMonitor monitor(ThrottleOptions{});  // on_battery_throttles = false, min 15%

  monitor.record_device(on_battery(50), 1);
  auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kNormal);
  EXPECT_TRUE(snap.on_battery);
  EXPECT_EQ(snap.battery_percent, 50.0);

  monitor.record_device(on_battery(15), 2);
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  ASSERT_EQ(codes(snap), std::vector<std::string>{"device.battery"});
  EXPECT_EQ(snap.reasons[0].detail,
            "on battery at 15%; throttles at or below 15%, resumes above 20% or on external "
            "power");

  monitor.record_device(on_battery(20), 3);  // not yet above min + 5
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kThrottled);
  monitor.record_device(on_battery(21), 4);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kNormal);

  monitor.record_device(on_battery(10), 5);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kThrottled);
  monitor.record_device(plugged_in(10), 6);  // external power ends it at once
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kNormal);
  EXPECT_FALSE(snap.on_battery);
  EXPECT_EQ(snap.transitions, 4u);
}

TEST(ThrottleMonitorTest, BatteryRuleOnThrottlesWheneverOnBattery) {
  ThrottleOptions options;
  options.on_battery_throttles = true;
  ThrottleMonitor monitor(options);

  monitor.record_device(plugged_in(90), 1);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kNormal);

  monitor.record_device(on_battery(90), 2);
  auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  ASSERT_EQ(codes(snap), std::vector<std::string>{"device.battery"});
  EXPECT_EQ(snap.reasons[0].detail, "on battery (on_battery_throttles); resumes on external power");

  monitor.record_device(plugged_in(90), 3);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kNormal);
}

TEST(ThrottleMonitorTest, LearnsTheBaselineAsTheMedianThenTripsOnASlowdown) {
  ThrottleMonitor monitor(ThrottleOptions{});  // learn from 5, alpha 0.2, trip below 0.6
  int64_t now = 0;
  for (double speed : {90.0, 130.0, 100.0, 95.0}) {
    decode(monitor, speed, now += 1000);
    EXPECT_FALSE(monitor.snapshot().baseline_tokens_per_s.has_value());
  }
  decode(monitor, 110.0, now += 1000);
  auto snap = monitor.snapshot();
  ASSERT_EQ(snap.baseline_tokens_per_s, 100.0);  // median of 90 95 100 110 130
  EXPECT_EQ(snap.samples, 5u);
  // The average ran over the learning samples too: 90, 98, 98.4, 97.72, 100.176.
  EXPECT_NEAR(*snap.ewma_tokens_per_s, 100.176, 1e-9);
  EXPECT_EQ(snap.state, ThrottleState::kNormal);

  // The device slows to half. After n samples of 50 the average is 50 + 50.176 * 0.8^n, below
  // the 60 (0.6 x 100) trip level once 0.8^n < 10 / 50.176 = 0.1993, i.e. n > 7.23: the 8th.
  constexpr int kSamplesToTrip = 8;
  for (int n = 1; n < kSamplesToTrip; ++n) {
    decode(monitor, 50.0, now += 1000);
    EXPECT_EQ(monitor.snapshot().state, ThrottleState::kNormal) << "after " << n;
  }
  decode(monitor, 50.0, now += 1000);
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  EXPECT_EQ(snap.since_ms, now);
  EXPECT_NEAR(*snap.ewma_tokens_per_s, 50.0 + 50.176 * std::pow(0.8, 8), 1e-9);  // 58.418
  EXPECT_NEAR(*snap.throughput_ratio, 0.58418, 1e-5);
  ASSERT_EQ(codes(snap), std::vector<std::string>{"device.throughput"});
  EXPECT_EQ(snap.reasons[0].detail,
            "decoding at 58.4 tokens/s, 58% of the 100 tokens/s baseline; throttles below 60%, "
            "resumes at 75%");

  // Back to full speed: from 58.418 the average is 100 - 41.582 * 0.8^m, at or above the 75
  // resume level once 0.8^m <= 25 / 41.582 = 0.601, i.e. m >= 2.28: the 3rd sample. The 2nd
  // (72.3) is above the trip level but not yet at the resume level.
  decode(monitor, 100.0, now += 1000);
  decode(monitor, 100.0, now += 1000);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kThrottled);
  decode(monitor, 100.0, now += 1000);
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kNormal);
  EXPECT_EQ(snap.since_ms, now);
  EXPECT_EQ(snap.transitions, 2u);
  EXPECT_EQ(snap.baseline_tokens_per_s, 100.0);  // learned once, not relearned
}

TEST(ThrottleMonitorTest, EvenBaselineCountTakesTheMeanOfTheMiddleTwo) {
  ThrottleOptions options;
  options.baseline_generations = 4;
  ThrottleMonitor monitor(options);
  for (double speed : {40.0, 10.0, 30.0, 20.0}) {
    decode(monitor, speed, 1);
  }
  EXPECT_EQ(monitor.snapshot().baseline_tokens_per_s, 25.0);
}

TEST(ThrottleMonitorTest, IgnoresShortBatchedAndInvalidSamples) {
  ThrottleOptions options;
  options.baseline_generations = 1;
  ThrottleMonitor monitor(options);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();

  monitor.record_decode(10.0, 15, 1, 1);       // shorter than min_tokens (16)
  monitor.record_decode(10.0, kTokens, 2, 2);  // batched: slower per sequence by design
  monitor.record_decode(10.0, kTokens, 0, 3);  // not a possible count
  monitor.record_decode(nan, kTokens, 1, 4);
  monitor.record_decode(inf, kTokens, 1, 5);
  monitor.record_decode(-5.0, kTokens, 1, 6);
  monitor.record_decode(0.0, kTokens, 1, 7);
  monitor.record_decode(2e6, kTokens, 1, 8);  // above kMaxPlausibleTokensPerS
  auto snap = monitor.snapshot();
  EXPECT_EQ(snap.samples, 0u);
  EXPECT_EQ(snap.ignored_samples, 8u);
  EXPECT_FALSE(snap.ewma_tokens_per_s.has_value());
  EXPECT_FALSE(snap.baseline_tokens_per_s.has_value());

  monitor.record_decode(42.0, 16, 1, 9);  // exactly min_tokens qualifies
  snap = monitor.snapshot();
  EXPECT_EQ(snap.samples, 1u);
  EXPECT_EQ(snap.baseline_tokens_per_s, 42.0);
  EXPECT_EQ(snap.ewma_tokens_per_s, 42.0);
}

TEST(ThrottleMonitorTest, ConfiguredBaselineIsUsedFromTheStart) {
  ThrottleOptions options;
  options.baseline_tokens_per_s = 100.0;
  ThrottleMonitor monitor(options);
  EXPECT_EQ(monitor.snapshot().baseline_tokens_per_s, 100.0);

  decode(monitor, 80.0, 1);  // the average starts at the first sample
  auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kNormal);
  EXPECT_NEAR(*snap.throughput_ratio, 0.8, 1e-12);

  // 0.2 x 20 + 0.8 x 80 = 68, then 58.4: below 60.
  decode(monitor, 20.0, 2);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kNormal);
  decode(monitor, 20.0, 3);
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  EXPECT_NEAR(*snap.ewma_tokens_per_s, 58.4, 1e-9);
  EXPECT_EQ(snap.baseline_tokens_per_s, 100.0);
}

TEST(ThrottleMonitorTest, ReasonsListEveryActiveCauseInOrder) {
  ThrottleOptions options;
  options.baseline_tokens_per_s = 100.0;
  ThrottleMonitor monitor(options);
  decode(monitor, 50.0, 1);
  DeviceState device = on_battery(5);
  device.zones.push_back({"thermal_zone0", "", 90.0});
  monitor.record_device(device, 2);

  const auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  EXPECT_EQ(snap.transitions, 1u);  // the first sample already tripped it; still one episode
  EXPECT_EQ(codes(snap),
            (std::vector<std::string>{"device.thermal", "device.battery", "device.throughput"}));
  EXPECT_EQ(snap.reasons[0].detail.rfind("thermal_zone0 at 90 C", 0), 0u) << snap.reasons[0].detail;
}

TEST(ThrottleMonitorTest, WhileThrottledACauseBetweenItsLevelsHoldsIt) {
  ThrottleOptions options;
  options.baseline_tokens_per_s = 100.0;
  ThrottleMonitor monitor(options);
  decode(monitor, 70.0, 1);  // ratio 0.7: above the trip level, below the resume level
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kNormal);

  monitor.record_device(with_temp(90), 2);
  auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  EXPECT_EQ(codes(snap), (std::vector<std::string>{"device.thermal", "device.throughput"}));

  // Cooled down, but the device still decodes at 70%: it has not recovered.
  monitor.record_device(with_temp(70), 3);
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  EXPECT_EQ(codes(snap), std::vector<std::string>{"device.throughput"});

  decode(monitor, 100.0, 4);  // 0.2 x 100 + 0.8 x 70 = 76: at or above 75
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kNormal);
}

TEST(ThrottleMonitorTest, StaleAverageIsDroppedSoAThroughputThrottleCanEnd) {
  ThrottleOptions options;
  options.baseline_tokens_per_s = 100.0;
  options.throughput_stale_ms = 60'000;
  ThrottleMonitor monitor(options);
  decode(monitor, 40.0, 1'000);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kThrottled);

  // Work went to the cloud; only device readings arrive.
  monitor.record_device(DeviceState{}, 61'000);  // exactly the limit: kept
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kThrottled);
  monitor.record_device(DeviceState{}, 61'001);
  auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kNormal);
  EXPECT_FALSE(snap.ewma_tokens_per_s.has_value());
  EXPECT_FALSE(snap.throughput_ratio.has_value());

  // The next edge generation starts a fresh average and is judged on its own.
  decode(monitor, 40.0, 62'000);
  snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  EXPECT_EQ(snap.ewma_tokens_per_s, 40.0);
}

TEST(ThrottleMonitorTest, StaleLimitZeroKeepsTheAverage) {
  ThrottleOptions options;
  options.baseline_tokens_per_s = 100.0;
  options.throughput_stale_ms = 0;
  ThrottleMonitor monitor(options);
  decode(monitor, 40.0, 0);
  monitor.record_device(DeviceState{}, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kThrottled);
}

TEST(ThrottleMonitorTest, ExtremeAndBackwardTimesAreHarmless) {
  ThrottleOptions options;
  options.baseline_tokens_per_s = 100.0;
  ThrottleMonitor monitor(options);
  decode(monitor, 40.0, std::numeric_limits<int64_t>::min());
  monitor.record_device(with_temp(20), std::numeric_limits<int64_t>::max());  // stale: dropped
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kNormal);
  decode(monitor, 40.0, 5'000);
  monitor.record_device(with_temp(20), -5'000);  // clock went backwards: not stale
  const auto snap = monitor.snapshot();
  EXPECT_EQ(snap.state, ThrottleState::kThrottled);
  EXPECT_EQ(snap.since_ms, 5'000);
}

TEST(ThrottleMonitorTest, InvalidOptionsFallBackToDefaults) {
  ThrottleOptions options;
  options.ewma_alpha = std::numeric_limits<double>::quiet_NaN();
  options.baseline_generations = 0;
  options.resume_temp_c = 99.0;  // above max_temp_c: both reset to 85 / 80
  ThrottleMonitor monitor(options);

  for (int i = 0; i < 5; ++i) {
    decode(monitor, 100.0, i);
  }
  auto snap = monitor.snapshot();
  EXPECT_EQ(snap.baseline_tokens_per_s, 100.0);  // learned from the default 5
  decode(monitor, 50.0, 6);
  EXPECT_NEAR(*monitor.snapshot().ewma_tokens_per_s, 90.0, 1e-9);  // default alpha 0.2

  monitor.record_device(with_temp(86), 7);
  monitor.record_device(with_temp(82), 8);
  EXPECT_EQ(monitor.snapshot().state, ThrottleState::kThrottled);
}

TEST(ThrottleMonitorTest, ConcurrentRecordersAndReaders) {
  ThrottleMonitor monitor(ThrottleOptions{});
  constexpr int kPerThread = 1000;
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&monitor, t] {
      for (int i = 0; i < kPerThread; ++i) {
        if (t % 2 == 0) {
          decode(monitor, 100.0, i);
        } else {
          monitor.record_device(with_temp(50), i);
          (void)monitor.snapshot();
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(monitor.snapshot().samples, 2u * kPerThread);
}

// Options that validate() must refuse, with the message it gives.
struct InvalidOptionsCase {
  const char* name;
  void (*edit)(ThrottleOptions&);
  const char* message;
};

const InvalidOptionsCase kInvalidOptions[] = {
    {"resume_temp_above_max", [](ThrottleOptions& o) { o.resume_temp_c = 90; },
     "resume_temp_c (90) must be below max_temp_c (85)"},
    {"resume_temp_equal_max", [](ThrottleOptions& o) { o.resume_temp_c = 85; },
     "resume_temp_c (85) must be below max_temp_c (85)"},
    {"max_temp_nan", [](ThrottleOptions& o) { o.max_temp_c = std::nan(""); },
     "max_temp_c (nan) must be a finite temperature"},
    {"battery_negative", [](ThrottleOptions& o) { o.min_battery_percent = -1; },
     "min_battery_percent (-1) must be within 0..100"},
    {"battery_over_100", [](ThrottleOptions& o) { o.min_battery_percent = 101; },
     "min_battery_percent (101) must be within 0..100"},
    {"min_ratio_zero", [](ThrottleOptions& o) { o.min_throughput_ratio = 0; },
     "min_throughput_ratio (0) must be in (0, 1]"},
    {"min_ratio_above_one", [](ThrottleOptions& o) { o.min_throughput_ratio = 1.5; },
     "min_throughput_ratio (1.5) must be in (0, 1]"},
    {"resume_ratio_below_min", [](ThrottleOptions& o) { o.resume_throughput_ratio = 0.5; },
     "resume_throughput_ratio (0.5) must be in (0, 1] and not below min_throughput_ratio (0.6)"},
    {"resume_ratio_above_one", [](ThrottleOptions& o) { o.resume_throughput_ratio = 1.01; },
     "resume_throughput_ratio (1.01) must be in (0, 1] and not below min_throughput_ratio (0.6)"},
    {"alpha_zero", [](ThrottleOptions& o) { o.ewma_alpha = 0; },
     "ewma_alpha (0) must be in (0, 1]"},
    {"alpha_above_one", [](ThrottleOptions& o) { o.ewma_alpha = 1.2; },
     "ewma_alpha (1.2) must be in (0, 1]"},
    {"alpha_infinite", [](ThrottleOptions& o) { o.ewma_alpha = INFINITY; },
     "ewma_alpha (inf) must be in (0, 1]"},
    {"baseline_negative", [](ThrottleOptions& o) { o.baseline_tokens_per_s = -3; },
     "baseline_tokens_per_s (-3) must be within 0..1000000 (0 learns it)"},
    {"baseline_generations_zero", [](ThrottleOptions& o) { o.baseline_generations = 0; },
     "baseline_generations (0) must be within 1..1000"},
    {"baseline_generations_huge", [](ThrottleOptions& o) { o.baseline_generations = 4000000000u; },
     "baseline_generations (4000000000) must be within 1..1000"},
    {"stale_negative", [](ThrottleOptions& o) { o.throughput_stale_ms = -1; },
     "throughput_stale_ms (-1) must not be negative (0 never drops the average)"},
};

TEST(ThrottleOptionsTest, DefaultsAreValid) {
  EXPECT_EQ(ThrottleOptions{}.validate(), "");
}

TEST(ThrottleOptionsTest, EdgeValuesAreValid) {
  ThrottleOptions options;
  options.min_battery_percent = 0;
  options.min_throughput_ratio = 1;
  options.resume_throughput_ratio = 1;
  options.ewma_alpha = 1;
  options.baseline_generations = kMaxBaselineGenerations;
  options.throughput_stale_ms = 0;
  EXPECT_EQ(options.validate(), "");
}

TEST(ThrottleOptionsTest, InvalidFieldsAreNamed) {
  for (const InvalidOptionsCase& c : kInvalidOptions) {
    ThrottleOptions options;
    c.edit(options);
    EXPECT_EQ(options.validate(), c.message) << c.name;
  }
}

TEST(ThrottleOptionsTest, FirstProblemIsReported) {
  ThrottleOptions options;
  options.ewma_alpha = 0;
  options.resume_temp_c = 100;
  EXPECT_EQ(options.validate(), "resume_temp_c (100) must be below max_temp_c (85)");
}

}  // namespace
}  // namespace tandem::telemetry
