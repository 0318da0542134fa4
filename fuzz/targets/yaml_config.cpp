// The gateway's YAML configuration: parse_config() must turn anything into either a config
// within every documented bound (docs/CONFIG.md) or a Result error naming the source, never an
// exception. Then the text editor `tandem calibrate --write` runs over the same file.

#include <cmath>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/config_editor.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/property_check.h"

namespace tandem::fuzz {
namespace {

constexpr const char* kSource = "fuzz.yaml";

bool within(double value, double min, double max) {
  return std::isfinite(value) && value >= min && value <= max;
}

bool one_of(const std::string& value, std::initializer_list<const char*> allowed) {
  for (const char* option : allowed) {
    if (value == option) {
      return true;
    }
  }
  return false;
}

bool lower_hex(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

void check_weights(const config::ConfidenceWeights& w) {
  for (const double weight : {w.bias, w.mean_logprob, w.min_logprob, w.mean_entropy, w.mean_margin,
                              w.log_doubt, w.log_tokens, w.complexity}) {
    FUZZ_CHECK_MSG(within(weight, -100.0, 100.0), std::to_string(weight));
  }
}

void check_server(const config::ServerConfig& s) {
  FUZZ_CHECK(s.port >= 1);
  FUZZ_CHECK(s.threads >= 1 && s.threads <= 256);
  FUZZ_CHECK(s.max_body_bytes >= 1024 && s.max_body_bytes <= (size_t{1} << 30));
  FUZZ_CHECK(s.max_header_bytes >= 1024 && s.max_header_bytes <= (size_t{1} << 20));
  FUZZ_CHECK(s.request_timeout_ms >= 100 && s.read_timeout_ms >= 100);
  for (const auto& key : s.api_keys) {
    FUZZ_CHECK(!key.name.empty());
    FUZZ_CHECK(key.key_sha256.size() == 64 && lower_hex(key.key_sha256));
    FUZZ_CHECK(key.privacy.empty() || key.privacy == "local-only");
  }
  if (s.api_keys.empty() && !s.auth.allow_anonymous) {
    FUZZ_CHECK(config::is_loopback_host(s.host));
  }
}

void check_upstreams(const config::GatewayConfig& c) {
  std::vector<std::string> names;
  for (const auto& u : c.upstreams) {
    FUZZ_CHECK(u.base_url.rfind("http://", 0) == 0 || u.base_url.rfind("https://", 0) == 0);
    FUZZ_CHECK(u.base_url.back() != '/');
    FUZZ_CHECK(!u.models.empty());
    for (const auto& [public_name, upstream_name] : u.models) {
      FUZZ_CHECK(!upstream_name.empty());
    }
    FUZZ_CHECK(within(u.prices.input_per_million, 0.0, 1e6));
    FUZZ_CHECK(within(u.prices.output_per_million, 0.0, 1e6));
    FUZZ_CHECK(u.retry.max_retries >= 0 && u.retry.max_retries <= 10);
    FUZZ_CHECK(u.circuit.failure_threshold >= 1 && u.circuit.failure_threshold <= 1000);
    FUZZ_CHECK(u.max_response_bytes >= 1024);
    for (const auto& name : names) {
      FUZZ_CHECK(name != u.name);
    }
    names.push_back(u.name);
  }
  // Something answers, and `model: tandem` has a cloud model that an upstream serves.
  FUZZ_CHECK(c.edge.enabled || !c.upstreams.empty());
  if (!c.upstreams.empty()) {
    bool served = false;
    for (const auto& u : c.upstreams) {
      served = served || u.models.count(c.routing.cloud_model) > 0;
    }
    FUZZ_CHECK(served);
  }
}

void check_routing(const config::RoutingConfig& r) {
  FUZZ_CHECK(one_of(r.pattern, {"ingress", "cascade", "speculative", "collaborate"}));
  for (const auto& p : r.privacy.patterns) {
    FUZZ_CHECK(!p.name.empty() && !p.regex.empty());
  }
  for (const auto& k : r.privacy.keywords) {
    FUZZ_CHECK(!k.name.empty() && !k.words.empty());
  }
  FUZZ_CHECK(r.ingress.threshold == -1.0 || within(r.ingress.threshold, 0.0, 1.0));
  FUZZ_CHECK(within(r.ingress.cloud_share, 0.0, 1.0));
  FUZZ_CHECK(one_of(r.ingress.below, {"edge", "cascade"}));
  FUZZ_CHECK_MSG(within(r.cascade.threshold, 0.0, 1.0), std::to_string(r.cascade.threshold));
  FUZZ_CHECK(one_of(r.cascade.streaming, {"hold", "revise"}));
  check_weights(r.cascade.weights);
  for (const auto& [kind, settings] : r.cascade.kinds) {
    FUZZ_CHECK(within(settings.threshold, 0.0, 1.0));
    check_weights(settings.weights);
  }
  FUZZ_CHECK(one_of(r.speculative.judge, {"match", "confidence", "prompt"}));
  FUZZ_CHECK(within(r.speculative.cloud_confidence, 0.0, 1.0));
  FUZZ_CHECK(within(r.collaborate.entropy_threshold, 0.0, 100.0));
  FUZZ_CHECK(within(r.review.cloud_threshold, 0.0, 1.0));
  FUZZ_CHECK(within(r.shadow.sample, 0.0, 1.0));
  FUZZ_CHECK(within(r.shadow.target_quality, 0.0, 1.0));
}

void check_operations(const config::OperationsConfig& o) {
  FUZZ_CHECK(one_of(o.audit.content, {"none", "redacted", "full"}));
  const auto& d = o.device;
  FUZZ_CHECK(within(d.max_temp_c, -50.0, 200.0) && within(d.resume_temp_c, -50.0, 200.0));
  FUZZ_CHECK(d.resume_temp_c < d.max_temp_c);
  FUZZ_CHECK(within(d.min_battery_percent, 0.0, 100.0));
  FUZZ_CHECK(within(d.min_throughput_ratio, 0.01, 1.0));
  FUZZ_CHECK(within(d.resume_throughput_ratio, 0.01, 1.0));
  FUZZ_CHECK(d.resume_throughput_ratio >= d.min_throughput_ratio);
  FUZZ_CHECK(within(d.baseline_tokens_per_s, 0.0, 1e9));
  FUZZ_CHECK(one_of(d.when_throttled, {"cloud", "none"}));
  FUZZ_CHECK(within(o.canary.min_agreement, 0.0, 1.0));
  FUZZ_CHECK(within(o.canary.max_agreement_drop, 0.0, 1.0));
  for (const auto& prompt : o.canary.prompts) {
    FUZZ_CHECK(!prompt.empty() && prompt.size() <= 4096);
  }
  for (const auto& sha : o.version.allowed_edge_sha256) {
    FUZZ_CHECK(lower_hex(sha) && sha.size() >= 12 && sha.size() <= 64);
  }
  FUZZ_CHECK(within(o.gaming.psi_threshold, 0.0, 100.0));
  FUZZ_CHECK(within(o.gaming.p_value, 0.0, 1.0));
  FUZZ_CHECK(within(o.gaming.escalation_cap, 0.0, 1.0));
}

// The calibration writer replaces a value that exists and adds one that does not; a file that
// was a valid configuration and is one after the edit must hold the written values.
void check_edits(const std::string& text, bool was_valid) {
  const std::vector<config::ConfigEdit> edits = {
      {{"routing", "cascade", "threshold"}, "0.42"},
      {{"routing", "cascade", "kinds", "math", "threshold"}, "0.25"},
  };
  const auto edited = config::apply_edits(text, edits, kSource);
  if (!edited) {
    FUZZ_CHECK(edited.error().message.rfind(kSource, 0) == 0);
    return;
  }
  const auto reparsed = config::parse_config(edited.value(), kSource);
  if (!was_valid || !reparsed) {
    return;
  }
  FUZZ_CHECK_MSG(reparsed->routing.cascade.threshold == 0.42, edited.value());
  const auto math = reparsed->routing.cascade.kinds.find("math");
  FUZZ_CHECK_MSG(math != reparsed->routing.cascade.kinds.end() && math->second.threshold == 0.25,
                 edited.value());
}

}  // namespace

void fuzz_yaml_config(const uint8_t* data, size_t size) {
  const std::string text(as_text(data, size));
  const auto parsed = config::parse_config(text, kSource);
  if (parsed) {
    check_server(parsed->server);
    FUZZ_CHECK(parsed->edge.parallel >= 1 && parsed->edge.default_max_tokens >= 1);
    check_upstreams(parsed.value());
    check_routing(parsed->routing);
    check_operations(parsed->operations);
  } else {
    FUZZ_CHECK(parsed.error().code == ErrorCode::kInvalidArgument);
    FUZZ_CHECK_MSG(parsed.error().message.rfind(kSource, 0) == 0, parsed.error().message);
  }
  check_edits(text, parsed.ok());
}

}  // namespace tandem::fuzz
