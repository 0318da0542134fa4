#pragma once
// A routing decision and everything behind it, as native values: the decision record's
// `routing` part, `tandem route --explain` and /v1/tandem/route. The router fills it
// (Router::explanation); formatting happens at the edges: to_json below for the CLI and the
// route API, the server's JsonWriter (server/decision_parts_json.cpp) for every response. Both
// write the same members, in name order.
//
// Plain values: safe to copy and to read from any thread.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "routing/policy.h"

namespace tandem::routing {

// One feature's share of the classifier's score (a detailed explanation only).
struct ExplainedFeature {
  std::string feature;        // the feature's stable name (feature_names())
  double value = 0.0;         // its raw value in this prompt
  double contribution = 0.0;  // what it added to the score's log-odds
};

// The size of the conversation the router read.
struct PromptSize {
  size_t chars = 0;  // all message text
  size_t turns = 0;  // user and assistant messages
};

// The configured thresholds the decision was made against.
struct RouteThresholds {
  double ingress = 0.0;                 // complexity above which the cloud answers
  double cascade = 0.0;                 // the edge confidence a cascade needs, for this kind
  uint32_t edge_latency_budget_ms = 0;  // latency budgets at or below this stay on the edge
  double collaborate_entropy = 0.0;     // token entropy above which the cloud continues
  double review_cloud = 0.0;            // escalated cloud confidence below which a human reviews
};

struct RouteExplanation {
  Decision decision;  // what the router decided, with its reasons
  // Every signal the router read: hints, privacy and review findings, opaque content, the
  // query's kind and complexity, a remembered tier, the escalation cap. (Its prompt features
  // are not shown; feature_contributions explains them when asked for.)
  RouteSignals signals;
  HealthSnapshot health;         // the tiers' state when it decided
  PromptSize prompt;             // how much it read
  std::string complexity_model;  // the classifier's version
  // Each feature's contribution to the complexity score, largest first; only when a detailed
  // explanation was asked for (absent, not empty, otherwise).
  std::optional<std::vector<ExplainedFeature>> feature_contributions;
  RouteThresholds thresholds;
};

// The explanation as JSON, for `tandem route` and /v1/tandem/route.
nlohmann::json to_json(const RouteExplanation& explanation);

}  // namespace tandem::routing
