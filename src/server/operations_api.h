#pragma once
// The operators' endpoints beside the status page: the audit of what went to the cloud
// (GET /v1/tandem/audit) and canary runs on demand (POST /v1/tandem/canary). Transport-free:
// the HTTP session checks the key and writes what comes back.

#include <nlohmann/json.hpp>
#include <string>

#include "server/gateway.h"
#include "server/tandem_api.h"
#include "telemetry/skew_monitor.h"

namespace tandem::server {

// GET /v1/tandem/audit?limit=100&upstream=NAME&since_ms=...: newest first.
ApiResponse audit_endpoint(Gateway& gateway, const std::string& query);

// One canary run as JSON: prompts, agreed, failed, agreement, both model identities.
nlohmann::json canary_json(const telemetry::CanaryRun& run);

}  // namespace tandem::server
