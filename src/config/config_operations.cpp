// The `store:` and `operations:` sections: the state shared between replicas, and what the
// gateway watches and records about itself (metrics, audit, the device, canaries, versions,
// gaming of the router).

#include <string>

#include "config/config_section.h"

namespace tandem::config::detail {
namespace {

void parse_audit(Section s, AuditConfig& out) {
  s.get("enabled", out.enabled);
  s.get("content", out.content);
  one_of(s, "content", out.content, {"none", "redacted", "full"});
  s.get<uint64_t>("max_rows", out.max_rows, 1, uint64_t{1} << 40);
  s.get("required", out.required);
  s.finish();
}

void parse_device(Section s, DeviceMonitorConfig& out) {
  s.get("enabled", out.enabled);
  s.get("sysfs_root", out.sysfs_root);
  s.get<uint32_t>("interval_ms", out.interval_ms, 100, 3600000);
  s.get("max_temp_c", out.max_temp_c, -50.0, 200.0);
  s.get("resume_temp_c", out.resume_temp_c, -50.0, 200.0);
  if (out.resume_temp_c >= out.max_temp_c) {
    s.fail(s.node()["resume_temp_c"], "operations.device.resume_temp_c",
           "must be below max_temp_c (" + std::to_string(out.max_temp_c) + ")");
  }
  s.get("on_battery_throttles", out.on_battery_throttles);
  s.get("min_battery_percent", out.min_battery_percent, 0.0, 100.0);
  s.get("min_throughput_ratio", out.min_throughput_ratio, 0.01, 1.0);
  s.get("resume_throughput_ratio", out.resume_throughput_ratio, 0.01, 1.0);
  if (out.resume_throughput_ratio < out.min_throughput_ratio) {
    s.fail(
        s.node()["resume_throughput_ratio"], "operations.device.resume_throughput_ratio",
        "must be at least min_throughput_ratio (" + std::to_string(out.min_throughput_ratio) + ")");
  }
  s.get("baseline_tokens_per_s", out.baseline_tokens_per_s, 0.0, 1e9);
  s.get("when_throttled", out.when_throttled);
  one_of(s, "when_throttled", out.when_throttled, {"cloud", "none"});
  s.finish();
}

void parse_canary(Section s, CanaryConfig& out) {
  s.get("enabled", out.enabled);
  s.get<uint32_t>("interval_s", out.interval_s, 1, 7 * 24 * 3600);
  s.get("prompts", out.prompts);
  for (const auto& prompt : out.prompts) {
    if (prompt.empty() || prompt.size() > 4096) {
      s.fail(s.node()["prompts"], "operations.canary.prompts",
             "each prompt must be 1 to 4096 bytes");
    }
  }
  s.get<uint32_t>("max_tokens", out.max_tokens, 1, 4096);
  s.get("min_agreement", out.min_agreement, 0.0, 1.0);
  s.get("max_agreement_drop", out.max_agreement_drop, 0.0, 1.0);
  s.finish();
}

void parse_version(Section s, VersionPolicy& out) {
  s.get("min_edge_version", out.min_edge_version);
  s.get("allowed_edge_sha256", out.allowed_edge_sha256);
  for (const auto& sha : out.allowed_edge_sha256) {
    const bool hex = !sha.empty() && sha.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex || sha.size() < 12 || sha.size() > 64) {
      s.fail(s.node()["allowed_edge_sha256"], "operations.version.allowed_edge_sha256",
             "'" + sha + "' is not 12 to 64 lower-case hex digits of a sha256");
    }
  }
  s.finish();
}

void parse_gaming(Section s, GamingConfig& out) {
  s.get("enabled", out.enabled);
  s.get<uint32_t>("window_s", out.window_s, 1, 30u * 24 * 3600);
  s.get<uint32_t>("min_requests", out.min_requests, 1, 1u << 30);
  s.get<uint32_t>("min_population", out.min_population, 1, 1u << 30);
  s.get("psi_threshold", out.psi_threshold, 0.0, 100.0);
  s.get("p_value", out.p_value, 0.0, 1.0);
  s.get("escalation_cap", out.escalation_cap, 0.0, 1.0);
  s.finish();
}

}  // namespace

void parse_store(Section s, StoreConfig& out) {
  s.get("replica", out.replica);
  Section redis = s.section("redis");
  redis.get("url", out.redis.url);
  if (!out.redis.url.empty() && out.redis.url.rfind("redis://", 0) != 0 &&
      out.redis.url.rfind("unix://", 0) != 0) {
    redis.fail(redis.node()["url"], "store.redis.url",
               "must start with redis:// or unix://, not '" + out.redis.url + "'");
  }
  if (out.redis.url.find('@') != std::string::npos) {
    redis.fail(redis.node()["url"], "store.redis.url",
               "secrets are not written in the config; use password_env or password_file");
  }
  out.redis.password = read_secret(redis, "password", false);
  redis.get("prefix", out.redis.prefix);
  redis.get<uint32_t>("connect_timeout_ms", out.redis.connect_timeout_ms, 1, 600000);
  redis.get<uint32_t>("command_timeout_ms", out.redis.command_timeout_ms, 1, 600000);
  redis.finish();
  s.finish();
}

void parse_operations(Section s, OperationsConfig& out) {
  s.get("metrics", out.metrics);
  s.get("dashboard", out.dashboard);
  s.get("log_prompts", out.log_prompts);
  parse_audit(s.section("audit"), out.audit);
  parse_device(s.section("device"), out.device);
  parse_canary(s.section("canary"), out.canary);
  parse_version(s.section("version"), out.version);
  parse_gaming(s.section("gaming"), out.gaming);
  s.finish();
}

}  // namespace tandem::config::detail
