#include "server/monitors.h"

#include "common/log.h"
#include "common/time_text.h"

namespace tandem::server {
namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json time_or_null(int64_t unix_ms) {
  return unix_ms > 0 ? json(utc_iso8601(unix_ms)) : json(nullptr);
}

}  // namespace

telemetry::ThrottleOptions throttle_options(const config::DeviceMonitorConfig& c) {
  telemetry::ThrottleOptions o;
  o.max_temp_c = c.max_temp_c;
  o.resume_temp_c = c.resume_temp_c;
  o.on_battery_throttles = c.on_battery_throttles;
  o.min_battery_percent = c.min_battery_percent;
  o.min_throughput_ratio = c.min_throughput_ratio;
  o.resume_throughput_ratio = c.resume_throughput_ratio;
  o.baseline_tokens_per_s = c.baseline_tokens_per_s;
  return o;
}

telemetry::GamingOptions gaming_options(const config::GamingConfig& c) {
  telemetry::GamingOptions o;
  o.window_ms = static_cast<int64_t>(c.window_s) * 1000;
  o.min_requests = c.min_requests;
  o.min_population = c.min_population;
  o.psi_threshold = c.psi_threshold;
  o.p_value = c.p_value;
  o.escalation_cap = c.escalation_cap;
  // Bounds the monitor at 10,000 clients x 1,000 requests x 16 bytes (~160 MB) worst case; a
  // client's newest thousand requests are plenty to judge it.
  o.max_requests_per_client = 1000;
  return o;
}

telemetry::SkewOptions skew_options(const config::OperationsConfig& c) {
  telemetry::SkewOptions o;
  o.min_edge_version = c.version.min_edge_version;
  o.allowed_edge_sha256 = c.version.allowed_edge_sha256;
  o.min_agreement = c.canary.min_agreement;
  o.max_agreement_drop = c.canary.max_agreement_drop;
  return o;
}

Monitors::Monitors(const config::OperationsConfig& config, DeviceReader reader)
    : config_(config),
      reader_(std::move(reader)),
      throttle_(throttle_options(config.device)),
      skew_(skew_options(config)) {
  if (!reader_) {
    reader_ = [root = config_.device.sysfs_root] { return telemetry::read_device_state(root); };
  }
  if (config_.gaming.enabled) {
    gaming_ = std::make_unique<telemetry::GamingMonitor>(gaming_options(config_.gaming));
  }
}

void Monitors::poll_device(int64_t now_ms) {
  if (!config_.device.enabled) {
    return;
  }
  telemetry::DeviceState state = reader_();
  const auto before = throttle_.snapshot().state;
  throttle_.record_device(state, now_ms);
  const auto after = throttle_.snapshot();
  if (after.state != before) {
    std::string why;
    for (const auto& r : after.reasons) {
      why += (why.empty() ? "" : "; ") + r.detail;
    }
    log_event(LogLevel::kWarn, "device", "throttle_state",
              {{"state", telemetry::throttle_state_name(after.state)}, {"reasons", why}});
  }
  std::lock_guard lock(mutex_);
  device_ = std::move(state);
}

telemetry::DeviceState Monitors::last_device() const {
  std::lock_guard lock(mutex_);
  return device_;
}

bool Monitors::edge_throttled(std::string* why) const {
  if (!config_.device.enabled || config_.device.when_throttled != "cloud") {
    return false;
  }
  const auto snapshot = throttle_.snapshot();
  if (snapshot.state != telemetry::ThrottleState::kThrottled) {
    return false;
  }
  if (why != nullptr) {
    why->clear();
    for (const auto& r : snapshot.reasons) {
      *why += (why->empty() ? "" : "; ") + r.detail;
    }
  }
  return true;
}

void Monitors::observe_cloud(bool configured, bool online, const std::string& problem,
                             int64_t now_ms) {
  const bool offline = configured && !online;
  std::lock_guard lock(mutex_);
  if (cloud_seen_ && offline == offline_.offline) {
    if (offline) {
      offline_.notice = "the cloud tier is offline (" + problem +
                        "); answers come from the on-device model, which is less capable";
    }
    return;
  }
  const bool changed = cloud_seen_;
  cloud_seen_ = true;
  offline_.offline = offline;
  offline_.since_ms = now_ms;
  offline_.notice = offline ? "the cloud tier is offline (" + problem +
                                  "); answers come from the on-device model, which is less capable"
                            : "";
  if (changed) {
    log_event(offline ? LogLevel::kWarn : LogLevel::kInfo, "cloud", offline ? "offline" : "online",
              {{"message", offline ? problem : "reachable again"}});
  }
}

