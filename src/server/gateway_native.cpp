// A Responses request answered by an upstream that speaks the Responses API itself
// (`api: responses`): the client's body goes out as it came (through the egress guard like any
// other), and the upstream's events come back to the sink as it sent them. Only the Responses
// API's sinks render them (responses_sinks.cpp); the defaults below let any other sink read
// such an answer as text.

#include "server/gateway.h"
#include "server/gateway_util.h"

namespace tandem::server {
namespace {

using nlohmann::json;

// The finish reason a chat answer would have had: what traces and metrics count.
std::string finish_reason_of(const json& response) {
  const auto details = response.find("incomplete_details");
  if (response.value("status", "") == "incomplete" && details != response.end() &&
      details->is_object()) {
    const std::string reason = details->value("reason", "");
    return reason == "content_filter" ? "content_filter" : "length";
  }
  const auto output = response.find("output");  // checked: a list of typed items
  for (const json& item : *output) {
    if (item.value("type", "") == "function_call") {
      return "tool_calls";
    }
  }
  return "stop";
}

}  // namespace

net::awaitable<bool> ResponseSink::native_event(const json& event) {
  const auto delta = event.find("delta");
  if (event.value("type", "") != "response.output_text.delta" || delta == event.end() ||
      !delta->is_string()) {
    co_return true;
  }
  Piece text;
  text.text = delta->get<std::string>();
  const bool delivered = co_await piece(text);
  co_return delivered;
}

net::awaitable<void> ResponseSink::native_finish(const NativeAnswer&, const Outcome& outcome,
                                                 const DecisionRecord& record) {
  co_await finish(outcome, record);
}

net::awaitable<std::optional<upstream::UpstreamFailure>> Gateway::cloud_native(
    Run& run, upstream::Upstream& u, const std::string& model, CloudResult& result) {
  upstream::ResponsesCall call;
  call.public_model = model;
  call.body = &run.request.responses_body;
  call.stream = run.request.stream;
  call.egress = egress(run.record, "answer");
  // response.created and response.in_progress wait for the first output: a retry after them
  // starts again with its own, and the client sees one response.
  std::vector<json> held;
  bool model_seen = false;
  const auto release_held = [&]() -> net::awaitable<bool> {
    run.record.cloud_upstream = u.name();
    run.record.cloud_model = u.config().models.at(model);
    run.record.native_answer = true;
    if (!co_await start_answer(run, "cloud")) {
      co_return false;
    }
    for (const json& event : held) {
      if (!co_await run.sink.native_event(event)) {
        co_return false;
      }
    }
    held.clear();
    co_return true;
  };
  upstream::Upstream::ResponsesSink relay =
      [&](upstream::ResponsesEvent&& event) -> net::awaitable<bool> {
    if (!model_seen && !event.model.empty()) {
      model_seen = true;
      observe_cloud_model(u, event.model);
    }
    if (event.final) {
      // Written by native_finish() with the decision record, once usage and cost are known.
      result.usage = event.usage;
      json response =
          event.type == "response" ? std::move(event.data) : std::move(event.data["response"]);
      result.finish_reason = finish_reason_of(response);
      const std::string type = event.type == "response" ? "response.completed" : event.type;
      result.native = NativeAnswer{type, std::move(response), std::move(event.text)};
      const bool released = co_await release_held();
      co_return released;
    }
    if (!event.has_output()) {
      if (event.type == "response.created") {
        held.clear();  // a new attempt
      }
      held.push_back(std::move(event.data));
      co_return true;
    }
    if (!co_await release_held()) {
      co_return false;
    }
    const bool delivered = co_await run.sink.native_event(event.data);
    co_return delivered;
  };
  auto failure = co_await u.respond(call, relay, run.cancel);
  co_return failure;
}

}  // namespace tandem::server
