#pragma once
// OpenAI request bodies parsed once into native types (/v1/chat/completions, /v1/completions).
// Every field is validated here; the error names the field (`param`) and what is allowed.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/chat_template.h"
#include "engine/generation.h"
#include "server/api_error.h"
#include "upstream/upstream.h"

namespace tandem::server {

struct CompletionRequest {
  upstream::ApiKind kind = upstream::ApiKind::kChat;
  std::string model;
  std::vector<engine::ChatMessage> messages;  // chat
  std::string prompt;                         // completions
  engine::SamplingParams sampling;            // max_tokens defaulted when absent
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;
  int top_logprobs = 0;
  std::string user;
  // Fields only a cloud model can honour (tools, response_format, images...): such a request
  // is not sent to the edge.
  std::vector<std::string> cloud_only_fields;
  nlohmann::json cloud_body;  // the client's body, forwarded to cloud upstreams
};

std::variant<CompletionRequest, ApiError> parse_completion_request(std::string_view body,
                                                                   upstream::ApiKind kind,
                                                                   int default_max_tokens);

// POST /v1/tandem/route's body: a chat or a completions request (it has a prompt), its model
// `default_model` when it names none, max_tokens 16 unless given.
std::variant<CompletionRequest, ApiError> parse_route_request(std::string_view body,
                                                              const std::string& default_model);

}  // namespace tandem::server
