#pragma once
// Tandem's own HTTP API beside the OpenAI one: request hints from headers, the route
// explanation (POST /v1/tandem/route) and the human review queue (/v1/tandem/reviews...).
// Transport-free: the HTTP session extracts headers and bodies and writes what comes back.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>

#include "config/config.h"
#include "routing/policy.h"
#include "server/api_error.h"
#include "server/gateway.h"

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

struct ApiResponse {
  int status = 200;
  nlohmann::json body;
};

ApiResponse error_response_body(const ApiError& error);

// POST /v1/tandem/route: the body is a chat or completions request; `?explain` details.
ApiResponse route_endpoint(const Gateway& gateway, const std::string& body,
                           const routing::RequestHints& hints, bool detailed);

// GET /v1/tandem/reviews?status=pending&limit=50
ApiResponse list_reviews(Gateway& gateway, const std::string& query);
// GET /v1/tandem/reviews/{id}: the ticket; once answered, with the answer as a completion.
ApiResponse get_review(Gateway& gateway, const std::string& id);
// POST /v1/tandem/reviews/{id}/answer {"answer": "...", "reviewer": "..."}
// POST /v1/tandem/reviews/{id}/reject {"note": "...", "reviewer": "..."}
ApiResponse answer_review(Gateway& gateway, const std::string& id, const std::string& body,
                          const std::string& default_reviewer, bool reject);

// A ticket as JSON (shared with `tandem review`).
nlohmann::json ticket_json(const store::ReviewTicket& ticket);

}  // namespace tandem::server
