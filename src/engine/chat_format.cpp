#include "engine/chat_format.h"

#include <exception>
#include <nlohmann/json.hpp>
#include <random>
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
// or, unless a call is required, a plain response.
json generic_schema(const ChatRequest& request) {
  json calls = json::array();
  for (const auto& tool : request.tools) {
    json parameters = tool.parameters.empty() ? json{{"type", "object"}}
                                              : json::parse(tool.parameters, nullptr, false);
    calls.push_back({{"type", "object"},
                     {"properties", {{"name", {{"const", tool.name}}}, {"arguments", parameters}}},
                     {"required", {"name", "arguments"}},
                     {"additionalProperties", false}});
  }
  json list = {{"type", "array"}, {"items", {{"anyOf", calls}}}, {"minItems", 1}};
  if (!request.parallel_tool_calls) {
    list["maxItems"] = 1;
  }
  json call_answer = {{"type", "object"},
                      {"properties", {{"tool_calls", list}}},
                      {"required", {"tool_calls"}},
                      {"additionalProperties", false}};
  if (request.tool_choice == ToolChoice::kRequired) {
    return call_answer;
  }
  json response = {{"type", "object"},
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

// The text of a `"response": "...` string cut off before its closing quote (an answer that ran
// into max_tokens): what was written, decoded; "" when there is none.
std::string cut_off_response(const std::string& text) {
  const size_t key = text.find("\"response\"");
  const size_t open = key == std::string::npos ? key : text.find('"', text.find(':', key));
  if (open == std::string::npos) {
    return {};
  }
  // Drop a half-written escape, then close the string and let the JSON parser decode it.
  std::string value = text.substr(open);
  for (size_t tries = 0; tries < 6 && !value.empty(); ++tries) {
    const json decoded = json::parse(value + "\"", nullptr, false);
    if (decoded.is_string()) {
      return decoded.get<std::string>();
    }
    value.pop_back();
  }
  return {};
}

// A generic answer read back: its calls (arguments as compact JSON) or its response. One cut
// off by max_tokens keeps the response text it had; a cut-off call is dropped: the envelope
// is never shown as the answer's text.
common_chat_msg parse_generic(const std::string& text) {
  common_chat_msg msg;
  msg.role = "assistant";
  const json answer = json::parse(text, nullptr, false);
  if (!answer.is_object()) {
    msg.content = cut_off_response(text);
    return msg;
  }
  if (const auto calls = answer.find("tool_calls"); calls != answer.end() && calls->is_array()) {
    for (const auto& call : *calls) {
      if (call.is_object() && call.contains("name") && call["name"].is_string()) {
        const json arguments = call.contains("arguments") ? call["arguments"] : json::object();
        msg.tool_calls.push_back({call["name"].get<std::string>(), arguments.dump(), ""});
      }
    }
  } else if (const auto response = answer.find("response");
             response != answer.end() && response->is_string()) {
    msg.content = response->get<std::string>();
  }
  return msg;
}

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
    return {};  // one JSON object: read whole at the end
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
    return state_->advance(parse_generic(state_->text), true);
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
