// fault_upstream's Responses API: see fault_responses.h.

#include "fault_responses.h"

#include <array>
#include <cctype>
#include <ctime>
#include <string_view>
#include <utility>

namespace fault_responses {
namespace {

constexpr std::int64_t kMaxPieces = 100000;
constexpr std::array<std::string_view, 6> kWords = {"Hello", "from",     "the",
                                                    "fault", "upstream", "."};

std::int64_t count_words(std::string_view text) {
  std::int64_t words = 0;
  bool in_word = false;
  for (const char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    words += !space && !in_word ? 1 : 0;
    in_word = !space;
  }
  return words;
}

// The words of every string under `value` (texts, parts, items), and the last text seen.
std::int64_t input_words(const Json& value, std::string& last_text) {
  if (value.is_string()) {
    last_text = value.get<std::string>();
    return count_words(last_text);
  }
  std::int64_t words = 0;
  if (value.is_array()) {
    for (const Json& part : value) {
      words += input_words(part, last_text);
    }
  } else if (value.is_object()) {
    for (const char* key : {"content", "text", "output"}) {
      if (value.contains(key)) {
        words += input_words(value[key], last_text);
      }
    }
  }
  return words;
}

std::vector<std::string> pieces_of(std::int64_t count) {
  std::vector<std::string> pieces;
  for (std::int64_t i = 0; i < count; ++i) {
    pieces.push_back((i == 0 ? "" : " ") + std::string(kWords[i % kWords.size()]));
  }
  return pieces;
}

std::string joined(const std::vector<std::string>& pieces) {
  std::string text;
  for (const auto& piece : pieces) {
    text += piece;
  }
  return text;
}

Json output_text(const std::string& text, const Json& annotations) {
  return {{"type", "output_text"},
          {"text", text},
          {"annotations", annotations},
          {"logprobs", Json::array()}};
}

Json citations(const Request& request, const std::string& text) {
  if (!request.web_search) {
    return Json::array();
  }
  return Json::array({{{"type", "url_citation"},
                       {"start_index", 0},
                       {"end_index", static_cast<std::int64_t>(text.size())},
                       {"url", "https://example.com/fault"},
                       {"title", "The fault upstream"}}});
}

Json message_item(const std::string& id, const std::string& status, const Json& content) {
  return {{"id", "msg_" + id},
          {"type", "message"},
          {"status", status},
          {"content", content},
          {"role", "assistant"}};
}

Json search_item(const Request& request, const std::string& id, const std::string& status) {
  return {{"id", "ws_" + id},
          {"type", "web_search_call"},
          {"status", status},
          {"action", {{"type", "search"}, {"query", request.query}}}};
}

constexpr std::string_view kCallArguments = R"({"city": "Paris"})";

Json call_item(const std::string& id, const std::string& status, std::string_view arguments) {
  return {{"id", "fc_" + id},       {"type", "function_call"},   {"status", status},
          {"arguments", arguments}, {"call_id", "call_fault_0"}, {"name", "get_weather"}};
}

Json usage(std::int64_t input, std::int64_t output, Shape shape) {
  if (shape == Shape::kMalformedUsage) {
    return {{"input_tokens", nullptr},
            {"input_tokens_details", {{"cached_tokens", -3}}},
            {"output_tokens", std::to_string(output)},
            {"output_tokens_details", {{"reasoning_tokens", 0}}},
            {"total_tokens", 1.5}};
  }
  return {{"input_tokens", input},
          {"input_tokens_details", {{"cached_tokens", 0}}},
          {"output_tokens", output},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", input + output}};
}

// The Response object; `output` null leaves it in progress (no output, usage or status end).
Json response(const Request& request, const std::string& id, const Json& output, Shape shape) {
  const bool done = !output.is_null();
  const std::int64_t output_tokens = shape == Shape::kToolCall ? 7 : request.pieces;
  Json r = {{"id", "resp_" + id},
            {"object", "response"},
            {"created_at", static_cast<std::int64_t>(std::time(nullptr))},
            {"status", done ? "completed" : "in_progress"},
            {"error", nullptr},
            {"incomplete_details", nullptr},
            {"model", request.model},
            {"output", done ? output : Json::array()},
            {"parallel_tool_calls", true},
            {"usage", done ? usage(request.input_tokens, output_tokens, shape) : Json(nullptr)}};
  for (const auto& [key, value] : request.echo.items()) {
    r[key] = value;
  }
  if (done && shape == Shape::kFailed) {
    r["status"] = "failed";
    r["error"] = {{"code", "server_error"},
                  {"message", "The model failed to answer (injected by fault_upstream)."}};
  }
  return r;
}

// The finished output items.
Json final_output(const Request& request, const std::string& id, Shape shape) {
  Json output = Json::array();
  if (shape == Shape::kToolCall) {
    output.push_back(call_item(id, "completed", kCallArguments));
    return output;
  }
  if (request.web_search) {
    output.push_back(search_item(request, id, "completed"));
  }
  const std::string text = joined(pieces_of(request.pieces));
  output.push_back(
      message_item(id, "completed", Json::array({output_text(text, citations(request, text))})));
  return output;
}

// Numbers and frames the events of one stream.
class Events {
 public:
  void add(const char* type, Json fields) {
    Json event = {{"type", type}, {"sequence_number", sequence_++}};
    for (auto& [key, value] : fields.items()) {
      event[key] = std::move(value);
    }
    framed_.push_back("event: " + std::string(type) + "\ndata: " + event.dump() + "\n\n");
  }
  void raw(std::string text) { framed_.push_back(std::move(text)); }
  std::vector<std::string> take() { return std::move(framed_); }

 private:
  std::int64_t sequence_ = 0;
  std::vector<std::string> framed_;
};

void add_search(Events& events, const Request& request, const std::string& id) {
  const Json item_id = "ws_" + id;
  events.add("response.output_item.added",
             {{"output_index", 0}, {"item", search_item(request, id, "in_progress")}});
  for (const char* step :
       {"response.web_search_call.in_progress", "response.web_search_call.searching",
        "response.web_search_call.completed"}) {
    events.add(step, {{"output_index", 0}, {"item_id", item_id}});
  }
  events.add("response.output_item.done",
             {{"output_index", 0}, {"item", search_item(request, id, "completed")}});
}

void add_call(Events& events, const std::string& id) {
  const Json item_id = "fc_" + id;
  events.add("response.output_item.added",
             {{"output_index", 0}, {"item", call_item(id, "in_progress", "")}});
  const std::string_view arguments = kCallArguments;
  for (const std::string_view part : {arguments.substr(0, 9), arguments.substr(9)}) {
    events.add("response.function_call_arguments.delta",
               {{"item_id", item_id}, {"output_index", 0}, {"delta", part}});
  }
  events.add("response.function_call_arguments.done",
             {{"item_id", item_id}, {"output_index", 0}, {"arguments", kCallArguments}});
  events.add("response.output_item.done",
             {{"output_index", 0}, {"item", call_item(id, "completed", kCallArguments)}});
}

// The message's events; false when the stream breaks off inside it (kMalformedEvent).
bool add_message(Events& events, const Request& request, const std::string& id, Shape shape) {
  const std::int64_t index = request.web_search ? 1 : 0;
  const Json item_id = "msg_" + id;
  events.add("response.output_item.added",
             {{"output_index", index}, {"item", message_item(id, "in_progress", Json::array())}});
  events.add("response.content_part.added", {{"item_id", item_id},
                                             {"output_index", index},
                                             {"content_index", 0},
                                             {"part", output_text("", Json::array())}});
  const std::vector<std::string> pieces = pieces_of(request.pieces);
  for (size_t i = 0; i < pieces.size(); ++i) {
    events.add("response.output_text.delta", {{"item_id", item_id},
                                              {"output_index", index},
                                              {"content_index", 0},
                                              {"delta", pieces[i]},
                                              {"logprobs", Json::array()}});
    if (shape == Shape::kMalformedEvent) {
      events.raw("event: response.output_text.delta\ndata: {not json\n\n");
      return false;
    }
  }
  const std::string text = joined(pieces);
  const Json part = output_text(text, citations(request, text));
  events.add("response.output_text.done", {{"item_id", item_id},
                                           {"output_index", index},
                                           {"content_index", 0},
                                           {"text", text},
                                           {"logprobs", Json::array()}});
  events.add("response.content_part.done",
             {{"item_id", item_id}, {"output_index", index}, {"content_index", 0}, {"part", part}});
  events.add(
      "response.output_item.done",
      {{"output_index", index}, {"item", message_item(id, "completed", Json::array({part}))}});
  return true;
}

}  // namespace

std::optional<BadField> parse_request(const Json& body, Request& out) {
  const auto input = body.find("input");
  if (input == body.end() || !(input->is_string() || input->is_array())) {
    return BadField{"input must be a string or an array of input items", "input"};
  }
  out.input_tokens = input_words(*input, out.query);
  if (const auto stream = body.find("stream"); stream != body.end() && !stream->is_null()) {
    if (!stream->is_boolean()) {
      return BadField{"stream must be a boolean", "stream"};
    }
    out.stream = stream->get<bool>();
  }
  if (const auto max = body.find("max_output_tokens"); max != body.end() && !max->is_null()) {
    if (!max->is_number_integer() || *max < 1 || *max > kMaxPieces) {
      return BadField{"max_output_tokens must be an integer in [1, 100000]", "max_output_tokens"};
    }
    out.pieces = max->get<std::int64_t>();
  }
  if (const auto tools = body.find("tools"); tools != body.end() && tools->is_array()) {
    for (const Json& tool : *tools) {
      const std::string type = tool.is_object() ? tool.value("type", "") : "";
      out.web_search = out.web_search || type == "web_search" || type == "web_search_preview";
    }
  }
  for (const char* key : {"instructions", "tools", "tool_choice", "store", "previous_response_id",
                          "max_output_tokens", "temperature", "metadata"}) {
    out.echo[key] = body.contains(key) ? body[key] : Json(nullptr);
  }
  return std::nullopt;
}

std::string whole(const Request& request, const std::string& id, Shape shape) {
  if (shape == Shape::kMalformedEvent) {
    return "{not json";
  }
  Json r = response(request, id, final_output(request, id, shape), shape);
  if (shape == Shape::kNoOutput) {
    r.erase("output");
  } else if (shape == Shape::kMalformedOutput) {
    r["output"] = "none";
  }
  return r.dump();
}

std::vector<std::string> stream(const Request& request, const std::string& id, Shape shape) {
  Events events;
  const Json opening = response(request, id, nullptr, shape);
  events.add("response.created", {{"response", opening}});
  events.add("response.in_progress", {{"response", opening}});
  if (shape == Shape::kToolCall) {
    add_call(events, id);
  } else {
    if (request.web_search) {
      add_search(events, request, id);
    }
    if (!add_message(events, request, id, shape)) {
      return events.take();
    }
  }
  if (shape == Shape::kUnfinished) {
    return events.take();
  }
  Json final_response = response(request, id, final_output(request, id, shape), shape);
  if (shape == Shape::kFailed) {
    events.add("response.failed", {{"response", final_response}});
    return events.take();
  }
  if (shape == Shape::kNoOutput) {
    final_response.erase("output");
  } else if (shape == Shape::kMalformedOutput) {
    final_response["output"] = Json::array({42});
  }
  events.add("response.completed", {{"response", final_response}});
  return events.take();
}

}  // namespace fault_responses
