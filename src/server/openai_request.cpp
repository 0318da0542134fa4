#include "server/openai_request.h"

#include <cmath>
#include <set>

#include "common/json_depth.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using upstream::ApiKind;

// Fields whose meaning the edge engine cannot provide.
const std::set<std::string> kCloudOnlyFields = {
    "tools",      "tool_choice",       "functions",  "function_call",       "response_format",
    "audio",      "modalities",        "logit_bias", "parallel_tool_calls", "reasoning_effort",
    "prediction", "web_search_options"};

struct Invalid {
  ApiError error;
};

[[noreturn]] void fail(const std::string& param, const std::string& message) {
  throw Invalid{invalid_request(param + ": " + message, param)};
}

double number(const json& body, const char* key, double min, double max) {
  const auto& value = body.at(key);
  if (!value.is_number()) {
    fail(key, "must be a number");
  }
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < min || v > max) {
    fail(key, "must be between " + json(min).dump() + " and " + json(max).dump());
  }
  return v;
}

int64_t integer(const json& body, const char* key, int64_t min, int64_t max) {
  const auto& value = body.at(key);
  if (!value.is_number_integer()) {
    fail(key, "must be an integer");
  }
  // A JSON integer above INT64_MAX would read as a negative number that may pass the check.
  const bool too_large =
      value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  const int64_t v = too_large ? INT64_MAX : value.get<int64_t>();
  if (too_large || v < min || v > max) {
    fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  }
  return v;
}

bool boolean(const json& body, const char* key) {
  const auto& value = body.at(key);
  if (!value.is_boolean()) {
    fail(key, "must be true or false");
  }
  return value.get<bool>();
}

bool present(const json& body, const char* key) {
  return body.contains(key) && !body.at(key).is_null();
}

// Message content: a string, or an array of parts of which text parts are joined.
std::string message_content(const json& content, const std::string& param,
                            std::vector<std::string>& cloud_only) {
  if (content.is_null()) {
    return {};
  }
  if (content.is_string()) {
    return content.get<std::string>();
  }
  if (!content.is_array()) {
    fail(param, "must be a string or an array of content parts");
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const auto& part = content[i];
    const std::string where = param + "[" + std::to_string(i) + "]";
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      fail(where, "must be an object with a string 'type'");
    }
    if (part["type"] == "text") {
      if (!part.contains("text") || !part["text"].is_string()) {
        fail(where + ".text", "must be a string");
      }
      text += part["text"].get<std::string>();
    } else {
      cloud_only.push_back(where + ".type=" + part["type"].get<std::string>());
    }
  }
  return text;
}

void parse_messages(const json& body, CompletionRequest& out) {
  if (!body.contains("messages")) {
    fail("messages", "is required");
  }
  const auto& messages = body["messages"];
  if (!messages.is_array() || messages.empty()) {
    fail("messages", "must be a non-empty array");
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string where = "messages[" + std::to_string(i) + "]";
    const auto& m = messages[i];
    if (!m.is_object()) {
      fail(where, "must be an object with role and content");
    }
    if (!m.contains("role") || !m["role"].is_string()) {
      fail(where + ".role", "must be a string");
    }
    engine::ChatMessage message;
    message.role = m["role"].get<std::string>();
    message.content = message_content(m.contains("content") ? m["content"] : json(),
                                      where + ".content", out.cloud_only_fields);
    if (m.contains("tool_calls")) {
      out.cloud_only_fields.push_back(where + ".tool_calls");
    }
    out.messages.push_back(std::move(message));
  }
}

void parse_stop(const json& body, engine::SamplingParams& sampling) {
  if (!present(body, "stop")) {
    return;
  }
  const auto& stop = body["stop"];
  if (stop.is_string()) {
    sampling.stop = {stop.get<std::string>()};
  } else if (stop.is_array()) {
    for (const auto& s : stop) {
      if (!s.is_string()) {
        fail("stop", "must be a string or an array of strings");
      }
      sampling.stop.push_back(s.get<std::string>());
    }
  } else {
    fail("stop", "must be a string or an array of strings");
  }
}

