#pragma once
// The failure-mode monitors of one gateway (seed 000's "nobody warns you" list), wired to the
// configuration: device thermal/battery state and edge decode speed (throttling), per-client
// routing distributions (gaming), edge and cloud model identities with canary agreement
// (version skew), and the cloud tier's reachability (offline degradation). The monitors
// themselves are pure bookkeeping (src/telemetry); this class owns them, feeds them time and
// readings, and says what they mean for routing.
//
// Thread-safety: every method may be called from any thread (each monitor locks itself; the
// offline state has its own mutex).

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "config/config.h"
#include "telemetry/device_state.h"
#include "telemetry/gaming_monitor.h"
#include "telemetry/skew_monitor.h"
#include "telemetry/throttle_monitor.h"

namespace tandem::server {

class Monitors {
 public:
  // Reads the device state: telemetry::read_device_state on the configured sysfs root, or an
  // injected source in tests.
  using DeviceReader = std::function<telemetry::DeviceState()>;

  explicit Monitors(const config::OperationsConfig& config, DeviceReader reader = nullptr);

  const config::OperationsConfig& config() const { return config_; }
  telemetry::ThrottleMonitor& throttle() { return throttle_; }
  telemetry::SkewMonitor& skew() { return skew_; }
  // Null when operations.gaming is off.
  telemetry::GamingMonitor* gaming() { return gaming_.get(); }

  // Reads the device once and feeds the throttle monitor (the gateway calls it every
  // operations.device.interval_ms).
  void poll_device(int64_t now_ms);
  telemetry::DeviceState last_device() const;

  // Whether routing should move work off the edge: the device is throttled and the policy
  // (operations.device.when_throttled) says "cloud". `why` receives the reasons.
  bool edge_throttled(std::string* why) const;

  // The cloud tier's reachability as the router sees it; transitions are timed and logged.
  void observe_cloud(bool configured, bool online, const std::string& problem, int64_t now_ms);
  struct Offline {
    bool offline = false;
    int64_t since_ms = 0;  // when the current state began; 0 before the first observation
    std::string notice;    // what a client is told while offline
  };
  Offline offline() const;

  // The status page's device, offline, skew and gaming sections.
  nlohmann::json device_json() const;
  nlohmann::json offline_json() const;
  nlohmann::json gaming_json(int64_t now_ms) const;

  // The gaming report, computed at most once per kGamingReportTtlMs: at 10,000 clients a
  // report takes ~15 ms under the monitor's lock, which record() on the request path waits
  // for (docs/BENCHMARKS.md), so scrapes and status pages share one. Null when gaming is off.
  std::shared_ptr<const telemetry::GamingMonitor::Report> gaming_report(int64_t now_ms) const;
  static constexpr int64_t kGamingReportTtlMs = 5000;

 private:
  config::OperationsConfig config_;
  DeviceReader reader_;
  telemetry::ThrottleMonitor throttle_;
  telemetry::SkewMonitor skew_;
  std::unique_ptr<telemetry::GamingMonitor> gaming_;

  mutable std::mutex mutex_;
  telemetry::DeviceState device_;  // guarded by mutex_
  Offline offline_;                // guarded by mutex_
  bool cloud_seen_ = false;        // guarded by mutex_
  mutable std::shared_ptr<const telemetry::GamingMonitor::Report> gaming_report_;  // mutex_
  mutable int64_t gaming_report_at_ms_ = 0;                                        // mutex_
  mutable std::mutex report_mutex_;  // one report at a time; never held with mutex_
};

// The monitors' options from the configuration.
telemetry::ThrottleOptions throttle_options(const config::DeviceMonitorConfig& config);
telemetry::GamingOptions gaming_options(const config::GamingConfig& config);
telemetry::SkewOptions skew_options(const config::OperationsConfig& config);

}  // namespace tandem::server
