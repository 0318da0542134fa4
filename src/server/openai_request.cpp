#include "server/openai_request.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "server/request_json.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using upstream::ApiKind;

// Fields whose meaning the edge engine cannot provide.
// (tools, tool_choice, parallel_tool_calls and response_format are the edge's too: its chat
// template renders tools and parses calls, and a grammar constrains structured output.)
const std::set<std::string> kCloudOnlyFields = {
    "functions",  "function_call",    "audio",      "modalities",
    "logit_bias", "reasoning_effort", "prediction", "web_search_options"};

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

// Looked up through the map's transparent comparator: no key string is built per lookup.
bool present(const json& body, std::string_view key) {
  if (!body.is_object()) {
    return false;
  }
  const auto& object = body.get_ref<const json::object_t&>();
  const auto it = object.find(key);
  return it != object.end() && !it->second.is_null();
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

// The string at `key`, or "" when absent or not a string (the caller says what it wanted).
std::string text_of(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& string_field(const json& object, const char* key, const std::string& where,
                         bool required) {
  static const json kNull;
  if (!present(object, key)) {
    if (required) {
      fail(where + "." + key, "is required");
    }
    return kNull;
  }
  if (!object[key].is_string()) {
    fail(where + "." + key, "must be a string");
  }
  return object[key];
}

// An assistant message's tool_calls, a tool message's tool_call_id and name.
void parse_tool_fields(const json& m, const std::string& where, engine::ChatMessage& message) {
  if (present(m, "tool_calls")) {
    const auto& calls = m["tool_calls"];
    if (!calls.is_array()) {
      fail(where + ".tool_calls", "must be an array");
    }
    for (size_t i = 0; i < calls.size(); ++i) {
      const std::string at = where + ".tool_calls[" + std::to_string(i) + "]";
      if (!calls[i].is_object() || !calls[i].contains("function") ||
          !calls[i]["function"].is_object()) {
        fail(at, "must be an object with a function {name, arguments}");
      }
      const auto& function = calls[i]["function"];
      engine::ToolCall call;
      const auto& id = string_field(calls[i], "id", at, false);
      call.id = id.is_null() ? std::string() : id.get<std::string>();
      call.name = string_field(function, "name", at + ".function", true).get<std::string>();
      const auto& arguments = string_field(function, "arguments", at + ".function", false);
      call.arguments = arguments.is_null() ? "{}" : arguments.get<std::string>();
      message.tool_calls.push_back(std::move(call));
    }
  }
  if (const auto& id = string_field(m, "tool_call_id", where, false); !id.is_null()) {
    message.tool_call_id = id.get<std::string>();
  }
  if (const auto& name = string_field(m, "name", where, false); !name.is_null()) {
    message.name = name.get<std::string>();
  }
  if (const auto& reasoning = string_field(m, "reasoning_content", where, false);
      !reasoning.is_null()) {
    message.reasoning_content = reasoning.get<std::string>();
  }
}

// tools: [{type: "function", function: {name, description?, parameters?, strict?}}].
void parse_tools(const json& body, CompletionRequest& out) {
  if (!present(body, "tools")) {
    return;
  }
  const auto& tools = body["tools"];
  if (!tools.is_array()) {
    fail("tools", "must be an array of {type: \"function\", function: {...}}");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string at = "tools[" + std::to_string(i) + "]";
    const auto& tool = tools[i];
    if (!tool.is_object() || text_of(tool, "type") != "function" || !tool.contains("function") ||
        !tool["function"].is_object()) {
      fail(at, "must be {type: \"function\", function: {name, description, parameters}}");
    }
    const auto& function = tool["function"];
    engine::ToolDefinition definition;
    definition.name = string_field(function, "name", at + ".function", true).get<std::string>();
    if (definition.name.empty() || !names.insert(definition.name).second) {
      fail(at + ".function.name", "must be a non-empty name used by no other tool");
    }
    if (const auto& d = string_field(function, "description", at + ".function", false);
        !d.is_null()) {
      definition.description = d.get<std::string>();
    }
    if (present(function, "parameters")) {
      if (!function["parameters"].is_object()) {
        fail(at + ".function.parameters", "must be a JSON schema object");
      }
      definition.parameters = function["parameters"].dump();
    }
    out.tools.push_back(std::move(definition));
  }
}

// tool_choice: "auto" | "none" | "required" | {type: "function", function: {name}}. A named
// function leaves only that tool and requires a call to it.
void parse_tool_choice(const json& body, CompletionRequest& out) {
  if (present(body, "parallel_tool_calls")) {
    out.parallel_tool_calls = boolean(body, "parallel_tool_calls");
  }
  if (!present(body, "tool_choice")) {
    return;
  }
  const auto& choice = body["tool_choice"];
  if (choice.is_string()) {
    const std::string mode = choice.get<std::string>();
    if (mode == "none") {
      out.tool_choice = engine::ToolChoice::kNone;
    } else if (mode == "required") {
      out.tool_choice = engine::ToolChoice::kRequired;
    } else if (mode != "auto") {
      fail("tool_choice", "must be \"auto\", \"none\", \"required\" or a named function");
    }
  } else if (choice.is_object() && choice.contains("function") && choice["function"].is_object()) {
    const std::string name =
        string_field(choice["function"], "name", "tool_choice.function", true).get<std::string>();
    const auto it = std::find_if(out.tools.begin(), out.tools.end(),
                                 [&](const auto& tool) { return tool.name == name; });
    if (it == out.tools.end()) {
      fail("tool_choice.function.name", "names no tool in tools: '" + name + "'");
    }
    const engine::ToolDefinition chosen = *it;
    out.tools = {chosen};
    out.tool_choice = engine::ToolChoice::kRequired;
  } else {
    fail("tool_choice",
         "must be \"auto\", \"none\", \"required\" or {type: \"function\", "
         "function: {name}}");
  }
  if (out.tool_choice == engine::ToolChoice::kRequired && out.tools.empty()) {
    fail("tool_choice", "requires tools");
  }
}

// response_format: {type: "text"} | {type: "json_object"} |
// {type: "json_schema", json_schema: {name, schema, strict?}}.
void parse_response_format(const json& body, CompletionRequest& out) {
  if (!present(body, "response_format")) {
    return;
  }
  const auto& format = body["response_format"];
  const std::string type = format.is_object() ? text_of(format, "type") : std::string();
  if (type == "text") {
    return;
  }
  if (type == "json_object") {
    out.json_schema = R"({"type":"object"})";
    return;
  }
  if (type != "json_schema") {
    fail("response_format.type", "must be \"text\", \"json_object\" or \"json_schema\"");
  }
  if (!present(format, "json_schema") || !format["json_schema"].is_object()) {
    fail("response_format.json_schema", "must be an object {name, schema, strict}");
  }
  const auto& spec = format["json_schema"];
  if (present(spec, "schema") && !spec["schema"].is_object()) {
    fail("response_format.json_schema.schema", "must be a JSON schema object");
  }
  out.json_schema = present(spec, "schema") ? spec["schema"].dump() : R"({"type":"object"})";
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
    // Only an assistant's turn may be without text (its tool calls say what it did).
    if (message.role != "assistant" && !present(m, "content")) {
      fail(where + ".content",
           "is required for a " + message.role + " message: a string or an array of content parts");
    }
    message.content = message_content(m.contains("content") ? m["content"] : json(),
                                      where + ".content", out.cloud_only_fields);
    parse_tool_fields(m, where, message);
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
  if (present(body, "frequency_penalty")) {
    s.frequency_penalty = static_cast<float>(number(body, "frequency_penalty", -2.0, 2.0));
  }
  if (present(body, "presence_penalty")) {
    s.presence_penalty = static_cast<float>(number(body, "presence_penalty", -2.0, 2.0));
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

void parse_model(const json& body, CompletionRequest& out) {
  if (!body.contains("model") || !body["model"].is_string() ||
      body["model"].get<std::string>().empty()) {
    fail("model", "is required and must be a string");
  }
  out.model = body["model"].get<std::string>();
}

// A completions request's `prompt`: one string (a list holding one string is one too).
void parse_prompt(const json& body, CompletionRequest& out) {
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

void parse_streaming(const json& body, CompletionRequest& out) {
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
}

void parse_user(const json& body, CompletionRequest& out) {
  if (present(body, "user")) {
    if (!body["user"].is_string()) {
      fail("user", "must be a string");
    }
    out.user = body["user"].get<std::string>();
  }
}

// The body's fields that only a cloud model can honour: such a request is not sent to the edge.
void note_cloud_only_fields(const json& body, CompletionRequest& out) {
  for (const auto& [key, value] : body.items()) {
    if (kCloudOnlyFields.count(key) && !value.is_null()) {
      out.cloud_only_fields.push_back(key);
    }
  }
}

// Every field of a request body that is a JSON object, in the order the checks have always
// run (the first failure is the error a client sees). Throws Invalid.
void parse_fields(const json& body, CompletionRequest& out, int default_max_tokens) {
  parse_model(body, out);
  if (out.kind == ApiKind::kChat) {
    parse_messages(body, out);
  } else {
    parse_prompt(body, out);
  }
  parse_sampling(body, out, default_max_tokens);
  parse_streaming(body, out);
  parse_logprobs(body, out);
  if (out.kind == ApiKind::kChat) {
    parse_tools(body, out);
    parse_tool_choice(body, out);
    parse_response_format(body, out);
  }
  parse_user(body, out);
  note_cloud_only_fields(body, out);
}

}  // namespace

engine::ChatRequest CompletionRequest::chat_request() const {
  engine::ChatRequest chat;
  chat.messages = messages;
  chat.tools = tools;
  chat.tool_choice = tool_choice;
  chat.parallel_tool_calls = parallel_tool_calls;
  chat.json_schema = json_schema;
  return chat;
}

std::variant<CompletionRequest, ApiError> parse_completion_request(std::string_view text,
                                                                   ApiKind kind,
                                                                   int default_max_tokens) {
  std::variant<json, ApiError> parsed =
      parse_request_object(text, invalid_request("the request body must be a JSON object"));
  if (auto* error = std::get_if<ApiError>(&parsed)) {
    return std::move(*error);
  }
  json body = std::move(std::get<json>(parsed));
  CompletionRequest out;
  out.kind = kind;
  try {
    parse_fields(body, out, default_max_tokens);
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
  std::variant<json, ApiError> document = parse_request_object(
      text,
      invalid_request(
          "the body must be a JSON object: a chat (messages) or completions (prompt) request"));
  if (auto* error = std::get_if<ApiError>(&document)) {
    return std::move(*error);
  }
  json& parsed = std::get<json>(document);
  if (!parsed.contains("model")) {
    parsed["model"] = default_model;
  }
  const auto kind = parsed.contains("prompt") ? ApiKind::kCompletion : ApiKind::kChat;
  return parse_completion_request(parsed.dump(), kind, 16);
}

}  // namespace tandem::server
