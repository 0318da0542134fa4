#include "engine/chat_format.h"

#include <exception>
#include <nlohmann/json.hpp>
#include <utility>

#include <llama.h>

#include "chat.h"
#include "engine/chat_generic.h"
#include "engine/chat_output_format.h"
#include "json-schema-to-grammar.h"

namespace tandem::engine {
namespace {

Error invalid(const std::string& what, const std::exception& e) {
  return make_error(ErrorCode::kInvalidArgument, what + ": " + e.what());
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

}  // namespace

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
