#pragma once
// The one place that turns failures into HTTP statuses and OpenAI error objects.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"

namespace tandem::server {

struct ApiError {
  int status = 500;
  std::string type = "server_error";  // OpenAI's error.type
  std::string code;                   // OpenAI's error.code, empty for null
  std::string message;
  std::string param;  // the request field at fault, empty for null
  std::optional<int> retry_after_seconds;
};

ApiError invalid_request(std::string message, std::string param = {}, std::string code = {});

// Maps an engine/common error code to a status and OpenAI type.
ApiError api_error_from(const Error& error);

// {"error": {"message", "type", "param", "code"}}
nlohmann::json error_body(const ApiError& error);

}  // namespace tandem::server
