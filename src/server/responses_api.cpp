// The Responses API, the request side: a Responses request checked and translated onto chat
// completions (responses_render.cpp renders the answers).

#include "server/responses_api.h"

#include <algorithm>
#include <array>
#include <utility>

#include "server/request_json.h"

namespace tandem::server {

using json = nlohmann::json;

namespace {

// Thrown inside parsing only, caught by parse_responses_request.
struct BadField {
  std::string param;
  std::string message;
};

[[noreturn]] void fail(std::string param, std::string message) {
  throw BadField{std::move(param), std::move(message)};
}

// Fields a client may send that change nothing here: accepted and not forwarded.
constexpr std::array<std::string_view, 9> kAcceptedIgnored = {
    "include",           "truncation",     "service_tier",   "reasoning",   "prompt_cache_key",
    "safety_identifier", "stream_options", "max_tool_calls", "top_logprobs"};

constexpr std::array<std::string_view, 15> kKnown = {"model",
                                                     "input",
                                                     "instructions",
                                                     "tools",
                                                     "tool_choice",
                                                     "text",
                                                     "max_output_tokens",
                                                     "temperature",
                                                     "top_p",
                                                     "stream",
                                                     "store",
                                                     "previous_response_id",
                                                     "parallel_tool_calls",
                                                     "metadata",
                                                     "user"};

bool contains(const auto& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::string text_of_parts(const json& content, const std::string& param) {
  if (content.is_string()) {
    return content.get<std::string>();
  }
  if (!content.is_array()) {
    fail(param, "must be a string or an array of text parts");
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const json& part = content[i];
    const std::string where = param + "[" + std::to_string(i) + "]";
    const std::string type = part.is_object() ? part.value("type", "") : "";
    if (type == "refusal" && part.contains("refusal") && part["refusal"].is_string()) {
      text += part["refusal"].get<std::string>();  // an answer's refusal is its text
      continue;
    }
    if ((type != "input_text" && type != "output_text" && type != "text") ||
        !part.contains("text") || !part["text"].is_string()) {
      fail(where, "must be a text part ({\"type\": \"input_text\", \"text\": ...})");
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

// A message item's content in chat form: a string, or parts (text and images).
json message_content(const json& content, const std::string& param) {
  if (content.is_string()) {
    return content;
  }
  if (!content.is_array()) {
    fail(param, "must be a string or an array of content parts");
  }
  json parts = json::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const json& part = content[i];
    const std::string where = param + "[" + std::to_string(i) + "]";
    const std::string type = part.is_object() ? part.value("type", "") : "";
    if ((type == "input_text" || type == "output_text" || type == "text") &&
        part.contains("text") && part["text"].is_string()) {
      parts.push_back({{"type", "text"}, {"text", part["text"]}});
    } else if (type == "refusal" && part.contains("refusal") && part["refusal"].is_string()) {
      parts.push_back({{"type", "text"}, {"text", part["refusal"]}});
    } else if (type == "input_image" && part.contains("image_url") &&
               part["image_url"].is_string()) {
      json image = {{"url", part["image_url"]}};
      if (part.contains("detail") && part["detail"].is_string()) {
        image["detail"] = part["detail"];
      }
      parts.push_back({{"type", "image_url"}, {"image_url", std::move(image)}});
    } else {
      fail(where, "must be an input_text, output_text or input_image part with an image_url; '" +
                      type + "' parts (files, image file_ids, audio) are not supported");
    }
  }
  return parts;
}

void add_message_item(const json& item, const std::string& where, json& messages) {
  const std::string role = item["role"].is_string() ? item["role"].get<std::string>() : "";
  if (role != "user" && role != "assistant" && role != "system" && role != "developer") {
    fail(where + ".role", "must be user, assistant, system or developer");
  }
  if (!item.contains("content")) {
    fail(where + ".content", "is required");
  }
  json content = message_content(item["content"], where + ".content");
  if (role == "assistant" && content.is_array()) {
    content = text_of_parts(item["content"], where + ".content");  // an answer is text
  }
  messages.push_back({{"role", role == "developer" ? "system" : role}, {"content", content}});
}

const std::string& string_member(const json& item, const char* name, const std::string& where) {
  if (!item.contains(name) || !item[name].is_string()) {
    fail(where + "." + name, "must be a string");
  }
  return item[name].get_ref<const std::string&>();
}

// Consecutive function calls are one assistant message with several tool_calls.
void add_function_call(const json& item, const std::string& where, json& messages) {
  json call = {{"id", string_member(item, "call_id", where)},
               {"type", "function"},
               {"function",
                {{"name", string_member(item, "name", where)},
                 {"arguments", string_member(item, "arguments", where)}}}};
  if (!messages.empty() && messages.back()["role"] == "assistant" &&
      messages.back().contains("tool_calls")) {
    messages.back()["tool_calls"].push_back(std::move(call));
    return;
  }
  messages.push_back(
      {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array({call})}});
}

void add_function_output(const json& item, const std::string& where, json& messages) {
  if (!item.contains("output")) {
    fail(where + ".output", "is required");
  }
  messages.push_back({{"role", "tool"},
                      {"tool_call_id", string_member(item, "call_id", where)},
                      {"content", text_of_parts(item["output"], where + ".output")}});
}

// One input item in chat form, appended to `messages`. With `native`, items of the types
// only a native Responses upstream reads (a built-in tool's call, ...) are kept as they are: a
// chat translation skips them (chat_completions_body), a native upstream gets them again.
void add_input_item(const json& item, const std::string& where, bool native, json& messages) {
  if (!item.is_object()) {
    fail(where, "must be an object");
  }
  const std::string type = item.value("type", item.contains("role") ? "message" : "");
  if (type == "message") {
    add_message_item(item, where, messages);
  } else if (type == "function_call") {
    add_function_call(item, where, messages);
  } else if (type == "function_call_output") {
    add_function_output(item, where, messages);
  } else if (type == "reasoning") {
    return;  // a previous answer's reasoning: nothing a model needs again
  } else if (native && !type.empty() && type != "item_reference") {
    messages.push_back(item);
  } else {
    fail(where + ".type", "'" + type +
                              "' items are not supported (message, function_call, "
                              "function_call_output and reasoning are; a built-in tool's items "
                              "too for a model of an upstream with `api: responses`); send the "
                              "items themselves or use previous_response_id");
  }
}

json input_messages(const json& input, bool native) {
  json messages = json::array();
  if (input.is_string()) {
    messages.push_back({{"role", "user"}, {"content", input}});
    return messages;
  }
  if (!input.is_array()) {
    fail("input", "must be a string or an array of input items");
  }
  for (size_t i = 0; i < input.size(); ++i) {
    add_input_item(input[i], "input[" + std::to_string(i) + "]", native, messages);
  }
  return messages;
}

// The function tools in chat form. With `native`, other types (built-in tools: web_search,
// file_search, ...) are left to a native Responses upstream and named in `native_only`.
json chat_tools(const json& tools, bool native, std::vector<std::string>& native_only) {
  if (!tools.is_array()) {
    fail("tools", "must be an array");
  }
  json out = json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& tool = tools[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    const std::string type = tool.is_object() ? tool.value("type", "") : "";
    if (type != "function" && native && !type.empty()) {
      native_only.push_back(where + ".type");
      continue;
    }
    if (type != "function") {
      fail(where + ".type", "'" + type +
                                "' tools are not supported: Tandem runs function tools; built-in "
                                "tools need a model of an upstream with `api: responses`");
    }
    json function = {{"name", string_member(tool, "name", where)}};
    for (const char* field : {"description", "parameters", "strict"}) {
      if (tool.contains(field) && !tool[field].is_null()) {
        function[field] = tool[field];
      }
    }
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

json chat_tool_choice(const json& choice) {
  if (choice.is_string()) {
    return choice;  // auto, none, required: the chat parser checks the value
  }
  if (choice.is_object() && choice.value("type", "") == "function" && choice.contains("name") &&
      choice["name"].is_string()) {
    return {{"type", "function"}, {"function", {{"name", choice["name"]}}}};
  }
  fail("tool_choice", "must be auto, none, required or {\"type\": \"function\", \"name\": ...}");
}

// text.format as a chat response_format; null for plain text.
json chat_response_format(const json& text) {
  if (!text.is_object()) {
    fail("text", "must be an object");
  }
  if (!text.contains("format") || text["format"].is_null()) {
    return nullptr;
  }
  const json& format = text["format"];
  const std::string type = format.is_object() ? format.value("type", "") : "";
  if (type == "text") {
    return nullptr;
  }
  if (type == "json_object") {
    return {{"type", "json_object"}};
  }
  if (type != "json_schema") {
    fail("text.format.type", "must be text, json_object or json_schema");
  }
  if (!format.contains("schema") || !format["schema"].is_object()) {
    fail("text.format.schema", "must be a JSON schema object");
  }
  json schema = {{"name", format.value("name", "response")}, {"schema", format["schema"]}};
  for (const char* field : {"strict", "description"}) {
    if (format.contains(field) && !format[field].is_null()) {
      schema[field] = format[field];
    }
  }
  return {{"type", "json_schema"}, {"json_schema", std::move(schema)}};
}

void check_fields(const json& body) {
  for (const auto& [name, value] : body.items()) {
    if (!contains(kKnown, name) && !contains(kAcceptedIgnored, name)) {
      fail(name, "unknown parameter '" + name + "'");
    }
  }
  for (const char* unsupported : {"background", "conversation", "prompt"}) {
    if (body.contains(unsupported) && !body[unsupported].is_null() && body[unsupported] != false) {
      fail(unsupported, std::string("'") + unsupported + "' is not supported");
    }
  }
}

// `tools` and `tool_choice`: translated for chat, kept for the echo; a built-in tool or a
// choice forcing one is a native upstream's only.
void read_tools(const json& body, bool native, ResponsesRequest& r) {
  json& chat = r.chat_fields;
  json& echo = r.echo;
  echo["tools"] = json::array();
  if (body.contains("tools") && !body["tools"].is_null()) {
    json tools = chat_tools(body["tools"], native, r.native_only);
    if (!tools.empty()) {
      chat["tools"] = std::move(tools);
    }
    echo["tools"] = body["tools"];
  }
  echo["tool_choice"] = "auto";
  if (body.contains("tool_choice") && !body["tool_choice"].is_null()) {
    const json& choice = body["tool_choice"];
    const bool built_in = choice.is_object() && choice.value("type", "") != "function";
    if (native && built_in) {
      r.native_only.push_back("tool_choice");  // forces a built-in tool: a native upstream's
    } else {
      chat["tool_choice"] = chat_tool_choice(choice);
    }
    echo["tool_choice"] = choice;
  }
}

// What shapes the output: `text` (its format), `max_output_tokens` and the sampling fields.
void read_output_options(const json& body, ResponsesRequest& r) {
  json& chat = r.chat_fields;
  json& echo = r.echo;
  echo["text"] = {{"format", {{"type", "text"}}}};
  if (body.contains("text") && !body["text"].is_null()) {
    if (json format = chat_response_format(body["text"]); !format.is_null()) {
      chat["response_format"] = std::move(format);
      echo["text"] = {{"format", body["text"]["format"]}};
    }
  }
  echo["max_output_tokens"] = nullptr;
  if (body.contains("max_output_tokens") && !body["max_output_tokens"].is_null()) {
    const json& max = body["max_output_tokens"];
    if (!max.is_number_integer() || max.get<int64_t>() < 1) {
      fail("max_output_tokens", "must be a positive integer");
    }
    chat["max_tokens"] = max;
    echo["max_output_tokens"] = max;
  }
  for (const char* field : {"temperature", "top_p", "parallel_tool_calls", "user"}) {
    if (body.contains(field) && !body[field].is_null()) {
      chat[field] = body[field];  // the chat parser checks them
    }
    echo[field] = body.contains(field) ? body[field] : json(nullptr);
  }
  if (echo["parallel_tool_calls"].is_null()) {
    echo["parallel_tool_calls"] = true;
  }
}

// How the response is delivered and kept: `stream`, `store`, `previous_response_id`, `metadata`.
void read_delivery(const json& body, bool default_store, ResponsesRequest& r) {
  json& echo = r.echo;
  r.stream = body.contains("stream") && body["stream"].is_boolean() && body["stream"].get<bool>();
  if (body.contains("stream") && !body["stream"].is_boolean() && !body["stream"].is_null()) {
    fail("stream", "must be true or false");
  }
  r.store = default_store;
  if (body.contains("store") && !body["store"].is_null()) {
    if (!body["store"].is_boolean()) {
      fail("store", "must be true or false");
    }
    r.store = body["store"].get<bool>();
  }
  if (body.contains("previous_response_id") && !body["previous_response_id"].is_null()) {
    r.previous_response_id = string_member(body, "previous_response_id", "body");
  }
  echo["previous_response_id"] =
      r.previous_response_id.empty() ? json(nullptr) : json(r.previous_response_id);
  echo["metadata"] = json::object();
  if (body.contains("metadata") && !body["metadata"].is_null()) {
    if (!body["metadata"].is_object()) {
      fail("metadata", "must be an object of strings");
    }
    echo["metadata"] = body["metadata"];
  }
}

ResponsesRequest parse_checked(const json& body, bool default_store,
                               const ServedNatively& served_natively) {
  check_fields(body);
  ResponsesRequest r;
  r.model = string_member(body, "model", "body");
  const bool native = served_natively && served_natively(r.model);
  if (!body.contains("input")) {
    fail("input", "is required");
  }
  r.input = input_messages(body["input"], native);
  if (body.contains("instructions") && !body["instructions"].is_null()) {
    r.instructions = string_member(body, "instructions", "body");
  }
  r.echo["instructions"] = r.instructions.empty() ? json(nullptr) : json(r.instructions);
  read_tools(body, native, r);
  read_output_options(body, r);
  read_delivery(body, default_store, r);
  r.echo["truncation"] = "disabled";
  r.body = body;
  return r;
}

}  // namespace

std::variant<ResponsesRequest, ApiError> parse_responses_request(
    std::string_view body, bool default_store, const ServedNatively& served_natively) {
  const std::variant<json, ApiError> document =
      parse_request_object(body, invalid_request("the request body must be a JSON object"));
  if (const auto* error = std::get_if<ApiError>(&document)) {
    return *error;
  }
  try {
    return parse_checked(std::get<json>(document), default_store, served_natively);
  } catch (const BadField& bad) {
    return invalid_request(bad.param + ": " + bad.message, bad.param);
  } catch (const json::exception& e) {
    return invalid_request(std::string("the request body has the wrong shape: ") + e.what());
  }
}

std::string chat_completions_body(const ResponsesRequest& request) {
  json body = request.chat_fields;
  body["model"] = request.model;
  json messages = json::array();
  if (!request.instructions.empty()) {
    messages.push_back({{"role", "system"}, {"content", request.instructions}});
  }
  // Items kept for a native upstream (no role) mean nothing in chat.
  for (const json* part : {&request.history, &request.input}) {
    for (const json& m : *part) {
      if (m.contains("role")) {
        messages.push_back(m);
      }
    }
  }
  body["messages"] = std::move(messages);
  if (request.stream) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  return dump(body);
}

json conversation_after_native(const ResponsesRequest& request, const json& output) {
  json conversation = request.history;
  for (const json& m : request.input) {
    conversation.push_back(m);
  }
  if (!output.is_array()) {
    return conversation;
  }
  for (const json& item : output) {
    try {
      add_input_item(item, "output", /*native=*/true, conversation);
    } catch (const BadField&) {
      continue;  // an item the next turn could not send either
    } catch (const json::exception&) {
      continue;
    }
  }
  return conversation;
}

json conversation_after(const ResponsesRequest& request, const WholeAnswer& answer) {
  json conversation = request.history;
  for (const json& m : request.input) {
    conversation.push_back(m);
  }
  json reply = {{"role", "assistant"},
                {"content", answer.text.empty() && !answer.tool_calls.empty() ? json(nullptr)
                                                                              : json(answer.text)}};
  if (!answer.tool_calls.empty()) {
    json calls = json::array();
    for (const ToolCallDelta& call : answer.tool_calls) {
      calls.push_back({{"id", call.id},
                       {"type", "function"},
                       {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
    }
    reply["tool_calls"] = std::move(calls);
  }
  conversation.push_back(std::move(reply));
  return conversation;
}

}  // namespace tandem::server
