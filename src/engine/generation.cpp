#include "engine/generation.h"

#include <cmath>

namespace tandem::engine {
namespace {

Error invalid(const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument, message);
}

}  // namespace

Status validate(const SamplingParams& p) {
  if (!std::isfinite(p.temperature) || p.temperature > 100.0F) {
    return invalid("temperature must be a finite number <= 100 (<= 0 means greedy)");
  }
  if (!(p.top_p > 0.0F && p.top_p <= 1.0F)) {
    return invalid("top_p must be in (0, 1]");
  }
  if (p.top_k < 0) {
    return invalid("top_k must be >= 0 (0 disables it)");
  }
  if (!(p.min_p >= 0.0F && p.min_p <= 1.0F)) {
    return invalid("min_p must be in [0, 1]");
  }
  if (!(p.repeat_penalty > 0.0F && p.repeat_penalty <= 10.0F)) {
    return invalid("repeat_penalty must be in (0, 10] (1 disables it)");
  }
  if (p.repeat_last_n < 0) {
    return invalid("repeat_last_n must be >= 0");
  }
  if (!(p.frequency_penalty >= -2.0F && p.frequency_penalty <= 2.0F)) {
    return invalid("frequency_penalty must be between -2 and 2 (0 disables it)");
  }
  if (!(p.presence_penalty >= -2.0F && p.presence_penalty <= 2.0F)) {
    return invalid("presence_penalty must be between -2 and 2 (0 disables it)");
  }
  if (p.max_tokens < 1) {
    return invalid("max_tokens must be >= 1");
  }
  if (p.top_logprobs < 0 || p.top_logprobs > kMaxTopLogprobs) {
    return invalid("top_logprobs must be between 0 and " + std::to_string(kMaxTopLogprobs));
  }
  if (p.stop.size() > kMaxStopStrings) {
    return invalid("at most " + std::to_string(kMaxStopStrings) + " stop strings are allowed");
  }
  for (const auto& stop : p.stop) {
    if (stop.empty()) {
      return invalid("stop strings must not be empty");
    }
    if (stop.size() > kMaxStopStringBytes) {
      return invalid("stop strings must be at most " + std::to_string(kMaxStopStringBytes) +
                     " bytes");
    }
  }
  return {};
}

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
  }
  return "stop";
}

}  // namespace tandem::engine
