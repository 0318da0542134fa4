#pragma once
// A request body read as a JSON object, or the client error that names what is wrong with it:
// nested deeper than kMaxJsonDepth, where its syntax broke and why ("the request body is not
// valid JSON: line 1, column 57: expected a value (...), found ']'"), or, when it is JSON but no
// object, the endpoint's own error. Every endpoint that takes a JSON body reads it here, so every
// one answers a broken body the same way.
//
// Thread-safety: a pure function.

#include <nlohmann/json.hpp>
#include <string_view>
#include <variant>

#include "server/api_error.h"

namespace tandem::server {

std::variant<nlohmann::json, ApiError> parse_request_object(std::string_view text,
                                                            ApiError not_an_object);

}  // namespace tandem::server
