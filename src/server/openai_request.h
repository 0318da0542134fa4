#pragma once
// OpenAI request bodies parsed once into native types (/v1/chat/completions, /v1/completions).
// Every field is validated here; the error names the field (`param`) and what is allowed.
//
// Thread-safety: pure functions over plain values; a parsed request belongs to its request.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/chat_format.h"
#include "engine/chat_template.h"
#include "engine/generation.h"
#include "server/api_error.h"
#include "upstream/upstream.h"

namespace tandem::server {

struct CompletionRequest {
  upstream::ApiKind kind = upstream::ApiKind::kChat;
  std::string model;
  std::vector<engine::ChatMessage> messages;  // chat
  // Chat: tools, tool_choice, parallel_tool_calls and response_format, validated.
  std::vector<engine::ToolDefinition> tools;
  engine::ToolChoice tool_choice = engine::ToolChoice::kAuto;
  bool parallel_tool_calls = false;
  std::optional<std::string> json_schema;  // response_format json_schema / json_object
  std::string prompt;                      // completions
  engine::SamplingParams sampling;         // max_tokens defaulted when absent
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;
  int top_logprobs = 0;
  std::string user;
  // Fields only a cloud model can honour (tools, response_format, images...): such a request
  // is not sent to the edge.
  std::vector<std::string> cloud_only_fields;
  nlohmann::json cloud_body;  // the client's body, forwarded to cloud upstreams
  // A /v1/responses request as an upstream with `api: responses` receives it (null for other
  // requests: cloud_body, the translation into chat, goes to the others).
  nlohmann::json responses_body;
  // It needs such an upstream (a built-in tool, named in cloud_only_fields): no other answers.
  bool needs_native = false;

  // Tools or a response_format: answered by one tier, whose answer is parsed, not merged.
  bool structured() const { return !tools.empty() || json_schema.has_value(); }
  engine::ChatRequest chat_request() const;
};

std::variant<CompletionRequest, ApiError> parse_completion_request(std::string_view body,
                                                                   upstream::ApiKind kind,
                                                                   int default_max_tokens);

// POST /v1/tandem/route's body: a chat or a completions request (it has a prompt), its model
// `default_model` when it names none, max_tokens 16 unless given.
std::variant<CompletionRequest, ApiError> parse_route_request(std::string_view body,
                                                              const std::string& default_model);

}  // namespace tandem::server
