// Tandem's generic tool-call format: see chat_generic.h.

#include "engine/chat_generic.h"

#include <cctype>
#include <string_view>
#include <utility>

namespace tandem::engine {
namespace {

using nlohmann::json;

// The decoded text of the JSON string `quoted` (from its opening quote), or of as much of it
// as was written when it is cut off: a half-written escape is left out until it is whole.
std::string string_prefix(std::string quoted) {
  if (!quoted.empty() && quoted.back() == '"' && quoted.size() > 1) {
    const json whole = json::parse(quoted, nullptr, false);
    if (whole.is_string()) {
      return whole.get<std::string>();
    }
  }
  for (size_t tries = 0; tries < 6 && !quoted.empty(); ++tries) {
    const json decoded = json::parse(quoted + "\"", nullptr, false);
    if (decoded.is_string()) {
      return decoded.get<std::string>();
    }
    quoted.pop_back();
  }
  return {};
}

// Reads a generic answer (read_generic_answer) by hand rather than with a JSON parser, which
// rejects a document cut off mid-way. Thread-safety: one thread, for one read().
class GenericReader {
 public:
  explicit GenericReader(const std::string& text) : s_(text) {}

  common_chat_msg read() {
    common_chat_msg msg;
    msg.role = "assistant";
    std::string key;
    if (!open('{') || !read_key(&key)) {
      return msg;
    }
    if (key == "response") {
      skip_space();
      if (at() == '"') {
        const size_t from = i_;
        skip_string();
        msg.content = string_prefix(s_.substr(from, i_ - from));
      }
    } else if (key == "tool_calls" && open('[')) {
      read_calls(msg);
    }
    return msg;
  }

 private:
  char at() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) {
      ++i_;
    }
  }
  bool open(char c) {
    skip_space();
    if (at() != c) {
      return false;
    }
    ++i_;
    return true;
  }
  // A string from its opening quote; true when its closing quote was read.
  bool skip_string() {
    for (++i_; i_ < s_.size(); ++i_) {
      if (s_[i_] == '\\') {
        ++i_;
      } else if (s_[i_] == '"') {
        ++i_;
        return true;
      }
    }
    i_ = s_.size();
    return false;
  }
  // A whole JSON value; true when it ended.
  bool skip_value() {
    skip_space();
    if (at() == '"') {
      return skip_string();
    }
    if (at() == '{' || at() == '[') {
      int depth = 0;
      while (i_ < s_.size()) {
        const char c = s_[i_];
        if (c == '"') {
          if (!skip_string()) {
            return false;
          }
          continue;
        }
        ++i_;
        depth += (c == '{' || c == '[') ? 1 : (c == '}' || c == ']') ? -1 : 0;
        if (depth == 0) {
          return true;
        }
      }
      return false;
    }
    while (i_ < s_.size() && std::string_view(",}] \t\r\n").find(s_[i_]) == std::string::npos) {
      ++i_;
    }
    return i_ < s_.size();
  }
  // `"key" :`; false unless all of it was written.
  bool read_key(std::string* key) {
    skip_space();
    if (at() != '"') {
      return false;
    }
    const size_t from = i_;
    if (!skip_string()) {
      return false;
    }
    const json decoded = json::parse(s_.substr(from, i_ - from), nullptr, false);
    if (!decoded.is_string()) {
      return false;
    }
    *key = decoded.get<std::string>();
    return open(':');
  }
  void read_calls(common_chat_msg& msg) {
    while (open('{')) {
      common_chat_tool_call call;
      const bool whole = read_call(call);
      msg.tool_calls.push_back(std::move(call));
      if (!whole || !open(',')) {
        return;
      }
    }
  }
  // One call's fields; false when the text ends inside it.
  bool read_call(common_chat_tool_call& call) {
    std::string key;
    while (read_key(&key)) {
      skip_space();
      const size_t from = i_;
      const bool ended = skip_value();
      if (key == "name" && ended) {
        const json name = json::parse(s_.substr(from, i_ - from), nullptr, false);
        call.name = name.is_string() ? name.get<std::string>() : "";
      } else if (key == "arguments") {
        call.arguments = s_.substr(from, i_ - from);
      }
      if (!ended) {
        return false;
      }
      if (!open(',')) {
        return open('}');
      }
    }
    return false;
  }

  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

nlohmann::ordered_json generic_schema(const ChatRequest& request) {
  using ordered = nlohmann::ordered_json;
  ordered calls = ordered::array();
  for (const auto& tool : request.tools) {
    ordered parameters = tool.parameters.empty() ? ordered{{"type", "object"}}
                                                 : ordered::parse(tool.parameters, nullptr, false);
    calls.push_back({{"type", "object"},
                     {"properties", {{"name", {{"const", tool.name}}}, {"arguments", parameters}}},
                     {"required", {"name", "arguments"}},
                     {"additionalProperties", false}});
  }
  ordered list = {{"type", "array"}, {"items", {{"anyOf", calls}}}, {"minItems", 1}};
  if (!request.parallel_tool_calls) {
    list["maxItems"] = 1;
  }
  ordered call_answer = {{"type", "object"},
                         {"properties", {{"tool_calls", list}}},
                         {"required", {"tool_calls"}},
                         {"additionalProperties", false}};
  if (request.tool_choice == ToolChoice::kRequired) {
    return call_answer;
  }
  ordered response = {{"type", "object"},
                      {"properties", {{"response", {{"type", "string"}}}}},
                      {"required", {"response"}},
                      {"additionalProperties", false}};
  return {{"anyOf", {call_answer, response}}};
}

std::vector<ChatMessage> generic_messages(const ChatRequest& request) {
  json tools = json::array();
  for (const auto& tool : request.tools) {
    tools.push_back(
        {{"name", tool.name},
         {"description", tool.description},
         {"parameters", tool.parameters.empty() ? json::object()
                                                : json::parse(tool.parameters, nullptr, false)}});
  }
  std::string instructions =
      "You can call these tools:\n" + tools.dump(2) +
      "\nAnswer with one JSON object: {\"tool_calls\": [{\"name\": ..., \"arguments\": {...}}]} "
      "to call tools, or {\"response\": \"...\"} to answer directly.";
  std::vector<ChatMessage> out;
  size_t first = 0;
  if (!request.messages.empty() &&
      (request.messages[0].role == "system" || request.messages[0].role == "developer")) {
    instructions = request.messages[0].content + "\n\n" + instructions;
    first = 1;
  }
  out.emplace_back("system", instructions);
  for (size_t i = first; i < request.messages.size(); ++i) {
    ChatMessage message = request.messages[i];
    if (!message.tool_calls.empty()) {
      json calls = json::array();
      for (const auto& call : message.tool_calls) {
        calls.push_back(
            {{"name", call.name}, {"arguments", json::parse(call.arguments, nullptr, false)}});
      }
      message.content = json{{"tool_calls", calls}}.dump();
      message.tool_calls.clear();
    }
    out.push_back(std::move(message));
  }
  return out;
}

common_chat_msg read_generic_answer(const std::string& text) {
  return GenericReader(text).read();
}

}  // namespace tandem::engine
