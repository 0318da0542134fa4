#pragma once
// Shadow mode's report over HTTP (GET /v1/tandem/shadow) and for `tandem shadow report`: the
// shadow log's per-kind totals through the pure report (routing/shadow_report.h), as JSON.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"
#include "config/config.h"
#include "routing/shadow_report.h"
#include "server/gateway.h"
#include "server/tandem_api.h"
#include "store/shadow_log.h"

namespace tandem::server {

// The report over the samples taken at or after `since_unix_ms` (0: all kept).
Result<routing::ShadowReport> load_shadow_report(store::ShadowLog& log,
                                                 const config::ShadowConfig& config,
                                                 int64_t since_unix_ms);

// {object, enabled, since_ms, target_quality, min_samples, kinds: [...], overall, traffic}.
nlohmann::json shadow_report_json(const routing::ShadowReport& report, int64_t since_unix_ms,
                                  bool enabled);

// GET /v1/tandem/shadow?since=24h: the report on what the gateway recorded, written first.
ApiResponse shadow_endpoint(Gateway& gateway, const std::string& query);

}  // namespace tandem::server
