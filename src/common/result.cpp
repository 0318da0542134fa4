#include "common/result.h"

#include <cstring>

namespace tandem {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kInvalidModel:
      return "invalid_model";
    case ErrorCode::kInsufficientMemory:
      return "insufficient_memory";
    case ErrorCode::kContextOverflow:
      return "context_overflow";
    case ErrorCode::kBusy:
      return "busy";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kShuttingDown:
      return "shutting_down";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

std::string errno_message(int error_number) {
  char buffer[256];
  // GNU strerror_r returns the message, which may or may not live in `buffer`.
  return ::strerror_r(error_number, buffer, sizeof(buffer));
}

}  // namespace tandem