Monitors::Offline Monitors::offline() const {
  std::lock_guard lock(mutex_);
  return offline_;
}

json Monitors::offline_json() const {
  const Offline o = offline();
  return {{"offline", o.offline},
          {"since", time_or_null(o.since_ms)},
          {"notice", o.notice.empty() ? json(nullptr) : json(o.notice)}};
}

json Monitors::device_json() const {
  const auto s = throttle_.snapshot();
  const telemetry::DeviceState device = last_device();
  json zones = json::array();
  for (const auto& z : device.zones) {
    zones.push_back({{"name", z.name}, {"type", z.type}, {"temp_c", z.temp_c}});
  }
  json reasons = json::array();
  for (const auto& r : s.reasons) {
    reasons.push_back({{"code", r.code}, {"detail", r.detail}});
  }
  return {{"enabled", config_.device.enabled},
          {"state", telemetry::throttle_state_name(s.state)},
          {"since", time_or_null(s.since_ms)},
          {"transitions", s.transitions},
          {"reasons", std::move(reasons)},
          {"max_temp_c", optional_number(s.max_temp_c)},
          {"zones", std::move(zones)},
          {"on_battery", s.on_battery},
          {"battery_percent", optional_number(s.battery_percent)},
          {"decode_tokens_per_s",
           {{"ewma", optional_number(s.ewma_tokens_per_s)},
            {"baseline", optional_number(s.baseline_tokens_per_s)},
            {"ratio", optional_number(s.throughput_ratio)},
            {"samples", s.samples}}},
          {"policy", config_.device.when_throttled},
          {"problems", device.problems}};
}

std::shared_ptr<const telemetry::GamingMonitor::Report> Monitors::gaming_report(
    int64_t now_ms) const {
  if (!gaming_) {
    return nullptr;
  }
  const auto fresh = [&]() -> std::shared_ptr<const telemetry::GamingMonitor::Report> {
    std::lock_guard lock(mutex_);
    if (gaming_report_ && now_ms - gaming_report_at_ms_ < kGamingReportTtlMs &&
        now_ms >= gaming_report_at_ms_) {
      return gaming_report_;
    }
    return nullptr;
  };
  if (auto report = fresh()) {
    return report;
  }
  // One thread computes; the others wait for it instead of computing the same report again.
  std::lock_guard computing(report_mutex_);
  if (auto report = fresh()) {
    return report;
  }
  auto report = std::make_shared<const telemetry::GamingMonitor::Report>(gaming_->report(now_ms));
  std::lock_guard lock(mutex_);
  gaming_report_ = report;
  gaming_report_at_ms_ = now_ms;
  return report;
}

json Monitors::gaming_json(int64_t now_ms) const {
  if (!gaming_) {
    return {{"enabled", false}, {"flagged", json::array()}};
  }
  const auto cached = gaming_report(now_ms);
  const auto& report = *cached;
  json flagged = json::array();
  for (const auto& c : report.flagged) {
    flagged.push_back({{"client", c.client},
                       {"requests", c.requests},
                       {"escalations", c.escalations},
                       {"escalation_share", c.escalation_share},
                       {"rest_escalation_share", c.rest_escalation_share},
                       {"chi_square", c.chi_square},
                       {"p_value", c.p_value},
                       {"psi", c.psi},
                       {"capped", c.capped},
                       {"reasons", c.reasons}});
  }
  return {{"enabled", true},
          {"window_s", report.window_ms / 1000},
          {"escalation_cap", config_.gaming.escalation_cap},
          {"clients_tracked", report.clients_tracked},
          {"population_requests", report.population_requests},
          {"population_escalation_share", report.population_escalation_share},
          {"flagged", std::move(flagged)}};
}

}  // namespace tandem::server
