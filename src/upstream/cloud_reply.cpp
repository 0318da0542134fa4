#include "upstream/cloud_reply.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include <simdjson.h>

#include "common/json_depth.h"

namespace tandem::upstream {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Parsers keep their buffers between documents, which is what makes a parse cheap: one per
// thread, and only for documents up to this size, so what a thread keeps stays bounded. A larger
// answer gets a parser of its own, freed with it.
constexpr size_t kKeptParserBytes = 1 << 20;

// A parsed document: `root` points into its parser's document, so that parser must outlive it
// and stay where it is (hence the pointer: Parsed itself moves).
struct Parsed {
  std::unique_ptr<simdjson::dom::parser> own;  // for a document too large for the kept parser
  element root;
};

// A parser that refuses documents nested deeper than kMaxJsonDepth (simdjson's DEPTH_ERROR):
// the logprobs are copied into an nlohmann::json, which must not overflow the stack
// (json_depth.h), and the parse itself is the depth check, with no pass of its own.
std::unique_ptr<simdjson::dom::parser> depth_limited_parser(size_t capacity) {
  auto parser = std::make_unique<simdjson::dom::parser>();
  if (parser->allocate(capacity, kMaxJsonDepth) != simdjson::SUCCESS) {
    return nullptr;
  }
  return parser;
}

simdjson::error_code parse(std::string_view text, Parsed& parsed) {
  // RFC 8259 lets a reader ignore a leading byte order mark; some servers write one.
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.starts_with(kByteOrderMark)) {
    text.remove_prefix(kByteOrderMark.size());
  }
  constexpr size_t kFirstCapacity = 4096;
  thread_local const std::unique_ptr<simdjson::dom::parser> kept =
      depth_limited_parser(kFirstCapacity);
  simdjson::dom::parser* parser = kept.get();
  if (text.size() > kKeptParserBytes || parser == nullptr) {
    parsed.own = depth_limited_parser(text.size());
    parser = parsed.own.get();
  }
  if (parser == nullptr) {
    return simdjson::MEMALLOC;
  }
  return parser->parse(text.data(), text.size()).get(parsed.root);
}

