#include "engine/chat_format.h"

#include <cctype>
#include <exception>
#include <nlohmann/json.hpp>
#include <random>
#include <string_view>
#include <utility>

#include <llama.h>

#include "chat.h"
#include "json-schema-to-grammar.h"

namespace tandem::engine {

struct ChatOutputFormat {
  common_chat_parser_params params;
  // Tandem's generic tool format, for templates that cannot show tools: the whole answer is
  // one JSON object, {"tool_calls": [{name, arguments}]} or {"response": text}.
  bool generic = false;
};

namespace {

Error invalid(const std::string& what, const std::exception& e) {
  return make_error(ErrorCode::kInvalidArgument, what + ": " + e.what());
}

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

common_chat_msg to_common(const ChatMessage& message) {
  common_chat_msg out;
  out.role = message.role == "developer" ? "system" : message.role;
  out.content = message.content;
  out.reasoning_content = message.reasoning_content;
  out.tool_call_id = message.tool_call_id;
  out.tool_name = message.name;
  for (const auto& call : message.tool_calls) {
    out.tool_calls.push_back({call.name, call.arguments, call.id});
  }
  return out;
}

common_chat_tool_choice to_common(ToolChoice choice) {
  switch (choice) {
    case ToolChoice::kNone:
      return COMMON_CHAT_TOOL_CHOICE_NONE;
    case ToolChoice::kRequired:
      return COMMON_CHAT_TOOL_CHOICE_REQUIRED;
    case ToolChoice::kAuto:
      break;
  }
  return COMMON_CHAT_TOOL_CHOICE_AUTO;
}

GrammarTrigger from_common(const common_grammar_trigger& trigger) {
  GrammarTrigger out;
  out.value = trigger.value;
  out.token = trigger.token;
  switch (trigger.type) {
    case COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN:
      out.kind = GrammarTrigger::Kind::kToken;
      break;
    case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN:
      out.kind = GrammarTrigger::Kind::kPattern;
      break;
    case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL:
      out.kind = GrammarTrigger::Kind::kPatternFull;
      break;
    case COMMON_GRAMMAR_TRIGGER_TYPE_WORD:
      out.kind = GrammarTrigger::Kind::kWord;
      break;
  }
  return out;
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

using nlohmann::json;

// The schema of a generic answer: calls to the tools (each with its own parameters schema),
// or, unless a call is required, a plain response. Ordered: the grammar then has the model
// write a call's name before its arguments (so the call can stream) and the arguments'
// properties in the order the tool declares them.
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

// The conversation for a template without tools: the tools and the answer format in a system
// message, earlier calls as the JSON the model would have written, results as tool messages.
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

// Reads a generic answer as far as it is written, for streaming: the response's text so far,
// or each call's name once complete and its arguments' raw JSON text so far. Both only grow
// as more text comes, so what was sent never has to be taken back. A cut-off envelope is
// never shown as text.
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

// ---- ChatOutput ------------------------------------------------------------------------

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
    return state_->advance(GenericReader(state_->text).read(), false);
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
    return state_->advance(GenericReader(state_->text).read(), true);
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

// ---- ChatFormatter ---------------------------------------------------------------------

struct ChatFormatter::State {
  common_chat_templates_ptr templates;
  bool jinja = false;  // the model's (or the configured) template renders every chat
  std::string kind;
  ChatTemplate plain;
};

ChatFormatter::ChatFormatter(std::unique_ptr<State> state) : state_(std::move(state)) {}
ChatFormatter::~ChatFormatter() = default;

const std::string& ChatFormatter::kind() const {
  return state_->kind;
}
const ChatTemplate& ChatFormatter::plain() const {
  return state_->plain;
}

Result<std::unique_ptr<ChatFormatter>> ChatFormatter::create(
    const llama_model* model, const std::optional<std::string>& template_override,
    ChatTemplate plain) {
  auto state = std::make_unique<State>();
  state->plain = std::move(plain);
  try {
    // Without a template of its own or configured, llama.cpp falls back to ChatML: used only
    // for requests with tools (the plain template cannot show them).
    state->templates = common_chat_templates_init(model, template_override.value_or(""));
  } catch (const std::exception& e) {
    return invalid("the chat template does not parse", e);
  }
  state->jinja = template_override.has_value() || llama_model_chat_template(model, nullptr);
  state->kind = state->jinja ? "jinja" : "plain";
  return std::unique_ptr<ChatFormatter>(new ChatFormatter(std::move(state)));
}

namespace {

Result<std::string> schema_grammar(const std::string& schema, const std::string& what) {
  try {
    return json_schema_to_grammar(common_json::parse(schema));
  } catch (const std::exception& e) {
    return invalid(what + " cannot be turned into a grammar", e);
  }
}

// The plain template (a model without one): the messages as text, a schema as a grammar.
Result<FormattedChat> format_plain(const ChatTemplate& plain,
                                   const std::vector<ChatMessage>& messages,
                                   const std::optional<std::string>& json_schema) {
  FormattedChat out;
  auto rendered = plain.render(messages);
  if (!rendered) {
    return rendered.error();
  }
  out.prompt = std::move(rendered).value();
  out.parse_special = plain.needs_special_parsing();
  out.format = "plain";
  if (json_schema) {
    auto grammar = schema_grammar(*json_schema, "response_format's schema");
    if (!grammar) {
      return grammar.error();
    }
    out.constraint.grammar = std::move(grammar).value();
  }
  return out;
}

// The model's (or the configured) Jinja template, through llama.cpp as llama-server does.
Result<FormattedChat> format_jinja(const common_chat_templates* templates,
                                   const ChatRequest& request) {
  common_chat_templates_inputs inputs;
  for (const auto& message : request.messages) {
    inputs.messages.push_back(to_common(message));
  }
  for (const auto& tool : request.tools) {
    inputs.tools.push_back({tool.name, tool.description, tool.parameters});
  }
  inputs.tool_choice = to_common(request.tool_choice);
  inputs.parallel_tool_calls = request.parallel_tool_calls;
  inputs.json_schema = request.json_schema.value_or("");
  inputs.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;
  common_chat_params params;
  try {
    params = common_chat_templates_apply(templates, inputs);
  } catch (const std::exception& e) {
    return invalid("the chat template cannot render this request", e);
  }
  FormattedChat out;
  out.prompt = std::move(params.prompt);
  out.parse_special = true;
  out.format = common_chat_format_name(params.format);
  out.stops = params.additional_stops;
  Constraint& c = out.constraint;
  c.grammar = params.grammar;
  c.lazy = params.grammar_lazy;
  for (const auto& trigger : params.grammar_triggers) {
    c.triggers.push_back(from_common(trigger));
  }
  c.preserved_tokens = params.preserved_tokens;
  c.generation_prompt = params.generation_prompt;
  c.from_template = true;

  auto output = std::make_shared<ChatOutputFormat>();
  output->params = common_chat_parser_params(params);
  output->params.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;
  output->params.parse_tool_calls = !request.tools.empty();
  try {
    if (!params.parser.empty()) {
      output->params.parser.load(params.parser);
    }
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInternal,
                      std::string("llama.cpp's output parser did not load: ") + e.what());
  }
  out.output = std::move(output);
  return out;
}

}  // namespace

Result<FormattedChat> ChatFormatter::format(const ChatRequest& request) const {
  const bool tools = !request.tools.empty() && request.tool_choice != ToolChoice::kNone;
  if (state_->jinja) {
    auto formatted = format_jinja(state_->templates.get(), request);
    if (!formatted || !tools || !formatted->constraint.grammar.empty()) {
      return formatted;
    }
    // The template has no tool-call format (no grammar came back): the generic one below.
  }
  if (!tools) {
    return format_plain(state_->plain, request.messages, request.json_schema);
  }
  ChatRequest generic = request;
  generic.messages = generic_messages(request);
  generic.tools.clear();
  generic.json_schema.reset();
  auto formatted = state_->jinja ? format_jinja(state_->templates.get(), generic)
                                 : format_plain(state_->plain, generic.messages, std::nullopt);
  if (!formatted) {
    return formatted;
  }
  auto grammar = schema_grammar(generic_schema(request).dump(), "the tools' parameters");
  if (!grammar) {
    return grammar.error();
  }
  formatted->constraint = Constraint{};
  formatted->constraint.grammar = std::move(grammar).value();
  auto output = std::make_shared<ChatOutputFormat>();
  output->generic = true;
  formatted->output = std::move(output);
  formatted->format = "generic";
  return formatted;
}

}  // namespace tandem::engine
