#include "fuzz/targets/completion_checks.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "common/json_depth.h"
#include "engine/generation.h"
#include "fuzz/property_check.h"

namespace tandem::fuzz {
namespace {

using nlohmann::json;
using upstream::ApiKind;

// Whether `value` is a JSON integer within [min, max], compared exactly: a large unsigned value
// must not pass as the negative number its bits would make.
bool integer_within(const json& value, int64_t min, int64_t max) {
  if (value.is_number_unsigned()) {
    return max >= 0 && value.get<uint64_t>() <= static_cast<uint64_t>(max);
  }
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    return v >= min && v <= max;
  }
  return false;
}

// As server::dump(): bytes that are not UTF-8 (headers echoed in a message) become U+FFFD.
std::string serialised(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool given(const json& body, const char* key) {
  return body.contains(key) && !body.at(key).is_null();
}

void check_request(const server::CompletionRequest& r, ApiKind kind, int default_max_tokens) {
  const json& body = r.cloud_body;
  FUZZ_CHECK(r.kind == kind);
  FUZZ_CHECK(body.is_object());
  FUZZ_CHECK(!r.model.empty());
  FUZZ_CHECK(body.contains("model") && body["model"] == r.model);
  if (kind == ApiKind::kChat) {
    FUZZ_CHECK(!r.messages.empty());
    FUZZ_CHECK(r.prompt.empty());
  } else {
    FUZZ_CHECK(r.messages.empty());
    FUZZ_CHECK(!r.prompt.empty());
  }

  const engine::SamplingParams& s = r.sampling;
  FUZZ_CHECK_MSG(engine::validate(s).ok(), engine::validate(s).error().message);
  FUZZ_CHECK(std::isfinite(s.temperature) && s.temperature >= 0.0F && s.temperature <= 2.0F);
  FUZZ_CHECK(s.top_p > 0.0F && s.top_p <= 1.0F);
  FUZZ_CHECK(s.max_tokens >= 1 && s.max_tokens <= (1 << 20));
  const char* max_key = given(body, "max_completion_tokens") ? "max_completion_tokens"
                        : given(body, "max_tokens")          ? "max_tokens"
                                                             : nullptr;
  if (max_key != nullptr) {
    FUZZ_CHECK(integer_within(body[max_key], 1, 1 << 20));
    FUZZ_CHECK(body[max_key].get<int64_t>() == s.max_tokens);
  } else {
    FUZZ_CHECK(s.max_tokens == default_max_tokens);
  }
  // The documented range of seed: what passed must be in it, not merely wrap into it.
  if (given(body, "seed")) {
    FUZZ_CHECK_MSG(integer_within(body["seed"], INT64_MIN / 2, INT64_MAX / 2), body["seed"].dump());
    FUZZ_CHECK(s.seed.has_value());
  }
  if (given(body, "n")) {
    FUZZ_CHECK(integer_within(body["n"], 1, 1));
  }

  const int max_top = kind == ApiKind::kChat ? engine::kMaxTopLogprobs : 5;
  FUZZ_CHECK(r.top_logprobs >= 0 && r.top_logprobs <= max_top);
  if (r.logprobs) {
    FUZZ_CHECK(s.top_logprobs == std::max(r.top_logprobs, 1));
  } else {
    FUZZ_CHECK(r.top_logprobs == 0 && s.top_logprobs == 0);
  }

  // Tandem sets streaming per upstream; the client's options never reach one.
  FUZZ_CHECK(!body.contains("stream_options"));
  for (const auto& field : r.cloud_only_fields) {
    FUZZ_CHECK(!field.empty());
  }
  // Upstreams get the body serialised as server::dump() does it.
  (void)serialised(body);
}

}  // namespace

void check_client_error(const server::ApiError& error) {
  FUZZ_CHECK(server::http_status(error) == 400);
  FUZZ_CHECK(std::string_view(server::error_type(error)) == "invalid_request_error");
  FUZZ_CHECK(!error.message.empty());
  FUZZ_CHECK(!serialised(server::error_body(error)).empty());
}

std::variant<server::CompletionRequest, server::ApiError> parse_completion_checked(
    std::string_view body, upstream::ApiKind kind, int default_max_tokens) {
  auto parsed = server::parse_completion_request(body, kind, default_max_tokens);
  if (const auto* request = std::get_if<server::CompletionRequest>(&parsed)) {
    FUZZ_CHECK(json_nesting_depth(body) <= kMaxJsonDepth);
    check_request(*request, kind, default_max_tokens);
  } else {
    check_client_error(std::get<server::ApiError>(parsed));
  }
  return parsed;
}

std::variant<server::CompletionRequest, server::ApiError> parse_route_checked(
    std::string_view body, const std::string& default_model) {
  auto parsed = server::parse_route_request(body, default_model);
  if (const auto* request = std::get_if<server::CompletionRequest>(&parsed)) {
    FUZZ_CHECK(json_nesting_depth(body) <= kMaxJsonDepth);
    check_request(*request, request->kind, /*default_max_tokens=*/16);
  } else {
    check_client_error(std::get<server::ApiError>(parsed));
  }
  return parsed;
}

}  // namespace tandem::fuzz
