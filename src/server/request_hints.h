#pragma once
// The X-Tandem-* routing headers of a request, validated into routing hints. Pure: the HTTP
// session extracts the headers, and the fuzz targets (fuzz/) call it on arbitrary bytes. Apart
// from tandem_api.h so that it builds without the gateway (library tandem_server_api).
// Thread-safety: pure functions over plain values.

#include <string>
#include <variant>

#include "config/config.h"
#include "routing/policy.h"
#include "server/api_error.h"

namespace tandem::server {

// The routing headers of a request, as sent (empty when absent).
struct RoutingHeaders {
  std::string privacy;         // X-Tandem-Privacy: local-only
  std::string latency_budget;  // X-Tandem-Latency-Budget-Ms: a positive integer
  std::string client;          // X-Tandem-Client: a stable client id for the consistency memory
  std::string pattern;         // X-Tandem-Pattern: one of routing::kPatternNames
  std::string review;          // X-Tandem-Review: required
};

// Validates the headers (a bad value names the header and what it accepts) and adds the API
// key's policy. `key` is null without authentication.
std::variant<routing::RequestHints, ApiError> request_hints(const RoutingHeaders& headers,
                                                            const config::ClientKey* key);

}  // namespace tandem::server
