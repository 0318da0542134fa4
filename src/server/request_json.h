#pragma once
// A request body read as JSON, or the client error that names what is wrong with it: nested
// deeper than kMaxJsonDepth, or where its syntax broke and why ("the request body is not valid
// JSON: line 1, column 57: expected a value (...), found ']'"). Every endpoint that takes a JSON
// body reads it here, so every one answers a broken body the same way.
//
// Thread-safety: a pure function.

#include <nlohmann/json.hpp>
#include <string_view>
#include <variant>

#include "server/api_error.h"

namespace tandem::server {

std::variant<nlohmann::json, ApiError> parse_request_json(std::string_view text);

}  // namespace tandem::server
