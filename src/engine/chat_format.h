#pragma once
// Chat formatting as llama-server does it, through llama.cpp's own `common` library: the
// model's Jinja chat template (or edge.chat_template_file) renders the messages, tools, tool
// calls and tool results; the template's parser reads tool calls and reasoning back out of the
// model's output; JSON schemas become grammars for constrained decoding.
//
// A model without a chat template keeps Tandem's plain template (engine/chat_template.h) for
// plain chats, so completion models such as stories260K still continue the user's text; a
// request with tools on such a model is rendered with llama.cpp's ChatML fallback, whose
// generic tool-call format any model can be constrained to.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/chat_template.h"
#include "engine/generation.h"

struct llama_model;

namespace tandem::engine {

struct ToolDefinition {
  std::string name;
  std::string description;
  std::string parameters;  // JSON schema text; empty: no parameters
};

enum class ToolChoice { kAuto, kNone, kRequired };

struct ChatRequest {
  std::vector<ChatMessage> messages;
  std::vector<ToolDefinition> tools;
  // A named function is kRequired with `tools` holding only that function.
  ToolChoice tool_choice = ToolChoice::kAuto;
  bool parallel_tool_calls = false;
  // response_format: json_schema (the schema's text) or json_object ("{}": any object).
  std::optional<std::string> json_schema;
};

// How to read one request's answer back (the template's output parser). Opaque: it holds
// llama.cpp types.
struct ChatOutputFormat;

struct FormattedChat {
  std::string prompt;
  bool parse_special = false;  // the prompt holds special tokens written as text
  Constraint constraint;
  std::vector<std::string> stops;  // the template's extra stop strings
  std::string format;              // the output format's name ("Content-only", "peg-native", ...)
  std::shared_ptr<const ChatOutputFormat> output;  // null: the answer is plain content
};

// A change to the answer message, as OpenAI streams it.
struct MessageDelta {
  std::string content;
  std::string reasoning;
  std::optional<size_t> tool_index;  // set when this delta belongs to a tool call
  ToolCall tool_call;                // id and name on a call's first delta; arguments appended
};

// Reads a model's answer as it streams: push() each piece of text, finish() at the end.
// Deltas concatenate to the final message; tool calls get ids ("call_" + 24 characters).
// Thread-safety: none; one request's answer, read by one thread (or strand) at a time.
class ChatOutput {
 public:
  explicit ChatOutput(std::shared_ptr<const ChatOutputFormat> format);
  ~ChatOutput();
  ChatOutput(ChatOutput&&) noexcept;
  ChatOutput& operator=(ChatOutput&&) noexcept;

  std::vector<MessageDelta> push(const std::string& text);
  // The whole answer parsed; text the format cannot read becomes content.
  std::vector<MessageDelta> finish();
  size_t tool_calls() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Thread-safety: immutable after create(); any thread may call any member, at once.
class ChatFormatter {
 public:
  // `template_override`: a template's source, replacing the model's. Fails with
  // kInvalidArgument when the template does not parse.
  static Result<std::unique_ptr<ChatFormatter>> create(
      const llama_model* model, const std::optional<std::string>& template_override,
      ChatTemplate plain);
  ~ChatFormatter();

  // kInvalidArgument names what is wrong: an unknown role, a schema llama.cpp cannot turn
  // into a grammar (with the schema's path), a template that fails on these messages.
  Result<FormattedChat> format(const ChatRequest& request) const;

  // "jinja" when the model's or the configured template renders chats; "plain" otherwise.
  const std::string& kind() const;
  const ChatTemplate& plain() const;

 private:
  struct State;
  explicit ChatFormatter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace tandem::engine
