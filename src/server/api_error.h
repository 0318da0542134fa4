#pragma once
// The one place that turns failures into HTTP statuses and OpenAI error objects.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"

namespace tandem::server {

// Whose failure an error is: what the gateway may do about it (another tier, a retry).
enum class ErrorOrigin : uint8_t {
  kClient,   // the request itself, or the client went away
  kGateway,  // Tandem: its limits, its stores, its faults
  kEdge,     // the on-device model
  kCloud,    // a cloud upstream
};
const char* error_origin_name(ErrorOrigin origin);

// One failure, as the gateway's parts decide on it (origin, retryable, cancelled) and as the
// HTTP layer answers it (status, OpenAI's type and code, Retry-After).
struct ApiError {
  ErrorOrigin origin = ErrorOrigin::kGateway;
  bool retryable = false;  // the same request may succeed later, or on another tier
  bool cancelled = false;  // the client went away: there is nobody to answer
  int status = 500;
  std::string type = "server_error";  // OpenAI's error.type
  std::string code;                   // OpenAI's error.code, empty for null
  std::string message;
  std::string param;  // the request field at fault, empty for null
  std::optional<int> retry_after_seconds;

  // The client's to fix: the same request fails the same on every tier.
  bool clients_fault() const { return origin == ErrorOrigin::kClient && !retryable && !cancelled; }
};

ApiError invalid_request(std::string message, std::string param = {}, std::string code = {});

// Maps an engine/common error code to a status and OpenAI type.
ApiError api_error_from(const Error& error);

// {"error": {"message", "type", "param", "code"}}
nlohmann::json error_body(const ApiError& error);

}  // namespace tandem::server
