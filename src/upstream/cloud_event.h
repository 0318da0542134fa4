#pragma once
// What Tandem reads from a cloud upstream's chat or completions answer: one event per stream
// chunk, or one for a whole non-streaming answer (cloud_reply.h parses them).

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tandem::upstream {

enum class ApiKind { kChat, kCompletion };

struct CloudUsage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_prompt_tokens = 0;  // usage.prompt_tokens_details.cached_tokens, when reported
};

// A piece of one tool call of a chat answer, as OpenAI streams them: a call's first delta has
// its id and name, later ones append to its arguments. A whole answer's calls come as one delta
// each, index = position.
struct CloudToolCallDelta {
  size_t index = 0;       // the call's position in message.tool_calls (< kMaxToolCalls)
  std::string id;         // "" when this delta does not carry it
  std::string name;       // function.name; "" when this delta does not carry it
  std::string arguments;  // a piece of function.arguments (JSON text), appended in order
};

// Tool call indices at or above this are not a real answer's: such items are ignored, which
// also bounds what a gateway holds per answer.
inline constexpr size_t kMaxToolCalls = 1024;

// One parsed chunk of the upstream's stream.
struct CloudEvent {
  std::string text;
  nlohmann::json logprobs;  // the chunk's choices[0].logprobs as sent, or null
  std::string reasoning;    // a piece of reasoning_content (or `reasoning`) (chat)
  std::vector<CloudToolCallDelta> tool_calls;  // (chat)
  std::optional<std::string> finish_reason;
  std::optional<CloudUsage> usage;
  // What was wrong with the usage object, when something was ("usage.prompt_tokens is null"):
  // the counts it concerns read as 0 (unknown), and the upstream call logs it.
  std::string usage_problem;
  std::string model;        // the model the upstream says answered ("" when the chunk names none)
  bool has_choice = false;  // choices[0] was there (a stream that never has one is malformed)

  // Carries something of the answer for the client (not only usage, a finish or a model).
  bool has_output() const {
    return !text.empty() || !logprobs.is_null() || !reasoning.empty() || !tool_calls.empty();
  }
};

}  // namespace tandem::upstream
