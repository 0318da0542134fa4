#include "server/shadow_api.h"

#include <algorithm>
#include <cmath>

#include "server/api_error.h"
#include "server/gateway_shadow.h"
#include "server/gateway_util.h"

namespace tandem::server {
namespace {

using nlohmann::json;

// Rates and shares keep four decimals: enough for a percentage with two.
double rounded(double value) {
  return std::round(value * 10000.0) / 10000.0;
}
double rounded_ms(double value) {
  return std::round(value * 10.0) / 10.0;
}

json kind_json(const routing::ShadowKindReport& r) {
  return {{"kind", r.kind},
          {"samples", r.samples},
          {"agreed", r.agreed},
          {"agreement", rounded(r.agreement)},
          {"wilson_lower", rounded(r.bounds.lower)},
          {"wilson_upper", rounded(r.bounds.upper)},
          {"mean_f1", rounded(r.mean_f1)},
          {"mean_edge_confidence", rounded(r.mean_edge_confidence)},
          {"mean_edge_tokens", rounded(r.mean_edge_tokens)},
          {"mean_edge_ms", rounded_ms(r.mean_edge_ms)},
          {"mean_cloud_ms", rounded_ms(r.mean_cloud_ms)},
          {"skipped_edge_busy", r.edge_busy},
          {"edge_failed", r.edge_failed},
          {"requests", r.requests},
          {"shadowed", r.shadowed},
          {"traffic_share", rounded(r.traffic_share)},
          {"movable_share", rounded(r.movable_share)},
          {"verdict", routing::shadow_verdict_name(r.verdict)},
          {"more_samples_needed", r.more_samples ? json(*r.more_samples) : json(nullptr)}};
}

}  // namespace

Result<routing::ShadowReport> load_shadow_report(store::ShadowLog& log,
                                                 const config::ShadowConfig& config,
                                                 int64_t since_unix_ms) {
  auto totals = log.totals(since_unix_ms);
  if (!totals) {
    return totals.error();
  }
  std::vector<routing::ShadowCounts> counts;
  for (const auto& t : totals.value()) {
    routing::ShadowCounts c;
    c.kind = t.kind;
    c.compared = t.compared;
    c.agreed = t.agreed;
    c.edge_busy = t.edge_busy;
    c.edge_failed = t.edge_failed;
    c.sum_f1 = t.sum_f1;
    c.sum_edge_confidence = t.sum_edge_confidence;
    c.sum_edge_ms = t.sum_edge_ms;
    c.sum_cloud_ms = t.sum_cloud_ms;
    c.sum_edge_tokens = t.sum_edge_tokens;
    c.requests = t.requests;
    c.shadowed = t.shadowed;
    counts.push_back(std::move(c));
  }
  return routing::shadow_report(counts, config);
}

json shadow_report_json(const routing::ShadowReport& report, int64_t since_unix_ms, bool enabled) {
  json kinds = json::array();
  for (const auto& k : report.kinds) {
    kinds.push_back(kind_json(k));
  }
  return {{"object", "tandem.shadow_report"},
          {"enabled", enabled},
          {"since_ms", since_unix_ms > 0 ? json(since_unix_ms) : json(nullptr)},
          {"target_quality", report.target_quality},
          {"min_samples", report.min_samples},
          {"confidence_level", 0.95},
          {"kinds", std::move(kinds)},
          {"overall", kind_json(report.overall)},
          {"traffic",
           {{"requests", report.requests},
            {"shadowed", report.shadowed},
            {"move_to_edge", report.move_to_edge},
            {"edge_share_if_moved", rounded(report.edge_share_if_moved)}}}};
}

ApiResponse shadow_endpoint(Gateway& gateway, const std::string& query) {
  int64_t since = 0;
  if (const auto text = query_value(query, "since")) {
    auto parsed = routing::parse_since(*text, unix_ms());
    if (!parsed) {
      return error_response_body(invalid_request(parsed.error().message, "since"));
    }
    since = parsed.value();
  }
  if (ShadowMode* mode = gateway.shadow()) {
    mode->flush();  // what was measured until now, not what the writer got to
  }
  const config::ShadowConfig& config = gateway.config().routing.shadow;
  auto report = load_shadow_report(gateway.shadow_log(), config, since);
  if (!report) {
    return error_response_body(api_error_from(report.error()));
  }
  return {200, shadow_report_json(report.value(), since, config.enabled)};
}

}  // namespace tandem::server
