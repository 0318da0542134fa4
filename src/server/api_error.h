#pragma once
// The one place that turns failures into HTTP statuses and OpenAI error objects.
//
// A failure is an ApiError value: what went wrong (its kind), whose failure it is (origin),
// whether the same request may succeed later or on another tier (retryable), and what the
// client is told (code, message, param). The gateway's parts decide on origin and
// retryability; only the HTTP layer turns the kind into a status, through http_status() and
// error_type() below, and nothing else sets a status.
//
// Thread-safety: plain values; the functions are pure.

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

// What went wrong, as a client's HTTP library will see it. Each kind is one status, except an
// upstream's own refusal, which is relayed with the upstream's status.
enum class ErrorKind : uint8_t {
  kInvalidRequest,    // 400: a field, a value or the body is wrong
  kUnauthenticated,   // 401: no key, or a key this gateway does not know
  kForbidden,         // 403: the key may not do this, or the egress guard kept the data here
  kNotFound,          // 404: no such endpoint, model or stored response
  kMethodNotAllowed,  // 405: the endpoint exists, not with this method
  kRequestTimeout,    // 408: the request was not received in time
  kConflict,          // 409: the object is no longer in a state that allows this
  kBodyTooLarge,      // 413
  kRateLimited,       // 429
  kHeadersTooLarge,   // 431
  kCancelled,         // 499: the client went away (nginx's code: nobody reads the answer)
  kInternal,          // 500: a fault inside the gateway
  kUpstreamFailed,    // 502: an upstream was asked and failed
  kUnavailable,       // 503: nothing can answer now (not configured, busy, stopping, a store down)
  kUpstreamRefused,   // the upstream's own 4xx refusal of this request, relayed as it was
};

struct ApiError {
  ErrorKind kind = ErrorKind::kInternal;
  ErrorOrigin origin = ErrorOrigin::kGateway;
  bool retryable = false;   // the same request may succeed later, or on another tier
  int upstream_status = 0;  // kUpstreamRefused: the upstream's status (400–499)
  std::string code;         // OpenAI's error.code, empty for null
  std::string message;
  std::string param;  // the request field at fault, empty for null
  std::optional<int> retry_after_seconds;

  // The client went away: there is nobody to answer.
  bool cancelled() const { return kind == ErrorKind::kCancelled; }
  // The client's to fix: the same request fails the same on every tier.
  bool clients_fault() const {
    return origin == ErrorOrigin::kClient && !retryable && !cancelled();
  }
};

// The mapping: the HTTP status of an error, and OpenAI's error.type for it.
int http_status(const ApiError& error);
const char* error_type(const ApiError& error);
const char* error_kind_name(ErrorKind kind);

ApiError invalid_request(std::string message, std::string param = {}, std::string code = {});
// A failure of the given kind that the client can do nothing about but wait or fix its request.
ApiError make_api_error(ErrorKind kind, ErrorOrigin origin, std::string message, std::string code);

// Maps an engine/common error code to a kind and origin.
ApiError api_error_from(const Error& error);

// {"error": {"message", "type", "param", "code"}}
nlohmann::json error_body(const ApiError& error);

}  // namespace tandem::server