std::optional<Parsed> parse(std::string_view text) {
  Parsed parsed;
  if (parse(text, parsed) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return parsed;
}

// What a JSON value is, in words (as common/json_kind.h says it of an nlohmann::json).
std::string kind_of(element value) {
  switch (value.type()) {
    case element_type::NULL_VALUE:
      return "null";
    case element_type::DOUBLE:
      return "a fraction";
    case element_type::INT64:
    case element_type::UINT64:
      return "a number";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
  }
  return "a value";
}

// The value at `key` of `object` (the last one when a key repeats, as nlohmann::json reads it),
// or nullopt when absent or `object` is not an object.
std::optional<element> field(element object, std::string_view key) {
  simdjson::dom::object fields;
  if (object.get_object().get(fields) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  std::optional<element> found;
  for (const auto [name, value] : fields) {
    if (name == key) {
      found = value;
    }
  }
  return found;
}

bool present(const std::optional<element>& value) {
  return value && !value->is_null();
}

// The string at `key`, or nullopt when absent or not a string.
std::optional<std::string> optional_string_at(element object, std::string_view key) {
  const auto value = field(object, key);
  std::string_view text;
  if (!value || value->get_string().get(text) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return std::string(text);
}

// The string at `key`, or "" when absent or not a string.
std::string string_at(element object, std::string_view key) {
  return optional_string_at(object, key).value_or(std::string());
}

// A token count from an upstream's usage object: 0 when absent, and 0 with a note in `problems`
// when it is not a count (null, text, a fraction, negative or beyond int). A malformed usage is
// not worth failing an answer over, and reading it never throws.
int token_count(element usage, const char* key, const char* where, std::string& problems) {
  const auto value = field(usage, key);
  if (!value) {
    return 0;
  }
  std::string what;
  if (int64_t count = 0; value->get_int64().get(count) == simdjson::SUCCESS) {
    if (count >= 0 && count <= INT32_MAX) {
      return static_cast<int>(count);
    }
    what = std::to_string(count);
  } else if (uint64_t big = 0; value->get_uint64().get(big) == simdjson::SUCCESS) {
    what = std::to_string(big);
  } else {
    what = kind_of(*value);
  }
  problems += std::string(problems.empty() ? "" : "; ") + where + key + " is " + what;
  return 0;
}

// The usage object of a chunk or answer; nullopt when it has none (absent or null, as OpenAI
// sends on every chunk but the last).
std::optional<CloudUsage> usage_of(element answer, std::string& problems) {
  const auto usage = field(answer, "usage");
  if (!present(usage)) {
    return std::nullopt;
  }
  if (!usage->is_object()) {
    problems = "usage is " + kind_of(*usage);
    return std::nullopt;
  }
  CloudUsage u;
  u.prompt_tokens = token_count(*usage, "prompt_tokens", "usage.", problems);
  u.completion_tokens = token_count(*usage, "completion_tokens", "usage.", problems);
  if (const auto details = field(*usage, "prompt_tokens_details");
      details && details->is_object()) {
    u.cached_prompt_tokens =
        token_count(*details, "cached_tokens", "usage.prompt_tokens_details.", problems);
  }
  return u;
}

// A tool call's index: `position` for a whole message's call (which have none) or a delta's
// that names none; nullopt when it names one that is not an integer in [0, kMaxToolCalls).
std::optional<size_t> tool_call_index(element item, size_t position, bool whole) {
  const auto index = field(item, "index");
  if (whole || !index) {
    return position < kMaxToolCalls ? std::optional<size_t>(position) : std::nullopt;
  }
  int64_t value = -1;
  if (index->get_int64().get(value) != simdjson::SUCCESS || value < 0 ||
      static_cast<uint64_t>(value) >= kMaxToolCalls) {
    return std::nullopt;
  }
  return static_cast<size_t>(value);
}

// One item of a delta's tool_calls, or with `whole` of a message's; nullopt when the item is
// malformed or carries nothing.
std::optional<CloudToolCallDelta> tool_call_of(element item, size_t position, bool whole) {
  if (!item.is_object()) {
    return std::nullopt;
  }
  const auto index = tool_call_index(item, position, whole);
  if (!index) {
    return std::nullopt;
  }
  if (const auto type = optional_string_at(item, "type"); type && *type != "function") {
    return std::nullopt;  // another kind of tool call (e.g. "custom"): not ours to relay
  }
  CloudToolCallDelta call;
  call.index = *index;
  call.id = string_at(item, "id");
  if (const auto function = field(item, "function"); function && function->is_object()) {
    call.name = string_at(*function, "name");
    if (const auto arguments = field(*function, "arguments"); present(arguments)) {
      std::string_view text;
      // Some servers send the arguments object itself: OpenAI's clients expect its text.
      call.arguments = arguments->get_string().get(text) == simdjson::SUCCESS
                           ? std::string(text)
                           : simdjson::to_string(*arguments);
    }
  }
  if (call.id.empty() && call.name.empty() && call.arguments.empty()) {
    return std::nullopt;
  }
  return call;
}

// A chat delta's (or with `whole` a message's) reasoning text and tool calls.
void read_chat_extras(element message, bool whole, CloudEvent& event) {
  event.reasoning = string_at(message, "reasoning_content");
  if (event.reasoning.empty()) {
    event.reasoning = string_at(message, "reasoning");  // vLLM's newer name, OpenRouter's
  }
  const auto calls = field(message, "tool_calls");
  simdjson::dom::array items;
  if (!calls || calls->get_array().get(items) != simdjson::SUCCESS) {
    return;
  }
  size_t i = 0;
  for (const element item : items) {
    // A message's calls are numbered as relayed: the items left out leave no gaps.
    const size_t position = whole ? event.tool_calls.size() : i++;
    if (auto call = tool_call_of(item, position, whole)) {
      event.tool_calls.push_back(std::move(*call));
    }
  }
}

// choices[0] into `event`; an error message when its structure is not an answer's.
std::optional<std::string> read_choice(element choice, ApiKind kind, bool whole,
                                       CloudEvent& event) {
  if (!choice.is_object()) {
    return "choices[0] is " + kind_of(choice) + ", not an object";
  }
  event.has_choice = true;
  if (kind == ApiKind::kChat) {
    const char* key = whole ? "message" : "delta";
    const auto delta = field(choice, key);
    if (present(delta) && !delta->is_object()) {
      return "choices[0]." + std::string(key) + " is " + kind_of(*delta) + ", not an object";
    }
    if (whole && !present(delta)) {
      return std::string("choices[0] has no message");
    }
    if (present(delta)) {
      event.text = string_at(*delta, "content");
      read_chat_extras(*delta, whole, event);
    }
  } else {
    event.text = string_at(choice, "text");
  }
  // Rare (only when logprobs were asked for), and passed on as sent: the one part kept as JSON.
  if (const auto logprobs = field(choice, "logprobs"); present(logprobs)) {
    event.logprobs = nlohmann::json::parse(simdjson::to_string(*logprobs), nullptr, false);
  }
  event.finish_reason = optional_string_at(choice, "finish_reason");
  return std::nullopt;
}

}  // namespace

std::string error_message_of(const std::string& body) {
  const auto parsed = parse(body);
  if (parsed) {
    if (const auto error = field(parsed->root, "error")) {
      if (auto message = optional_string_at(*error, "message")) {
        return *message;
      }
      std::string_view text;
      if (error->get_string().get(text) == simdjson::SUCCESS) {
        return std::string(text);
      }
    }
  }
  return body.substr(0, 200);
}

Result<CloudEvent> parse_cloud_chunk(const std::string& data, ApiKind kind, bool whole) {
  Parsed parsed;
  const simdjson::error_code error = parse(data, parsed);
  if (error == simdjson::DEPTH_ERROR) {
    return make_error(ErrorCode::kInternal, "the upstream sent a stream event nested deeper than " +
                                                std::to_string(kMaxJsonDepth) + " levels");
  }
  if (error != simdjson::SUCCESS || !parsed.root.is_object()) {
    return make_error(ErrorCode::kInternal,
                      "the upstream sent a malformed stream event: '" + data.substr(0, 80) + "'");
  }
  const element answer = parsed.root;
  if (field(answer, "error")) {
    return make_error(ErrorCode::kInternal,
                      "the upstream reported an error mid-stream: " + error_message_of(data));
  }
  // The answer's structure must be there: without choices (a whole answer), or with a choice
  // or message of the wrong type, there is no answer to read. Fields inside it of the wrong
  // type are ignored.
  const auto malformed = [&](const std::string& what) {
    return make_error(ErrorCode::kInternal, "the upstream sent a malformed " +
                                                std::string(whole ? "answer" : "stream event") +
                                                ": " + what);
  };
  CloudEvent event;
  if (auto model = optional_string_at(answer, "model")) {
    event.model = std::move(*model);
  }
  const auto choices = field(answer, "choices");
  simdjson::dom::array list;
  if (present(choices) && choices->get_array().get(list) != simdjson::SUCCESS) {
    return malformed("choices is " + kind_of(*choices) + ", not a list");
  }
  if (whole && (!present(choices) || list.size() == 0)) {
    return malformed("it has no choices");
  }
  if (present(choices) && list.size() > 0) {
    if (const auto problem = read_choice(list.at(0).value_unsafe(), kind, whole, event)) {
      return malformed(*problem);
    }
  }
  event.usage = usage_of(answer, event.usage_problem);
  return event;
}

}  // namespace tandem::upstream
