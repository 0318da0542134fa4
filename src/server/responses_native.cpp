// The Responses API with a native upstream (responses_native.h): its request body, and its
// answer relabelled as Tandem's, whole or event by event (ResponsesEvents' native side).

#include "server/responses_native.h"

#include <utility>

namespace tandem::server {

using json = nlohmann::json;

namespace {

// A chat message's content as a Responses message's: text parts become input_text (or, in an
// answer, output_text) and image parts input_image; a string stays a string.
json content_of(const json& content, bool answer) {
  if (!content.is_array()) {
    return content;
  }
  json parts = json::array();
  for (const json& part : content) {
    const std::string type = part.is_object() ? part.value("type", "") : "";
    const auto image_url = type == "image_url" ? part.find("image_url") : part.end();
    if (type == "text") {
      parts.push_back(
          {{"type", answer ? "output_text" : "input_text"}, {"text", part.value("text", "")}});
    } else if (image_url != part.end() && image_url->is_object()) {
      json image = {{"type", "input_image"}, {"image_url", image_url->value("url", "")}};
      if (const auto detail = image_url->find("detail"); detail != image_url->end()) {
        image["detail"] = *detail;
      }
      parts.push_back(std::move(image));
    } else {
      parts.push_back(part);
    }
  }
  return parts;
}

void add_message_items(const json& message, json& items) {
  const std::string role = message.value("role", "");
  const json content = message.contains("content") ? message["content"] : json(nullptr);
  if (role == "tool") {
    items.push_back({{"type", "function_call_output"},
                     {"call_id", message.value("tool_call_id", "")},
                     {"output", content.is_string() ? content : json("")}});
    return;
  }
  const auto calls = message.find("tool_calls");
  const bool has_calls = calls != message.end() && calls->is_array() && !calls->empty();
  const bool has_text = content.is_array() || (content.is_string() && !content.empty());
  if (has_text || !has_calls) {
    items.push_back(
        {{"type", "message"},
         {"role", role},
         {"content", content_of(content.is_null() ? json("") : content, role == "assistant")}});
  }
  if (!has_calls) {
    return;
  }
  for (const json& call : *calls) {
    if (!call.is_object()) {
      continue;
    }
    const auto found = call.find("function");
    const json function = found != call.end() && found->is_object() ? *found : json::object();
    items.push_back({{"type", "function_call"},
                     {"call_id", call.value("id", "")},
                     {"name", function.value("name", "")},
                     {"arguments", function.value("arguments", "")}});
  }
}

// A count of an upstream's usage that is not one (null, text, a fraction, negative) reads as 0,
// as the decision record counts it: a client's typed SDK would choke on it.
void sanitise_counts(json& counts) {
  for (auto& [key, value] : counts.items()) {
    if (value.is_object()) {
      sanitise_counts(value);
    } else if (!value.is_number_unsigned() &&
               !(value.is_number_integer() && value.get<int64_t>() >= 0)) {
      value = 0;
    }
  }
}

void sanitise_usage(json& response) {
  const auto usage = response.find("usage");
  if (usage == response.end() || usage->is_null()) {
    return;
  }
  if (!usage->is_object()) {
    *usage = nullptr;
    return;
  }
  sanitise_counts(*usage);
}

}  // namespace

json input_items_of(const json& conversation) {
  json items = json::array();
  if (!conversation.is_array()) {
    return items;
  }
  for (const json& entry : conversation) {
    if (!entry.is_object()) {
      continue;
    }
    if (!entry.contains("role")) {
      items.push_back(entry);  // kept for a native upstream as it came
      continue;
    }
    add_message_items(entry, items);
  }
  return items;
}

json native_responses_body(const ResponsesRequest& request) {
  json body = request.body;
  if (!request.previous_response_id.empty()) {
    json input = input_items_of(request.history);
    const json& own = request.body["input"];
    if (own.is_string()) {
      input.push_back({{"role", "user"}, {"content", own}});
    } else {
      for (const json& item : own) {
        input.push_back(item);
      }
    }
    body["input"] = std::move(input);
  }
  // Tandem's ids are its own store's; the upstream could only refuse them.
  body.erase("previous_response_id");
  // Tandem keeps the response (store) or nothing (store: false): a copy kept upstream would be
  // one the client cannot reach through Tandem, and that no audit row tracks after it left.
  body["store"] = false;
  return body;
}

json relabelled_response(const ResponseHead& head, const ResponsesRequest& request, json response,
                         const DecisionRecord* record) {
  sanitise_usage(response);
  response["id"] = head.id;
  response["model"] = head.model;
  response["store"] = request.store;
  response["previous_response_id"] = request.echo.value("previous_response_id", json(nullptr));
  if (record != nullptr) {
    response["tandem"] = record->to_json();
  } else {
    response.erase("tandem");
  }
  return response;
}

// ---------------------------------------------------------------------------------------------
// ResponsesEvents, native side

std::vector<json> ResponsesEvents::native(json event, const DecisionRecord& begun) {
  native_ = true;
  if (!event.is_object()) {
    return {};
  }
  const std::string type = event.value("type", "");
  if (const auto response = event.find("response");
      response != event.end() && response->is_object()) {
    const bool opening = type == "response.created" || type == "response.in_progress";
    *response =
        relabelled_response(head_, request_, std::move(*response), opening ? &begun : nullptr);
  }
  if (const auto id = event.find("response_id"); id != event.end() && id->is_string()) {
    *id = head_.id;
  }
  if (type == "response.output_item.done" && event.contains("item") && event["item"].is_object()) {
    native_output_.push_back(event["item"]);
  }
  // Tandem numbers its stream: held events and a failure event of its own fit in.
  event["sequence_number"] = sequence_++;
  return {std::move(event)};
}

std::vector<json> ResponsesEvents::native_finish(const NativeAnswer& answer,
                                                 const DecisionRecord& record) {
  native_ = true;
  json response = relabelled_response(head_, request_, answer.response, &record);
  native_output_ = response["output"];
  std::vector<json> events;
  events.push_back(event(answer.type.c_str(), {{"response", std::move(response)}}));
  return events;
}

}  // namespace tandem::server
