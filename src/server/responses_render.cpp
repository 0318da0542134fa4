// The Responses API, the answer side: the Response object, its output items and the stream's
// event sequence (responses_api.cpp translates the request).

#include <chrono>
#include <utility>

#include "server/responses_api.h"

namespace tandem::server {

using json = nlohmann::json;

namespace {

json usage_json(const TierUsage& usage) {
  return {{"input_tokens", usage.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", usage.cached_prompt_tokens}}},
          {"output_tokens", usage.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

// "resp_abc" -> "abc": item ids share their response's random part.
std::string id_suffix(const ResponseHead& head) {
  const size_t underscore = head.id.find('_');
  return underscore == std::string::npos ? head.id : head.id.substr(underscore + 1);
}

std::string message_id(const ResponseHead& head) {
  return "msg_" + id_suffix(head);
}

std::string call_item_id(const ResponseHead& head, size_t index) {
  return "fc_" + id_suffix(head) + "_" + std::to_string(index);
}

json message_item(const ResponseHead& head, const std::string& text, const char* status) {
  json content = json::array();
  if (status != std::string_view("in_progress")) {
    content.push_back({{"type", "output_text"},
                       {"text", text},
                       {"annotations", json::array()},
                       {"logprobs", json::array()}});
  }
  return {{"type", "message"},
          {"id", message_id(head)},
          {"status", status},
          {"role", "assistant"},
          {"content", std::move(content)}};
}

json call_item(const ResponseHead& head, const ToolCallDelta& call, const char* status) {
  return {{"type", "function_call"}, {"id", call_item_id(head, call.index)}, {"call_id", call.id},
          {"name", call.name},       {"arguments", call.arguments},          {"status", status}};
}

}  // namespace

ResponseHead new_response_head(const std::string& model) {
  ResponseHead head;
  head.id = new_request_id("resp_");
  head.created_at = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  head.model = model;
  return head;
}

json output_items(const ResponseHead& head, const WholeAnswer& answer) {
  json items = json::array();
  if (!answer.text.empty() || answer.tool_calls.empty()) {
    items.push_back(message_item(head, answer.text, "completed"));
  }
  for (const ToolCallDelta& call : answer.tool_calls) {
    items.push_back(call_item(head, call, "completed"));
  }
  return items;
}

json response_object(const ResponseHead& head, const ResponsesRequest& request, const json& output,
                     const Outcome* outcome, const DecisionRecord* record, const ApiError* error) {
  json r = {{"id", head.id},
            {"object", "response"},
            {"created_at", head.created_at},
            {"model", head.model},
            {"output", output},
            {"error", nullptr},
            {"incomplete_details", nullptr},
            {"usage", nullptr},
            {"store", request.store}};
  for (const auto& [name, value] : request.echo.items()) {
    r[name] = value;
  }
  std::string status = "in_progress";
  if (error != nullptr) {
    status = "failed";
    r["error"] = {{"code", error->code.empty() ? std::string(error_type(*error)) : error->code},
                  {"message", error->message}};
  } else if (outcome != nullptr) {
    status = "completed";
    if (outcome->finish_reason == "length" || outcome->finish_reason == "content_filter") {
      status = "incomplete";
      r["incomplete_details"] = {
          {"reason", outcome->finish_reason == "length" ? "max_output_tokens" : "content_filter"}};
    }
    r["usage"] = usage_json(outcome->usage);
  }
  r["status"] = status;
  if (record != nullptr) {
    r["tandem"] = record->to_json();
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// ResponsesEvents

ResponsesEvents::ResponsesEvents(ResponseHead head, const ResponsesRequest& request)
    : head_(std::move(head)), request_(request) {}

json ResponsesEvents::event(const char* type, json fields) {
  fields["type"] = type;
  fields["sequence_number"] = sequence_++;
  return fields;
}

json ResponsesEvents::item_json(size_t output_index, const char* status) const {
  const Item& item = items_[output_index];
  if (item.message) {
    return message_item(head_, answer_.text, status);
  }
  for (const ToolCallDelta& call : answer_.tool_calls) {
    if (call.index == item.call_index) {
      return call_item(head_, call, status);
    }
  }
  return call_item(head_, ToolCallDelta{item.call_index, {}, {}, {}}, status);
}

json ResponsesEvents::output() const {
  if (native_) {
    return native_output_;
  }
  json items = json::array();
  for (size_t i = 0; i < items_.size(); ++i) {
    items.push_back(item_json(i, "completed"));
  }
  return items;
}

std::vector<json> ResponsesEvents::begin(const DecisionRecord& record) {
  json created = response_object(head_, request_, json::array(), nullptr, nullptr, nullptr);
  created["tandem"] = record.to_json();
  std::vector<json> events;
  events.push_back(event("response.created", {{"response", created}}));
  events.push_back(event("response.in_progress", {{"response", std::move(created)}}));
  return events;
}

void ResponsesEvents::open_message(std::vector<json>& events) {
  message_ = items_.size();
  items_.push_back(Item{true, 0, false});
  events.push_back(
      event("response.output_item.added",
            {{"output_index", *message_}, {"item", item_json(*message_, "in_progress")}}));
  events.push_back(event("response.content_part.added", {{"item_id", message_id(head_)},
                                                         {"output_index", *message_},
                                                         {"content_index", 0},
                                                         {"part",
                                                          {{"type", "output_text"},
                                                           {"text", ""},
                                                           {"annotations", json::array()},
                                                           {"logprobs", json::array()}}}}));
}

std::vector<json> ResponsesEvents::piece(const Piece& piece) {
  std::vector<json> events;
  if (!piece.text.empty()) {
    if (!message_) {
      open_message(events);
    }
    answer_.text += piece.text;
    events.push_back(event("response.output_text.delta", {{"item_id", message_id(head_)},
                                                          {"output_index", *message_},
                                                          {"content_index", 0},
                                                          {"delta", piece.text},
                                                          {"logprobs", json::array()}}));
  }
  for (const ToolCallDelta& delta : piece.tool_calls) {
    size_t output_index = items_.size();
    for (size_t i = 0; i < items_.size(); ++i) {
      if (!items_[i].message && items_[i].call_index == delta.index) {
        output_index = i;
      }
    }
    // The id and name first (a call's first delta has them), so that the added item shows them
    // with no arguments yet.
    append_tool_calls(answer_.tool_calls, {ToolCallDelta{delta.index, delta.id, delta.name, {}}});
    if (output_index == items_.size()) {
      items_.push_back(Item{false, delta.index, false});
      events.push_back(event(
          "response.output_item.added",
          {{"output_index", output_index}, {"item", item_json(output_index, "in_progress")}}));
    }
    if (!delta.arguments.empty()) {
      append_tool_calls(answer_.tool_calls, {ToolCallDelta{delta.index, {}, {}, delta.arguments}});
      events.push_back(event("response.function_call_arguments.delta",
                             {{"item_id", call_item_id(head_, delta.index)},
                              {"output_index", output_index},
                              {"delta", delta.arguments}}));
    }
  }
  return events;
}

std::vector<json> ResponsesEvents::revise(const json& revision) {
  answer_ = WholeAnswer{};
  std::vector<json> events;
  events.push_back(event("tandem.revision", {{"revision", revision}}));
  return events;
}

void ResponsesEvents::close_items(std::vector<json>& events) {
  for (size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].done) {
      continue;
    }
    items_[i].done = true;
    json item = item_json(i, "completed");
    if (items_[i].message) {
      json part = item["content"][0];
      events.push_back(event("response.output_text.done", {{"item_id", item["id"]},
                                                           {"output_index", i},
                                                           {"content_index", 0},
                                                           {"text", answer_.text},
                                                           {"logprobs", json::array()}}));
      events.push_back(event("response.content_part.done", {{"item_id", item["id"]},
                                                            {"output_index", i},
                                                            {"content_index", 0},
                                                            {"part", std::move(part)}}));
    } else {
      events.push_back(
          event("response.function_call_arguments.done", {{"item_id", item["id"]},
                                                          {"output_index", i},
                                                          {"name", item["name"]},
                                                          {"arguments", item["arguments"]}}));
    }
    events.push_back(
        event("response.output_item.done", {{"output_index", i}, {"item", std::move(item)}}));
  }
}

std::vector<json> ResponsesEvents::finish(const Outcome& outcome, const DecisionRecord& record) {
  std::vector<json> events;
  if (items_.empty()) {
    open_message(events);  // an empty answer is still a message, as in the whole response
  }
  close_items(events);
  json response = response_object(head_, request_, output(), &outcome, &record, nullptr);
  const char* type =
      response["status"] == "incomplete" ? "response.incomplete" : "response.completed";
  events.push_back(event(type, {{"response", std::move(response)}}));
  return events;
}

std::vector<json> ResponsesEvents::fail(const ApiError& error, const DecisionRecord& record) {
  std::vector<json> events;
  json response = response_object(head_, request_, output(), nullptr, &record, &error);
  events.push_back(event("response.failed", {{"response", std::move(response)}}));
  return events;
}

}  // namespace tandem::server
