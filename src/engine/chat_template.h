#pragma once
// Renders OpenAI-style chat messages into the prompt text a model expects. The template comes
// from the model's own metadata (tokenizer.chat_template) when llama.cpp recognises it; models
// without one (or with one llama.cpp cannot apply) get Tandem's plain template:
//   - a single user message (optionally after a system message) is the prompt as written,
//     with the system text and a blank line before it, so completion-style models such as
//     stories260K simply continue the user's text;
//   - anything longer becomes a transcript, "System: …\n\nUser: …\n\nAssistant: …", ending
//     with "Assistant:" for the model to continue.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace tandem::engine {

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text, as the model wrote it
};

struct ChatMessage {
  ChatMessage() = default;
  ChatMessage(std::string role_, std::string content_)
      : role(std::move(role_)), content(std::move(content_)) {}

  std::string role;  // system, developer (treated as system), user, assistant, tool
  std::string content;
  // Chat templates render these (engine/chat_format.h); the plain template shows the content.
  std::vector<ToolCall> tool_calls;  // assistant
  std::string tool_call_id;          // tool: the call this message answers
  std::string name;                  // tool: the function's name, when the client gave it
  std::string reasoning_content;     // assistant
};

class ChatTemplate {
 public:
  // `model_template` is the model's tokenizer.chat_template, if any.
  static ChatTemplate from_model(const std::optional<std::string>& model_template);

  // Fails with kInvalidArgument on an empty conversation or an unknown role.
  Result<std::string> render(const std::vector<ChatMessage>& messages) const;

  // "model" when the model's template is used, "plain" otherwise.
  const std::string& kind() const { return kind_; }
  // Model templates write special tokens as text, so their output must be tokenized with
  // special-token parsing on; the plain template's must not.
  bool needs_special_parsing() const { return model_template_.has_value(); }

 private:
  std::optional<std::string> model_template_;
  std::string kind_ = "plain";
};

}  // namespace tandem::engine
