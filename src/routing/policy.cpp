#include "routing/policy.h"

#include <algorithm>
#include <string>

namespace tandem::routing {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

std::string describe(const std::vector<PrivacyFinding>& findings) {
  std::vector<std::string> names;
  for (const auto& f : findings) {
    if (std::find(names.begin(), names.end(), f.detector) == names.end()) {
      names.push_back(f.detector);
    }
  }
  return join(names);
}

Decision make(Tier tier, Pattern pattern, ReasonCode code, std::string detail) {
  Decision d;
  d.tier = tier;
  d.pattern = pattern;
  d.reasons.push_back({code, std::move(detail)});
  return d;
}

// The configured (or requested) pattern, once no rule has decided.
Decision by_pattern(const config::RoutingConfig& config, const RouteSignals& signals) {
  const bool requested = !signals.hints.pattern.empty();
  const std::string& name = requested ? signals.hints.pattern : config.pattern;
  const std::string source = requested ? "requested" : "configured";
  switch (parse_pattern(name).value_or(Pattern::kNone)) {
    case Pattern::kCascade:
      return make(Tier::kEdge, Pattern::kCascade, ReasonCode::kPatternCascade,
                  source + " pattern: edge first, escalate to the cloud below confidence " +
                      std::to_string(config.cascade.threshold));
    case Pattern::kSpeculative:
      return make(Tier::kEdge, Pattern::kSpeculative, ReasonCode::kPatternSpeculative,
                  source + " pattern: edge answers at once, the cloud verifies (" +
                      config.speculative.judge + ")");
    case Pattern::kCollaborate:
      return make(Tier::kEdge, Pattern::kCollaborate, ReasonCode::kPatternCollaborate,
                  source + " pattern: the cloud continues where edge entropy exceeds " +
                      std::to_string(config.collaborate.entropy_threshold));
    case Pattern::kEdge:
      return make(Tier::kEdge, Pattern::kEdge, ReasonCode::kPatternEdge, source + " pattern: edge");
    case Pattern::kCloud:
      return make(Tier::kCloud, Pattern::kCloud, ReasonCode::kPatternCloud,
                  source + " pattern: cloud");
    default:
      break;
  }
  // P2: the classifier at ingress.
  const double score = signals.complexity;
  const double threshold = config.ingress.threshold;
  if (score >= threshold) {
    return make(
        Tier::kCloud, Pattern::kCloud, ReasonCode::kIngressComplex,
        "complexity " + std::to_string(score) + " >= threshold " + std::to_string(threshold));
  }
  const bool cascade = config.ingress.below == "cascade";
  return make(Tier::kEdge, cascade ? Pattern::kCascade : Pattern::kEdge, ReasonCode::kIngressSimple,
              "complexity " + std::to_string(score) + " < threshold " + std::to_string(threshold) +
                  (cascade ? ": edge first, cloud on low confidence" : ": edge"));
}

}  // namespace

const char* tier_name(Tier tier) {
  switch (tier) {
    case Tier::kEdge:
      return "edge";
    case Tier::kCloud:
      return "cloud";
    case Tier::kHuman:
      return "human";
    case Tier::kNone:
      break;
  }
  return "none";
}

const char* pattern_name(Pattern pattern) {
  switch (pattern) {
    case Pattern::kEdge:
      return "edge";
    case Pattern::kCloud:
      return "cloud";
    case Pattern::kCascade:
      return "cascade";
    case Pattern::kSpeculative:
      return "speculative";
    case Pattern::kCollaborate:
      return "collaborate";
    case Pattern::kReview:
      return "review";
    case Pattern::kNone:
      break;
  }
  return "none";
}

std::optional<Pattern> parse_pattern(std::string_view name) {
  for (Pattern p : {Pattern::kEdge, Pattern::kCloud, Pattern::kCascade, Pattern::kSpeculative,
                    Pattern::kCollaborate, Pattern::kReview}) {
    if (name == pattern_name(p)) {
      return p;
    }
  }
  return std::nullopt;
}

std::optional<Decision> privacy_decision(const config::RoutingConfig& config,
                                         const RouteSignals& signals,
                                         const HealthSnapshot& health) {
  const RequestHints& hints = signals.hints;
  const std::string& opaque_policy = config.privacy.opaque_content;
  if (!signals.opaque.empty() && opaque_policy == "refuse") {
    Decision d = make(Tier::kNone, Pattern::kNone, ReasonCode::kPrivacyOpaqueRefused,
                      "the request carries content the privacy scan cannot read (" +
                          describe_opaque(signals.opaque) +
                          ") and routing.privacy.opaque_content is refuse");
    d.cloud_allowed = false;
    return d;
  }
  std::optional<Reason> pin;
  if (!signals.privacy.empty()) {
    pin = Reason{ReasonCode::kPrivacyDetected,
                 "the request contains " + describe_fields(signals.privacy)};
  } else if (hints.privacy_header) {
    pin = Reason{ReasonCode::kPrivacyHeader, "X-Tandem-Privacy: local-only"};
  } else if (hints.key_local_only) {
    pin = Reason{ReasonCode::kPrivacyKeyPolicy, "the API key's policy is local-only"};
  } else if (!signals.opaque.empty() && opaque_policy == "edge_only") {
    pin = Reason{ReasonCode::kPrivacyOpaqueContent,
                 "the request carries content the privacy scan cannot read (" +
                     describe_opaque(signals.opaque) +
                     "), which routing.privacy.opaque_content keeps on the device"};
  }
  if (!pin) {
    return std::nullopt;
  }
  Decision d;
  d.cloud_allowed = false;
  d.reasons.push_back(std::move(*pin));
  if (!hints.cloud_only_fields.empty()) {
    d.reasons.push_back(
        {ReasonCode::kPrivacyNeedsCloud, "the request uses " + join(hints.cloud_only_fields) +
                                             ", which only the cloud model provides, and its "
                                             "data may not leave the device"});
    return d;
  }
  if (!health.edge_available) {
    d.reasons.push_back({ReasonCode::kEdgeUnavailable,
                         "the query may not leave the device and the edge "
                         "model is unavailable: " +
                             health.edge_problem});
    return d;
  }
  d.tier = Tier::kEdge;
  d.pattern = Pattern::kEdge;
  d.reasons.push_back(
      {ReasonCode::kPrivacyEdgeOnly, "answered on the device; nothing is sent out"});
  return d;
}

