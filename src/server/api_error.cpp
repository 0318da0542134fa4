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

ApiError invalid_request(std::string message, std::string param, std::string code) {
  ApiError e;
  e.origin = ErrorOrigin::kClient;
  e.status = 400;
  e.type = "invalid_request_error";
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

ApiError api_error_from(const Error& error) {
  ApiError e;
  e.message = error.message;
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      e.origin = ErrorOrigin::kClient;
      e.status = 400;
      e.type = "invalid_request_error";
      break;
    case ErrorCode::kNotFound:
      e.status = 404;
      e.type = "invalid_request_error";
      e.code = "model_not_found";
      break;
    case ErrorCode::kContextOverflow:
      // Too long for this model's context: a tier with a larger one may take it.
      e.origin = ErrorOrigin::kClient;
      e.retryable = true;
      e.status = 400;
      e.type = "invalid_request_error";
      e.code = "context_length_exceeded";
      break;
    case ErrorCode::kBusy:
      e.retryable = true;
      e.status = 503;
      e.type = "server_error";
      e.code = "engine_busy";
      e.retry_after_seconds = 1;
      break;
    case ErrorCode::kShuttingDown:
      e.retryable = true;
      e.status = 503;
      e.type = "server_error";
      e.code = "shutting_down";
      e.retry_after_seconds = 5;
      break;
    case ErrorCode::kCancelled:
      e.origin = ErrorOrigin::kClient;
      e.cancelled = true;
      e.status = 499;
      e.type = "server_error";
      e.code = "cancelled";
      break;
    case ErrorCode::kInvalidModel:
    case ErrorCode::kInsufficientMemory:
    case ErrorCode::kInternal:
      e.status = 500;
      e.type = "server_error";
      break;
  }
  return e;
}

nlohmann::json error_body(const ApiError& error) {
  return {{"error",
           {{"message", error.message},
            {"type", error.type},
            {"param", error.param.empty() ? nlohmann::json() : nlohmann::json(error.param)},
            {"code", error.code.empty() ? nlohmann::json() : nlohmann::json(error.code)}}}};
}

}  // namespace tandem::server
