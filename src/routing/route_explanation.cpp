// The routing explanation as nlohmann::json, for the CLI and the route API. The decision
// record writes the same members with a JsonWriter (server/decision_parts_json.cpp).

#include "routing/route_explanation.h"

#include "routing/query_kind.h"
#include "routing/router.h"

namespace tandem::routing {
namespace {

using nlohmann::json;

json complexity_json(const RouteExplanation& e) {
  json complexity = {{"score", e.signals.complexity},
                     {"threshold", e.thresholds.ingress},
                     {"model", e.complexity_model}};
  if (e.feature_contributions) {
    json contributions = json::array();
    for (const auto& c : *e.feature_contributions) {
      contributions.push_back(
          {{"feature", c.feature}, {"value", c.value}, {"contribution", c.contribution}});
    }
    complexity["features"] = std::move(contributions);
  }
  return complexity;
}

json remembered_json(const std::optional<RememberedTier>& remembered) {
  if (!remembered) {
    return nullptr;
  }
  return {{"tier", tier_name(remembered->tier)},
          {"reason", remembered->reason},
          {"age_ms", remembered->age_ms}};
}

json signals_json(const RouteExplanation& e) {
  const RouteSignals& signals = e.signals;
  const RequestHints& h = signals.hints;
  const HealthSnapshot& health = e.health;
  return {{"privacy",
           {{"findings", to_json(signals.privacy)},
            {"opaque", to_json(signals.opaque)},
            {"header_local_only", h.privacy_header},
            {"key_local_only", h.key_local_only}}},
          {"review", {{"findings", to_json(signals.review)}, {"header", h.review_header}}},
          {"complexity", complexity_json(e)},
          {"kind", query_kind_name(signals.kind)},
          {"latency_budget_ms", h.latency_budget_ms ? json(*h.latency_budget_ms) : json(nullptr)},
          {"client", h.client.empty() ? json(nullptr) : json(h.client)},
          {"requested_pattern", h.pattern.empty() ? json(nullptr) : json(h.pattern)},
          {"cloud_only_fields", h.cloud_only_fields},
          {"consistency", remembered_json(signals.remembered)},
          {"escalation_capped", signals.escalation_capped},
          {"health",
           {{"edge_available", health.edge_available},
            {"cloud_configured", health.cloud_configured},
            {"cloud_online", health.cloud_online},
            {"edge_throttled", health.edge_throttled}}},
          {"prompt", {{"chars", e.prompt.chars}, {"turns", e.prompt.turns}}}};
}

}  // namespace

json to_json(const RouteExplanation& explanation) {
  const RouteThresholds& t = explanation.thresholds;
  return {
      {"decision", to_json(explanation.decision)},
      {"signals", signals_json(explanation)},
      {"thresholds",
       {{"ingress", t.ingress},
        {"cascade", t.cascade},
        {"edge_latency_budget_ms", t.edge_latency_budget_ms},
        {"collaborate_entropy", t.collaborate_entropy},
        {"review_cloud", t.review_cloud}}},
  };
}

}  // namespace tandem::routing
