#include "server/operations_api.h"

#include "common/time_text.h"
#include "server/gateway_util.h"

namespace tandem::server {

using nlohmann::json;

ApiResponse audit_endpoint(Gateway& gateway, const std::string& query) {
  if (gateway.audit_log() == nullptr) {
    return error_response_body(api_error_from(
        make_error(ErrorCode::kNotFound, "the cloud audit is off (operations.audit.enabled)")));
  }
  store::AuditQuery q;
  int64_t limit = 100;
  if (auto bad = read_integer(query, "limit", 1, 10000, limit)) {
    return error_response_body(invalid_request(*bad));
  }
  q.limit = static_cast<size_t>(limit);
  if (auto bad = read_integer(query, "since_ms", 0, INT64_MAX, q.since_ms)) {
    return error_response_body(invalid_request(*bad));
  }
  q.upstream = query_value(query, "upstream").value_or("");
  gateway.flush_traces();  // what was sent a moment ago is in the answer
  auto rows = gateway.audit_log()->read(q);
  if (!rows) {
    return error_response_body(api_error_from(rows.error()));
  }
  json data = json::array();
  for (const auto& r : *rows) {
    data.push_back({{"id", r.id},
                    {"at", utc_iso8601(r.unix_ms)},
                    {"request_id", r.request_id},
                    {"client", r.client},
                    {"upstream", r.upstream},
                    {"model", r.model},
                    {"purpose", r.purpose},
                    {"bytes", r.bytes},
                    {"sha256", r.sha256},
                    {"content_mode", r.content_mode},
                    {"content", r.content_mode == "none" ? json(nullptr) : json(r.content)},
                    {"redactions", r.redactions},
                    {"redacted_detectors", r.redacted_detectors}});
  }
  return {200, {{"object", "list"}, {"data", std::move(data)}}};
}

json canary_json(const telemetry::CanaryRun& run) {
  const size_t answered = run.prompts - run.failed;
  return {{"at", utc_iso8601(run.at_ms)},
          {"prompts", run.prompts},
          {"agreed", run.agreed},
          {"failed", run.failed},
          {"agreement", answered > 0
                            ? json(static_cast<double>(run.agreed) / static_cast<double>(answered))
                            : json(nullptr)},
          {"edge_sha256", run.edge_sha256},
          {"cloud_model", run.cloud_model}};
}

}  // namespace tandem::server