Decision decide(const config::RoutingConfig& config, const RouteSignals& signals,
                const HealthSnapshot& health) {
  const RequestHints& hints = signals.hints;

  // 1. Data that must not leave the device: the edge or nothing.
  if (auto pinned = privacy_decision(config, signals, health)) {
    return std::move(*pinned);
  }

  // 2. Rules that ask for a human.
  if (config.review.enabled && (!signals.review.empty() || hints.review_header)) {
    return make(Tier::kHuman, Pattern::kReview, ReasonCode::kReviewRule,
                signals.review.empty()
                    ? "X-Tandem-Review: required"
                    : "the prompt matches review rule " + describe(signals.review));
  }

  // 3. Capability and health.
  const bool cloud_usable = health.cloud_configured && health.cloud_online;
  if (!hints.cloud_only_fields.empty() && health.cloud_configured) {
    Decision d = make(Tier::kCloud, Pattern::kCloud, ReasonCode::kCapabilityCloudOnly,
                      "the request uses " + join(hints.cloud_only_fields) +
                          ", which only the cloud model provides");
    return d;
  }
  if (!health.edge_available) {
    if (!health.cloud_configured) {
      return make(Tier::kNone, Pattern::kNone, ReasonCode::kNoTier,
                  "the edge model is unavailable (" + health.edge_problem +
                      ") and no cloud upstream is configured");
    }
    return make(Tier::kCloud, Pattern::kCloud, ReasonCode::kEdgeUnavailable,
                "the edge model is unavailable: " + health.edge_problem);
  }
  if (!health.cloud_configured) {
    return make(Tier::kEdge, Pattern::kEdge, ReasonCode::kCloudNotConfigured,
                "no cloud upstream is configured");
  }
  if (!cloud_usable) {
    Decision d = make(Tier::kEdge, Pattern::kEdge, ReasonCode::kCloudOffline,
                      "the cloud tier is offline: " + health.cloud_problem);
    d.notice = "the cloud tier is offline (" + health.cloud_problem +
               "); this answer comes from the on-device model, which is less capable";
    return d;
  }
  if (hints.latency_budget_ms && *hints.latency_budget_ms <= config.edge_latency_budget_ms) {
    return make(Tier::kEdge, Pattern::kEdge, ReasonCode::kLatencyBudget,
                "latency budget " + std::to_string(*hints.latency_budget_ms) +
                    " ms <= " + std::to_string(config.edge_latency_budget_ms) +
                    " ms: only the edge answers that fast");
  }
  if (signals.escalation_capped) {
    return make(Tier::kEdge, Pattern::kEdge, ReasonCode::kGamingCapped,
                "client '" + hints.client +
                    "' is flagged for routing gaming and has reached its escalation cap: the edge "
                    "answers");
  }
  if (health.edge_throttled) {
    return make(Tier::kCloud, Pattern::kCloud, ReasonCode::kDeviceThrottled,
                "the device is throttled (" + health.throttle_reason + "): the cloud answers");
  }

  // 4. The consistency memory: similar queries of this client keep their tier.
  if (signals.remembered && hints.pattern.empty() &&
      (signals.remembered->tier == Tier::kEdge || signals.remembered->tier == Tier::kCloud)) {
    const RememberedTier& m = *signals.remembered;
    Decision d = make(m.tier, m.tier == Tier::kEdge ? Pattern::kEdge : Pattern::kCloud,
                      ReasonCode::kConsistencyMemory,
                      std::string("a similar query of client '") + hints.client + "' went to " +
                          tier_name(m.tier) + " " + std::to_string(m.age_ms / 1000) + " s ago (" +
                          m.reason + ")");
    d.from_memory = true;
    return d;
  }

  // 5. The pattern.
  return by_pattern(config, signals);
}

config::KindCascade cascade_settings(const config::CascadeConfig& config, QueryKind kind) {
  const auto it = config.kinds.find(std::string(query_kind_name(kind)));
  if (it != config.kinds.end()) {
    return it->second;
  }
  return {config.threshold, config.weights};
}

}  // namespace tandem::routing
