#pragma once
// The routing policy: a pure function of the request's signals, the configuration and a
// snapshot of tier health. Rules come first (privacy, human review, capability, health,
// latency), then the consistency memory, then the configured pattern (P2 classifier at
// ingress, P1 cascade, P3 speculative, token-level collaboration). Every decision carries
// machine-readable reasons, so a decision can always be explained and replayed.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "routing/privacy_json.h"
#include "routing/privacy_scanner.h"
#include "routing/prompt_features.h"
#include "routing/query_kind.h"
#include "routing/reason_code.h"

namespace tandem::routing {

enum class Tier { kNone, kEdge, kCloud, kHuman };
const char* tier_name(Tier tier);

// How the chosen tiers cooperate on the answer.
enum class Pattern {
  kNone,         // no tier can answer (the reasons say why)
  kEdge,         // the edge answers; the cloud only on edge failure, if allowed
  kCloud,        // the cloud answers; the edge only on cloud failure, degraded
  kCascade,      // P1: edge first, escalate to the cloud when its confidence is low
  kSpeculative,  // P3: edge answer streamed at once, the cloud verifies
  kCollaborate,  // token-level: the cloud continues where the edge is uncertain
  kReview,       // a human answers (review queue)
};
const char* pattern_name(Pattern pattern);
// "cascade" -> kCascade ...; nullopt for "ingress" (the classifier picks) and unknown names.
std::optional<Pattern> parse_pattern(std::string_view name);
// The names a client may ask for: the configurable patterns plus a plain tier.
inline constexpr const char* kPatternNames[] = {"ingress",     "cascade", "speculative",
                                                "collaborate", "edge",    "cloud"};

struct Reason {
  ReasonCode code = ReasonCode::kNoTier;  // machine-readable; reason_code_name() is its name
  std::string detail;                     // for people
};

// What the request itself says, parsed from headers and the key's policy.
struct RequestHints {
  bool privacy_header = false;  // X-Tandem-Privacy: local-only
  bool key_local_only = false;  // the API key's policy
  bool review_header = false;   // X-Tandem-Review: required
  std::optional<uint32_t> latency_budget_ms;
  // X-Tandem-Pattern: a client's explicit choice, one of kPatternNames; empty: configured.
  std::string pattern;
  std::string client;  // API key name, X-Tandem-Client or the `user` field
  // Fields only a cloud model can honour (tools, response_format...).
  std::vector<std::string> cloud_only_fields;
};

struct RememberedTier {
  Tier tier = Tier::kNone;
  std::string reason;
  int64_t age_ms = 0;
};

struct RouteSignals {
  RequestHints hints;
  std::vector<PrivacyFinding> privacy;  // data that must not leave the device, by field
  std::vector<OpaqueContent> opaque;    // content the privacy detectors cannot read
  std::vector<PrivacyFinding> review;   // matches of the review rules
  PromptFeatures features;              // what the classifier read
  QueryKind kind = QueryKind::kOpen;    // for per-kind cascade calibration and shadow reports
  double complexity = 0.0;              // P(the cloud is needed), from the classifier
  std::optional<RememberedTier> remembered;
  // Routing gaming (telemetry/gaming_monitor.h): the client is flagged and already at its
  // escalation cap, so nothing of its request is escalated to the cloud by choice.
  bool escalation_capped = false;
};

struct HealthSnapshot {
  bool edge_available = true;
  std::string edge_problem;
  bool cloud_configured = true;
  bool cloud_online = true;
  std::string cloud_problem;
  // The device is throttled (heat, battery, slow decoding) and operations.device.when_throttled
  // moves work that may leave the device to the cloud.
  bool edge_throttled = false;
  std::string throttle_reason;
};

struct Decision {
  Tier tier = Tier::kNone;  // the tier that works on the query first
  Pattern pattern = Pattern::kNone;
  bool cloud_allowed = true;  // false: nothing of this request may leave the device
  bool from_memory = false;   // the consistency memory decided
  std::vector<Reason> reasons;
  std::optional<std::string> notice;  // a capability notice for the client (offline...)
};

Decision decide(const config::RoutingConfig& config, const RouteSignals& signals,
                const HealthSnapshot& health);

// Rule 1 of decide() alone: the decision when nothing of the request may leave the device (a
// privacy finding, opaque content under routing.privacy.opaque_content edge_only, the privacy
// header, a local-only key) or when it may not be answered at all (opaque content under
// "refuse"; private data in a request that needs a field only the cloud provides); nullopt
// when the rule does not apply. A request that names a cloud model gets it too. The decision's
// pattern is kNone when no tier may answer; its reasons then say why.
std::optional<Decision> privacy_decision(const config::RoutingConfig& config,
                                         const RouteSignals& signals, const HealthSnapshot& health);

// The cascade's threshold and confidence weights for a query of `kind`: the kind's own
// calibration when the configuration has one, else the global one.
config::KindCascade cascade_settings(const config::CascadeConfig& config, QueryKind kind);

}  // namespace tandem::routing
