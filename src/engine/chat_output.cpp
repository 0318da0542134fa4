// Reading a model's answer as it streams, into OpenAI's message deltas: the template's parser
// (or the generic format's reader) runs over all the text so far, and only what grew since the
// last push is sent.

#include <exception>
#include <random>
#include <utility>

#include "engine/chat_format.h"
#include "engine/chat_generic.h"
#include "engine/chat_output_format.h"

namespace tandem::engine {
namespace {

std::string new_tool_call_id() {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) {
    id += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  }
  return id;
}

// The part of `now` after `before`, when the text only grew (a lenient partial parse may
// rewrite what it showed; what was sent cannot be taken back, so such a change is not sent).
std::string grown(const std::string& before, const std::string& now) {
  if (now.size() <= before.size() || now.compare(0, before.size(), before) != 0) {
    return {};
  }
  return now.substr(before.size());
}

MessageDelta content_delta(const std::string& text) {
  MessageDelta delta;
  delta.content = text;
  return delta;
}

MessageDelta reasoning_delta(const std::string& text) {
  MessageDelta delta;
  delta.reasoning = text;
  return delta;
}

MessageDelta tool_delta(size_t index, ToolCall call) {
  MessageDelta delta;
  delta.tool_index = index;
  delta.tool_call = std::move(call);
  return delta;
}

}  // namespace

struct ChatOutput::State {
  std::shared_ptr<const ChatOutputFormat> format;
  std::string text;       // everything pushed
  common_chat_msg shown;  // what the deltas so far add up to (content and reasoning)
  struct Call {
    std::string id;
    std::string name;
    std::string arguments;  // sent so far
  };
  std::vector<Call> calls;  // tool calls whose first delta went out

  std::vector<MessageDelta> advance(const common_chat_msg& parsed, bool final);
};

// Deltas from what was shown to `parsed`. A tool call goes out once its name is complete:
// when its arguments have started, a later call exists, or the answer is whole (a name can
// still grow while it streams, and OpenAI clients take the first name they see).
std::vector<MessageDelta> ChatOutput::State::advance(const common_chat_msg& parsed, bool final) {
  std::vector<MessageDelta> deltas;
  if (auto more = grown(shown.reasoning_content, parsed.reasoning_content); !more.empty()) {
    deltas.push_back(reasoning_delta(more));
    shown.reasoning_content = parsed.reasoning_content;
  }
  if (auto more = grown(shown.content, parsed.content); !more.empty()) {
    deltas.push_back(content_delta(more));
    shown.content = parsed.content;
  }
  for (size_t i = 0; i < parsed.tool_calls.size(); ++i) {
    const auto& call = parsed.tool_calls[i];
    if (i < calls.size()) {
      auto more = grown(calls[i].arguments, call.arguments);
      if (!more.empty()) {
        deltas.push_back(tool_delta(i, {"", "", more}));
        calls[i].arguments = call.arguments;
      }
      continue;
    }
    const bool ready = final || !call.arguments.empty() || i + 1 < parsed.tool_calls.size();
    if (!ready || call.name.empty()) {
      break;
    }
    Call sent{call.id.empty() ? new_tool_call_id() : call.id, call.name, call.arguments};
    deltas.push_back(tool_delta(i, {sent.id, sent.name, sent.arguments}));
    calls.push_back(std::move(sent));
  }
  return deltas;
}

ChatOutput::ChatOutput(std::shared_ptr<const ChatOutputFormat> format)
    : state_(std::make_unique<State>()) {
  state_->format = std::move(format);
}
ChatOutput::~ChatOutput() = default;
ChatOutput::ChatOutput(ChatOutput&&) noexcept = default;
ChatOutput& ChatOutput::operator=(ChatOutput&&) noexcept = default;

size_t ChatOutput::tool_calls() const {
  return state_->calls.size();
}

std::vector<MessageDelta> ChatOutput::push(const std::string& text) {
  if (text.empty()) {
    return {};
  }
  if (!state_->format) {
    state_->shown.content += text;
    return {content_delta(text)};
  }
  state_->text += text;
  if (state_->format->generic) {
    return state_->advance(read_generic_answer(state_->text), false);
  }
  try {
    const auto parsed = common_chat_parse(state_->text, true, state_->format->params);
    return state_->advance(parsed, false);
  } catch (const std::exception&) {
    return {};  // not readable yet: wait for more text
  }
}

std::vector<MessageDelta> ChatOutput::finish() {
  if (!state_->format) {
    return {};
  }
  common_chat_msg parsed;
  if (state_->format->generic) {
    return state_->advance(read_generic_answer(state_->text), true);
  }
  try {
    parsed = common_chat_parse(state_->text, false, state_->format->params);
  } catch (const std::exception&) {
    // The answer does not match the template's format (a model that ignored it): what was
    // read so far stands, and the rest of the text is content.
    parsed = state_->shown;
    parsed.tool_calls.clear();
    for (const auto& call : state_->calls) {
      parsed.tool_calls.push_back({call.name, call.arguments, call.id});
    }
    if (state_->calls.empty() && parsed.reasoning_content.empty()) {
      parsed.content = state_->text;
    }
  }
  return state_->advance(parsed, true);
}

}  // namespace tandem::engine
