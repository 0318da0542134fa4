#pragma once
// Tandem's own HTTP API beside the OpenAI one: request hints from headers (request_hints.h), the
// route explanation (POST /v1/tandem/route) and the human review queue (/v1/tandem/reviews...).
// Transport-free: the HTTP session extracts headers and bodies and writes what comes back.
// Thread-safety: each call may run on any thread; the stores it reads are thread-safe, and the
// HTTP layer runs these calls on the gateway's store workers.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>

#include "config/config.h"
#include "routing/policy.h"
#include "server/api_error.h"
#include "server/gateway.h"
#include "server/request_hints.h"

namespace tandem::server {

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
