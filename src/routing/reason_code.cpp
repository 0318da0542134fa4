#include "routing/reason_code.h"

#include <array>
#include <utility>

namespace tandem::routing {
namespace {

using Named = std::pair<ReasonCode, std::string_view>;

// Every code with its name, in declaration order (reason_code_name indexes it).
constexpr std::array kNames = {
    Named{ReasonCode::kPrivacyDetected, "privacy.detected"},
    Named{ReasonCode::kPrivacyHeader, "privacy.header"},
    Named{ReasonCode::kPrivacyKeyPolicy, "privacy.key_policy"},
    Named{ReasonCode::kPrivacyOpaqueContent, "privacy.opaque_content"},
    Named{ReasonCode::kPrivacyOpaqueRefused, "privacy.opaque_refused"},
    Named{ReasonCode::kPrivacyNeedsCloud, "privacy.needs_cloud"},
    Named{ReasonCode::kPrivacyEdgeOnly, "privacy.edge_only"},
    Named{ReasonCode::kReviewRule, "review.rule"},
    Named{ReasonCode::kCapabilityCloudOnly, "capability.cloud_only"},
    Named{ReasonCode::kNoTier, "no_tier"},
    Named{ReasonCode::kEdgeUnavailable, "edge.unavailable"},
    Named{ReasonCode::kCloudNotConfigured, "cloud.not_configured"},
    Named{ReasonCode::kCloudOffline, "cloud.offline"},
    Named{ReasonCode::kLatencyBudget, "latency.budget"},
    Named{ReasonCode::kGamingCapped, "gaming.capped"},
    Named{ReasonCode::kDeviceThrottled, "device.throttled"},
    Named{ReasonCode::kConsistencyMemory, "consistency.memory"},
    Named{ReasonCode::kPatternCascade, "pattern.cascade"},
    Named{ReasonCode::kPatternSpeculative, "pattern.speculative"},
    Named{ReasonCode::kPatternCollaborate, "pattern.collaborate"},
    Named{ReasonCode::kPatternEdge, "pattern.edge"},
    Named{ReasonCode::kPatternCloud, "pattern.cloud"},
    Named{ReasonCode::kIngressComplex, "ingress.complex"},
    Named{ReasonCode::kIngressSimple, "ingress.simple"},
    Named{ReasonCode::kShadowCloud, "shadow.cloud"},
    Named{ReasonCode::kModelEdge, "model.edge"},
    Named{ReasonCode::kModelCloud, "model.cloud"},
};

constexpr bool in_declaration_order() {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (static_cast<size_t>(kNames[i].first) != i) {
      return false;
    }
  }
  return true;
}
static_assert(in_declaration_order(), "kNames must list every ReasonCode in declaration order");
static_assert(kNames.back().first == ReasonCode::kModelCloud, "kNames must end with the last code");

}  // namespace

std::string_view reason_code_name(ReasonCode code) {
  const auto index = static_cast<size_t>(code);
  return index < kNames.size() ? kNames[index].second : "unknown";
}

std::optional<ReasonCode> parse_reason_code(std::string_view name) {
  for (const auto& [code, code_name] : kNames) {
    if (code_name == name) {
      return code;
    }
  }
  return std::nullopt;
}

bool is_preference(ReasonCode code) {
  switch (code) {
    case ReasonCode::kConsistencyMemory:
    case ReasonCode::kPatternCascade:
    case ReasonCode::kPatternSpeculative:
    case ReasonCode::kPatternCollaborate:
    case ReasonCode::kPatternEdge:
    case ReasonCode::kPatternCloud:
    case ReasonCode::kIngressComplex:
    case ReasonCode::kIngressSimple:
      return true;
    case ReasonCode::kPrivacyDetected:
    case ReasonCode::kPrivacyHeader:
    case ReasonCode::kPrivacyKeyPolicy:
    case ReasonCode::kPrivacyOpaqueContent:
    case ReasonCode::kPrivacyOpaqueRefused:
    case ReasonCode::kPrivacyNeedsCloud:
    case ReasonCode::kPrivacyEdgeOnly:
    case ReasonCode::kReviewRule:
    case ReasonCode::kCapabilityCloudOnly:
    case ReasonCode::kNoTier:
    case ReasonCode::kEdgeUnavailable:
    case ReasonCode::kCloudNotConfigured:
    case ReasonCode::kCloudOffline:
    case ReasonCode::kLatencyBudget:
    case ReasonCode::kGamingCapped:
    case ReasonCode::kDeviceThrottled:
    case ReasonCode::kShadowCloud:
    case ReasonCode::kModelEdge:
    case ReasonCode::kModelCloud:
      break;
  }
  return false;
}

}  // namespace tandem::routing
