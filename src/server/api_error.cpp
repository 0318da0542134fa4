#include "server/api_error.h"

namespace tandem::server {

const char* error_origin_name(ErrorOrigin origin) {
  switch (origin) {
    case ErrorOrigin::kClient:
      return "client";
    case ErrorOrigin::kEdge:
      return "edge";
    case ErrorOrigin::kCloud:
      return "cloud";
    case ErrorOrigin::kGateway:
      break;
  }
  return "gateway";
}

int http_status(const ApiError& error) {
  switch (error.kind) {
    case ErrorKind::kInvalidRequest:
      return 400;
    case ErrorKind::kUnauthenticated:
      return 401;
    case ErrorKind::kForbidden:
      return 403;
    case ErrorKind::kNotFound:
      return 404;
    case ErrorKind::kMethodNotAllowed:
      return 405;
    case ErrorKind::kRequestTimeout:
      return 408;
    case ErrorKind::kConflict:
      return 409;
    case ErrorKind::kBodyTooLarge:
      return 413;
    case ErrorKind::kRateLimited:
      return 429;
    case ErrorKind::kHeadersTooLarge:
      return 431;
    case ErrorKind::kCancelled:
      return 499;
    case ErrorKind::kUpstreamFailed:
      return 502;
    case ErrorKind::kUnavailable:
      return 503;
    case ErrorKind::kUpstreamRefused:
      // Only a refusal is relayed as it was; anything else from an upstream is its failure.
      return error.upstream_status >= 400 && error.upstream_status <= 499 ? error.upstream_status
                                                                          : 400;
    case ErrorKind::kInternal:
      break;
  }
  return 500;
}

const char* error_type(const ApiError& error) {
  switch (error.kind) {
    case ErrorKind::kForbidden:
      return "permission_error";
    case ErrorKind::kRateLimited:
      return "rate_limit_error";
    case ErrorKind::kCancelled:
    case ErrorKind::kInternal:
    case ErrorKind::kUpstreamFailed:
    case ErrorKind::kUnavailable:
      return "server_error";
    case ErrorKind::kInvalidRequest:
    case ErrorKind::kUnauthenticated:  // OpenAI's own type for a bad key
    case ErrorKind::kNotFound:
    case ErrorKind::kMethodNotAllowed:
    case ErrorKind::kRequestTimeout:
    case ErrorKind::kConflict:
    case ErrorKind::kBodyTooLarge:
    case ErrorKind::kHeadersTooLarge:
    case ErrorKind::kUpstreamRefused:
      break;
  }
  return "invalid_request_error";
}

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidRequest:
      return "invalid_request";
    case ErrorKind::kUnauthenticated:
      return "unauthenticated";
    case ErrorKind::kForbidden:
      return "forbidden";
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kMethodNotAllowed:
      return "method_not_allowed";
    case ErrorKind::kRequestTimeout:
      return "request_timeout";
    case ErrorKind::kConflict:
      return "conflict";
    case ErrorKind::kBodyTooLarge:
      return "body_too_large";
    case ErrorKind::kRateLimited:
      return "rate_limited";
    case ErrorKind::kHeadersTooLarge:
      return "headers_too_large";
    case ErrorKind::kCancelled:
      return "cancelled";
    case ErrorKind::kUpstreamFailed:
      return "upstream_failed";
    case ErrorKind::kUnavailable:
      return "unavailable";
    case ErrorKind::kUpstreamRefused:
      return "upstream_refused";
    case ErrorKind::kInternal:
      break;
  }
  return "internal";
}

ApiError make_api_error(ErrorKind kind, ErrorOrigin origin, std::string message, std::string code) {
  ApiError e;
  e.kind = kind;
  e.origin = origin;
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

ApiError invalid_request(std::string message, std::string param, std::string code) {
  ApiError e = make_api_error(ErrorKind::kInvalidRequest, ErrorOrigin::kClient, std::move(message),
                              std::move(code));
  e.param = std::move(param);
  return e;
}

ApiError api_error_from(const Error& error) {
  ApiError e;
  e.message = error.message;
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      e.kind = ErrorKind::kInvalidRequest;
      e.origin = ErrorOrigin::kClient;
      break;
    case ErrorCode::kNotFound:
      e.kind = ErrorKind::kNotFound;
      e.code = "model_not_found";
      break;
    case ErrorCode::kContextOverflow:
      // Too long for this model's context: a tier with a larger one may take it.
      e.kind = ErrorKind::kInvalidRequest;
      e.origin = ErrorOrigin::kClient;
      e.retryable = true;
      e.code = "context_length_exceeded";
      break;
    case ErrorCode::kBusy:
      e.kind = ErrorKind::kUnavailable;
      e.retryable = true;
      e.code = "engine_busy";
      e.retry_after_seconds = 1;
      break;
    case ErrorCode::kShuttingDown:
      e.kind = ErrorKind::kUnavailable;
      e.retryable = true;
      e.code = "shutting_down";
      e.retry_after_seconds = 5;
      break;
    case ErrorCode::kCancelled:
      e.kind = ErrorKind::kCancelled;
      e.origin = ErrorOrigin::kClient;
      e.code = "cancelled";
      break;
    case ErrorCode::kInvalidModel:
    case ErrorCode::kInsufficientMemory:
    case ErrorCode::kInternal:
      e.kind = ErrorKind::kInternal;
      break;
  }
  return e;
}

nlohmann::json error_body(const ApiError& error) {
  return {{"error",
           {{"message", error.message},
            {"type", error_type(error)},
            {"param", error.param.empty() ? nlohmann::json() : nlohmann::json(error.param)},
            {"code", error.code.empty() ? nlohmann::json() : nlohmann::json(error.code)}}}};
}

}  // namespace tandem::server
