#pragma once
// parse_completion_request() with the properties its contract promises checked on every
// outcome. Shared by the openai_body and http_request targets.

#include <string>
#include <string_view>
#include <variant>

#include "server/openai_request.h"

namespace tandem::fuzz {

// Parses `body` as the server does and checks the result: a request within every documented
// limit, or a 400 invalid_request_error that serialises.
std::variant<server::CompletionRequest, server::ApiError> parse_completion_checked(
    std::string_view body, upstream::ApiKind kind, int default_max_tokens);

// parse_route_request() (POST /v1/tandem/route) with the same checks.
std::variant<server::CompletionRequest, server::ApiError> parse_route_checked(
    std::string_view body, const std::string& default_model);

// What every ApiError the request path returns must satisfy.
void check_client_error(const server::ApiError& error);

}  // namespace tandem::fuzz