void parse_sampling(const json& body, CompletionRequest& out, int default_max_tokens) {
  engine::SamplingParams& s = out.sampling;
  s.temperature = 1.0F;  // OpenAI's defaults
  s.top_p = 1.0F;
  s.top_k = 0;
  s.min_p = 0.0F;
  s.max_tokens = default_max_tokens;
  if (present(body, "temperature")) {
    s.temperature = static_cast<float>(number(body, "temperature", 0.0, 2.0));
  }
  if (present(body, "top_p")) {
    s.top_p = static_cast<float>(number(body, "top_p", 0.0, 1.0));
    if (s.top_p <= 0.0F) {
      fail("top_p", "must be greater than 0");
    }
  }
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    if (present(body, key)) {
      s.max_tokens = static_cast<int>(integer(body, key, 1, 1 << 20));
      break;
    }
  }
  if (present(body, "seed")) {
    s.seed = static_cast<uint32_t>(integer(body, "seed", INT64_MIN / 2, INT64_MAX / 2));
  }
  if (present(body, "n") && integer(body, "n", 1, 128) != 1) {
    fail("n", "only n = 1 is supported");
  }
  parse_stop(body, s);
  if (auto status = engine::validate(s); !status) {
    fail("stop", status.error().message);
  }
}

void parse_logprobs(const json& body, CompletionRequest& out) {
  if (out.kind == ApiKind::kChat) {
    if (present(body, "logprobs")) {
      out.logprobs = boolean(body, "logprobs");
    }
    if (present(body, "top_logprobs")) {
      out.top_logprobs =
          static_cast<int>(integer(body, "top_logprobs", 0, engine::kMaxTopLogprobs));
      if (!out.logprobs) {
        fail("top_logprobs", "requires logprobs: true");
      }
    }
  } else if (present(body, "logprobs")) {  // completions: logprobs is the number of alternatives
    out.top_logprobs = static_cast<int>(integer(body, "logprobs", 0, 5));
    out.logprobs = true;
  }
  out.sampling.top_logprobs = out.logprobs ? std::max(out.top_logprobs, 1) : 0;
}

}  // namespace

std::variant<CompletionRequest, ApiError> parse_completion_request(std::string_view text,
                                                                   ApiKind kind,
                                                                   int default_max_tokens) {
  // Before anything copies or serialises the body recursively (json_depth.h).
  if (json_nesting_depth(text) > kMaxJsonDepth) {
    return invalid_request("the request body nests arrays and objects deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  }
  json body = json::parse(text, nullptr, false);
  if (body.is_discarded()) {
    return invalid_request("the request body is not valid JSON");
  }
  if (!body.is_object()) {
    return invalid_request("the request body must be a JSON object");
  }
  CompletionRequest out;
  out.kind = kind;
  try {
    if (!body.contains("model") || !body["model"].is_string() ||
        body["model"].get<std::string>().empty()) {
      fail("model", "is required and must be a string");
    }
    out.model = body["model"].get<std::string>();
    if (kind == ApiKind::kChat) {
      parse_messages(body, out);
    } else {
      if (!body.contains("prompt")) {
        fail("prompt", "is required");
      }
      const auto& prompt = body["prompt"];
      if (prompt.is_string()) {
        out.prompt = prompt.get<std::string>();
      } else if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) {
        out.prompt = prompt[0].get<std::string>();
      } else {
        fail("prompt", "must be a string (a list of prompts or of token ids is not supported)");
      }
      if (out.prompt.empty()) {
        fail("prompt", "must not be empty");
      }
    }
    parse_sampling(body, out, default_max_tokens);
    if (present(body, "stream")) {
      out.stream = boolean(body, "stream");
    }
    if (present(body, "stream_options")) {
      const auto& options = body["stream_options"];
      if (!options.is_object()) {
        fail("stream_options", "must be an object");
      }
      if (present(options, "include_usage")) {
        out.include_usage = boolean(options, "include_usage");
      }
    }
    parse_logprobs(body, out);
    if (present(body, "user")) {
      if (!body["user"].is_string()) {
        fail("user", "must be a string");
      }
      out.user = body["user"].get<std::string>();
    }
    for (const auto& [key, value] : body.items()) {
      if (kCloudOnlyFields.count(key) && !value.is_null()) {
        out.cloud_only_fields.push_back(key);
      }
    }
  } catch (const Invalid& invalid) {
    return invalid.error;
  }
  // Upstreams get the client's own fields; Tandem sets model and streaming per upstream.
  body.erase("stream_options");
  out.cloud_body = std::move(body);
  return out;
}

std::variant<CompletionRequest, ApiError> parse_route_request(std::string_view text,
                                                              const std::string& default_model) {
  if (json_nesting_depth(text) > kMaxJsonDepth) {
    return invalid_request("the request body nests arrays and objects deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  }
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return invalid_request(
        "the body must be a JSON object: a chat (messages) or completions (prompt) request");
  }
  if (!parsed.contains("model")) {
    parsed["model"] = default_model;
  }
  const auto kind = parsed.contains("prompt") ? ApiKind::kCompletion : ApiKind::kChat;
  return parse_completion_request(parsed.dump(), kind, 16);
}

}  // namespace tandem::server
