// An upstream that speaks the Responses API (`api: responses`): the call to POST
// base_url/responses and the checks on what comes back. The events are relayed to the client
// nearly as sent, so what is checked is what the gateway itself reads — the event's type, the
// final Response's output list and usage — and what would leave the client without an answer:
// an error event, a failed response, a stream that never finishes.

#include <string>

#include "common/json_depth.h"
#include "common/json_kind.h"
#include "common/log.h"
#include "net/sse.h"
#include "upstream/reply_parts.h"
#include "upstream/upstream.h"

namespace tandem::upstream {
namespace {

using nlohmann::json;
using Kind = HttpFailure::Kind;
using detail::make_failure;
using detail::named_failure;

Error malformed(const std::string& what) {
  return make_error(ErrorCode::kInternal,
                    "the upstream sent a malformed Responses answer: " + what);
}

// The message of an error object ({"message": ...}), or `fallback`.
std::string message_of(const json& error, const std::string& fallback) {
  if (error.is_object()) {
    const auto message = error.find("message");
    if (message != error.end() && message->is_string()) {
      return message->get<std::string>();
    }
  }
  return error.is_string() ? error.get<std::string>() : fallback;
}

// usage.input_tokens, output_tokens and input_tokens_details.cached_tokens; nullopt when the
// Response reports no usage (absent or null).
std::optional<CloudUsage> usage_of(const json& response, std::string& problems) {
  const auto usage = response.find("usage");
  if (usage == response.end() || usage->is_null()) {
    return std::nullopt;
  }
  if (!usage->is_object()) {
    problems = "usage is " + json_kind(*usage);
    return std::nullopt;
  }
  CloudUsage u;
  u.prompt_tokens = detail::token_count(*usage, "input_tokens", "usage.", problems);
  u.completion_tokens = detail::token_count(*usage, "output_tokens", "usage.", problems);
  const auto details = usage->find("input_tokens_details");
  if (details != usage->end() && details->is_object()) {
    u.cached_prompt_tokens =
        detail::token_count(*details, "cached_tokens", "usage.input_tokens_details.", problems);
  }
  return u;
}

// The output_text of a message item's content; "" for other items or parts.
std::string message_text(const json& item) {
  std::string text;
  const auto content = item.find("content");
  if (item.value("type", "") != "message" || content == item.end() || !content->is_array()) {
    return text;
  }
  for (const json& part : *content) {
    if (part.is_object() && part.value("type", "") == "output_text") {
      const auto piece = part.find("text");
      if (piece != part.end() && piece->is_string()) {
        text += piece->get_ref<const std::string&>();
      }
    }
  }
  return text;
}

// Checks a final Response and reads what the gateway needs of it into `event`.
Status read_final(const json& response, ResponsesEvent& event) {
  if (!response.is_object()) {
    return malformed("the response is " + json_kind(response) + ", not an object");
  }
  if (const auto error = response.find("error"); error != response.end() && !error->is_null()) {
    return make_error(ErrorCode::kInternal, "the upstream answered with an error: " +
                                                message_of(*error, "an error object"));
  }
  if (const auto status = response.find("status");
      status != response.end() && status->is_string() && *status == "failed") {
    return make_error(ErrorCode::kInternal, "the upstream's response failed");
  }
  const auto output = response.find("output");
  if (output == response.end() || !output->is_array()) {
    return malformed(output == response.end() ? "it has no output"
                                              : "output is " + json_kind(*output));
  }
  for (size_t i = 0; i < output->size(); ++i) {
    const json& item = (*output)[i];
    const std::string where = "output[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      return malformed(where + " is " + json_kind(item) + ", not an object");
    }
    const auto type = item.find("type");
    if (type == item.end() || !type->is_string()) {
      return malformed(where + " has no type");
    }
    event.text += message_text(item);
  }
  event.final = true;
  event.usage = usage_of(response, event.usage_problem);
  if (const auto model = response.find("model"); model != response.end() && model->is_string()) {
    event.model = model->get<std::string>();
  }
  return {};
}

Result<json> parse_object(const std::string& text, const char* what) {
  if (json_nesting_depth(text) > kMaxJsonDepth) {
    return malformed(std::string(what) + " nests deeper than " + std::to_string(kMaxJsonDepth) +
                     " levels");
  }
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return malformed(std::string(what) + " is not a JSON object: '" + text.substr(0, 80) + "'");
  }
  return parsed;
}

}  // namespace

Result<ResponsesEvent> parse_responses_event(const std::string& data) {
  auto parsed = parse_object(data, "a stream event");
  if (!parsed) {
    return parsed.error();
  }
  ResponsesEvent event;
  const auto type = parsed->find("type");
  if (type == parsed->end() || !type->is_string()) {
    return malformed("a stream event has no type");
  }
  event.type = type->get<std::string>();
  if (event.type == "error") {
    const auto error = parsed->find("error");
    const json& holder = error != parsed->end() ? *error : *parsed;
    return make_error(ErrorCode::kInternal, "the upstream reported an error mid-stream: " +
                                                message_of(holder, "an error event"));
  }
  const auto response = parsed->find("response");
  if (event.type == "response.failed") {
    std::string message = "the upstream's response failed";
    if (response != parsed->end() && response->is_object() && response->contains("error")) {
      message += ": " + message_of((*response)["error"], "no message");
    }
    return make_error(ErrorCode::kInternal, message);
  }
  if (event.type == "response.completed" || event.type == "response.incomplete") {
    if (response == parsed->end()) {
      return malformed(event.type + " has no response");
    }
    if (Status read = read_final(*response, event); !read) {
      return read.error();
    }
  } else if (event.type == "response.output_text.delta") {
    const auto delta = parsed->find("delta");
    if (delta != parsed->end() && delta->is_string()) {
      event.text = delta->get<std::string>();
    }
  }
  event.data = std::move(parsed).value();
  return event;
}

