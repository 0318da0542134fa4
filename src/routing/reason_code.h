#pragma once
// Why a request went where it did, as a closed set: the policy decides with these, the gateway
// branches on them (what a refusal tells the client, which decisions are preferences worth
// remembering or shadowing), and only the layers that write decisions out (JSON, logs, traces)
// turn them into their stable names ("privacy.detected", "ingress.simple", ...). A trace stores
// the names, so a name never changes meaning once shipped.
//
// Thread-safety: pure functions over constants.

#include <cstdint>
#include <optional>
#include <string_view>

namespace tandem::routing {

enum class ReasonCode : uint8_t {
  // Rule 1, privacy: the data may not leave the device.
  kPrivacyDetected,       // a privacy detector matched the request
  kPrivacyHeader,         // X-Tandem-Privacy: local-only
  kPrivacyKeyPolicy,      // the API key is local-only
  kPrivacyOpaqueContent,  // content the scan cannot read, kept on the device (edge_only)
  kPrivacyOpaqueRefused,  // content the scan cannot read, refused (the client's to fix)
  kPrivacyNeedsCloud,     // private data in a request only the cloud can serve (the client's)
  kPrivacyEdgeOnly,       // what the edge does with such a request: it answers alone
  // Rule 2, a human.
  kReviewRule,
  // Rule 3, capability and health.
  kCapabilityCloudOnly,  // a field only the cloud provides (tools, response_format...)
  kNoTier,               // neither tier can answer
  kEdgeUnavailable,
  kCloudNotConfigured,
  kCloudOffline,
  kLatencyBudget,
  kGamingCapped,  // a client flagged for routing gaming reached its escalation cap
  kDeviceThrottled,
  // 4. The consistency memory.
  kConsistencyMemory,
  // 5. The pattern, configured or requested, and the classifier at ingress.
  kPatternCascade,
  kPatternSpeculative,
  kPatternCollaborate,
  kPatternEdge,
  kPatternCloud,
  kIngressComplex,
  kIngressSimple,
  // Shadow mode answered from the cloud while the edge was measured.
  kShadowCloud,
  // The client named a model instead of the router's (traces only).
  kModelEdge,
  kModelCloud,
};

// The stable name written to JSON, logs and traces.
std::string_view reason_code_name(ReasonCode code);
// The code of a stable name; nullopt for a name that is not one.
std::optional<ReasonCode> parse_reason_code(std::string_view name);

// Whether a decision taken for `code` is a routing preference (the pattern, the classifier, the
// consistency memory) rather than a rule (privacy, review, capability, health, latency, gaming):
// only a preference is worth remembering for a client's similar queries, or measuring in shadow.
bool is_preference(ReasonCode code);

}  // namespace tandem::routing