Result<ResponsesEvent> parse_responses_answer(const std::string& body) {
  auto parsed = parse_object(body, "the response");
  if (!parsed) {
    return parsed.error();
  }
  ResponsesEvent event;
  event.type = "response";
  if (Status read = read_final(*parsed, event); !read) {
    return read.error();
  }
  event.data = std::move(parsed).value();
  return event;
}

net::awaitable<std::optional<UpstreamFailure>> Upstream::respond(const ResponsesCall& call,
                                                                 const ResponsesSink& sink,
                                                                 CancelSignal& cancel) {
  const Attempt once = [&](bool& delivered) {
    return attempt_responses(call, sink, cancel, delivered);
  };
  auto failure = co_await with_retries(once, cancel);
  co_return failure;
}

net::awaitable<std::optional<UpstreamFailure>> Upstream::attempt_responses(
    const ResponsesCall& call, const ResponsesSink& sink, CancelSignal& cancel, bool& delivered) {
  std::vector<JsonMember> members = {{"stream", call.stream ? "true" : "false"}};
  // GCC 12 mis-handles temporaries in co_await arguments: every argument is named.
  const std::string path = "/responses";
  const std::string& model = config_.models.at(call.public_model);
  const char* accept = call.stream ? "text/event-stream" : "application/json";
  auto opened =
      co_await post(path, *call.body, std::move(members), model, call.egress, accept, cancel);
  if (auto* failed = std::get_if<UpstreamFailure>(&opened)) {
    co_return std::move(*failed);
  }
  auto exchange = std::move(std::get<std::unique_ptr<HttpExchange>>(opened));
  CancelRegistration registration(cancel, [raw = exchange.get()] { raw->cancel(); });
  if (call.stream) {
    auto failure = co_await relay_responses_stream(*exchange, sink, cancel, delivered);
    co_return failure;
  }
  auto whole = co_await read_json(*exchange);
  if (auto* failed = std::get_if<UpstreamFailure>(&whole)) {
    co_return std::move(*failed);
  }
  auto event = parse_responses_answer(std::get<std::string>(whole));
  if (!event) {
    co_return make_failure(config_.name, Kind::kProtocol,
                           "upstream " + config_.name + ": " + event.error().message);
  }
  note_usage_problem(event->usage_problem);
  delivered = true;
  if (!co_await sink(std::move(event).value())) {
    cancel.cancel();
    co_return make_failure(config_.name, Kind::kCancelled, "the client went away");
  }
  co_return std::nullopt;
}

net::awaitable<std::optional<UpstreamFailure>> Upstream::relay_responses_stream(
    HttpExchange& exchange, const ResponsesSink& sink, CancelSignal& cancel, bool& delivered) {
  if (exchange.content_type().rfind("text/event-stream", 0) != 0) {
    co_return make_failure(config_.name, Kind::kProtocol,
                           "upstream " + config_.name + " answered with Content-Type '" +
                               exchange.content_type() + "', expected text/event-stream");
  }
  net::SseParser parser;
  std::vector<std::string> events;
  while (true) {
    auto part = co_await exchange.read_some();
    if (auto* failed = std::get_if<HttpFailure>(&part)) {
      co_return named_failure(config_.name, std::move(*failed));
    }
    const std::string& bytes = std::get<std::string>(part);
    if (bytes.empty()) {
      co_return make_failure(
          config_.name, Kind::kProtocol,
          "upstream " + config_.name + " ended the stream before response.completed");
    }
    events.clear();
    if (auto status = parser.feed(bytes, events); !status) {
      co_return make_failure(config_.name, Kind::kProtocol, status.error().message);
    }
    for (const auto& data : events) {
      if (data == "[DONE]") {
        continue;  // not OpenAI's Responses stream, but some compatible servers end with it
      }
      auto event = parse_responses_event(data);
      if (!event) {
        co_return make_failure(config_.name, Kind::kProtocol,
                               "upstream " + config_.name + ": " + event.error().message);
      }
      note_usage_problem(event->usage_problem);
      const bool final = event->final;
      delivered = delivered || event->has_output();
      if (!co_await sink(std::move(event).value())) {
        cancel.cancel();
        co_return make_failure(config_.name, Kind::kCancelled, "the client went away");
      }
      if (final) {
        // Read the stream's terminating chunk too, so the connection can be pooled.
        auto rest = co_await exchange.read_some();
        if (std::holds_alternative<std::string>(rest) && !std::get<std::string>(rest).empty()) {
          co_await exchange.read_all(4 << 10);
        }
        co_return std::nullopt;
      }
    }
  }
}

}  // namespace tandem::upstream
