// P3, the speculative edge: the edge answer streams at once, the cloud verifies it, and a
// marked revision follows when the judge says the edge was wrong.

#include "common/answer_match.h"
#include "net/async_queue.h"
#include "net/spawn.h"
#include "server/gateway_util.h"
#include "server/pattern_steps.h"
#include "server/patterns.h"
#include "server/responses.h"

namespace tandem::server {

using nlohmann::json;
using upstream::ApiKind;
using namespace pattern_steps;

net::awaitable<std::optional<ApiError>> run_speculative(Gateway& gateway, Gateway::Run& run) {
  const config::RoutingConfig& routing = gateway.config().routing;
  const std::string& judge = routing.speculative.judge;
  auto generation = co_await gateway.prepare_edge(run.request);
  if (auto* error = std::get_if<ApiError>(&generation)) {
    co_return *error;
  }
  const ApiKind kind = run.request.kind;

  // The cloud answers the same request while the edge streams (judges "match" and
  // "confidence"); the "prompt" judge needs the edge's answer first.
  auto executor = co_await net::asio::this_coro::executor;
  auto verdicts = std::make_shared<net::AsyncQueue<CloudResult>>(executor);
  // The verification's state is shared with its coroutine: should this frame end early (an
  // exception), the coroutine still has what it refers to, and is cancelled.
  struct Verification {
    CancelSignal cancel;
    DecisionRecord record;  // usage of the verification, merged below
  };
  auto verifying_state = std::make_shared<Verification>();
  const CancelRegistration link(run.cancel,
                                [verifying_state] { verifying_state->cancel.cancel(); });
  struct StopVerification {
    Verification& verification;
    ~StopVerification() { verification.cancel.cancel(); }
  } stop_verification{*verifying_state};
  CancelSignal& verify_cancel = verifying_state->cancel;
  DecisionRecord& verify_record = verifying_state->record;
  verify_record.request_id = run.record.request_id;
  verify_record.client = run.record.client;
  verify_record.may_leave_device = run.record.may_leave_device;
  bool verifying = false;
  auto start_verification = [&](json body) {
    verifying = true;
    // A verification that throws still gives its verdict (an error), so nobody waits for ever.
    auto failed = net::on_failure("routing", "verification", [verdicts](std::exception_ptr) {
      verdicts->push(CloudResult(
          unavailable("the verification failed inside the gateway", "internal_error", 500)));
    });
    net::asio::co_spawn(
        executor,
        [&gateway, verdicts, kind, body = std::move(body),
         state = verifying_state]() -> net::awaitable<void> {
          auto answer =
              co_await gateway.cloud_answer(kind, body, state->cancel, state->record, "verify");
          verdicts->push(std::move(answer));
        },
        std::move(failed));
  };
  if (judge != "prompt") {
    start_verification(with_logprobs(run.request.cloud_body, kind));
  }

  std::string edge_text;
  size_t offset = 0;
  bool client_left = false;
  const Gateway::TokenHandler on_token =
      [&](const engine::TokenEvent& event) -> net::awaitable<bool> {
    auto piece = gateway.edge_piece(event, run.request, offset);
    if (!piece) {
      co_return true;
    }
    edge_text += piece->text;
    if (!co_await emit(gateway, run, "edge", std::move(*piece))) {
      client_left = true;
      co_return false;
    }
    co_return true;
  };
  auto result = co_await gateway.edge_generate(
      std::move(std::get<engine::GenerationRequest>(generation)), on_token, run.cancel);
  std::optional<ApiError> edge_error;
  if (auto* error = std::get_if<ApiError>(&result)) {
    edge_error = *error;
  } else if (client_left || std::get<engine::CompletionSummary>(result).finish_reason ==
                                engine::FinishReason::kCancelled) {
    edge_error = client_gone();
  }
  if (edge_error) {
    if (verifying) {  // the verification refers to this frame: wait for it to end
      verify_cancel.cancel();
      co_await verdicts->pop();
    }
    co_return edge_error;
  }
  const auto summary = std::get<engine::CompletionSummary>(result);
  run.record.add_tier("edge");
  run.record.edge_usage = edge_usage_of(summary);
  if (!edge_text.empty()) {
    run.record.edge_answer_hash = answer_hash(edge_text);
  }
  const bool started = co_await gateway.start_answer(run, "edge");
  if (!started) {
    if (verifying) {  // as above: the verification must not outlive this frame
      verify_cancel.cancel();
      co_await verdicts->pop();
    }
    co_return client_gone();
  }

  if (judge == "prompt") {
    json body = run.request.cloud_body;
    body["stream"] = false;
    body.erase("stream_options");
    body["max_tokens"] = 3;
    body["temperature"] = 0;
    const std::string question =
        "Is the answer above correct and complete? Reply with one word: yes or no.";
    if (kind == ApiKind::kChat) {
      body["messages"].push_back({{"role", "assistant"}, {"content", edge_text}});
      body["messages"].push_back({{"role", "user"}, {"content", question}});
    } else {
      body["prompt"] = run.request.prompt + edge_text + "\n\n" + question + "\nAnswer:";
    }
    start_verification(std::move(body));
  }
  auto verdict = co_await verdicts->pop();
  // The verification's cloud usage counts for this request.
  run.record.data_left_device = run.record.data_left_device || verify_record.data_left_device;
  if (verify_record.cloud_usage) {
    run.record.cloud_usage = verify_record.cloud_usage;
    run.record.cloud_cost_usd += verify_record.cloud_cost_usd;
    run.record.cloud_upstream = verify_record.cloud_upstream;
    run.record.cloud_model = verify_record.cloud_model;
  }
  VerificationPart verification;
  verification.judge = judge;
  if (!verdict || std::holds_alternative<ApiError>(*verdict)) {
    verification.status = "unverified";
    verification.error = verdict ? std::get<ApiError>(*verdict).message : std::string("no verdict");
    run.record.verification = std::move(verification);
    run.record.degraded = "the cloud could not verify the on-device answer";
    co_await finish(run, finish_name(summary.finish_reason), *run.record.edge_usage);
    co_return std::nullopt;
  }
  run.record.add_tier("cloud");
  Gateway::CloudAnswer cloud = std::get<Gateway::CloudAnswer>(std::move(*verdict));
  bool agree = true;
  if (judge == "match") {
    agree = normalised_answer(edge_text) == normalised_answer(cloud.text);
  } else if (judge == "confidence") {
    const auto conf = cloud_confidence(cloud.logprobs, kind, routing.cascade.weights);
    verification.cloud_confidence = JudgedConfidence{conf};
    agree = normalised_answer(edge_text) == normalised_answer(cloud.text) || !conf ||
            *conf < routing.speculative.cloud_confidence;
  } else {
    const std::string reply = normalised_answer(cloud.text);
    verification.cloud_reply = cloud.text;
    agree = reply.rfind("yes", 0) == 0 || reply.rfind("no", 0) != 0;
  }
  verification.status = agree ? "agreed" : "disagreed";
  if (!agree && judge == "prompt") {  // the cloud said no: its own answer replaces the edge's
    auto answer = co_await gateway.cloud_answer(kind, with_logprobs(run.request.cloud_body, kind),
                                                run.cancel, run.record);
    if (auto* error = std::get_if<ApiError>(&answer)) {
      verification.status = "disagreed_unrevised";
      verification.error = error->message;
      run.record.verification = std::move(verification);
      run.record.degraded = "the cloud judged the on-device answer wrong but could not answer";
      co_await finish(run, finish_name(summary.finish_reason), *run.record.edge_usage);
      co_return std::nullopt;
    }
    cloud = std::get<Gateway::CloudAnswer>(std::move(answer));
  }
  run.record.verification = std::move(verification);
  if (agree) {
    run.record.reasons.push_back("the cloud verified the edge answer (" + judge + ")");
    co_await finish(run, finish_name(summary.finish_reason), *run.record.edge_usage);
    co_return std::nullopt;
  }
  if (!co_await revise(run, "edge", "cloud",
                       "the cloud disagreed with the edge answer (" + judge + ")")) {
    co_return client_gone();
  }
  run.record.reasons.push_back("revised: the cloud disagreed with the edge answer");
  Piece piece = answer_piece(cloud, run.request.logprobs);
  if (!co_await emit(gateway, run, "cloud", std::move(piece))) {
    co_return client_gone();
  }
  // A named value, not a temporary in the co_await's arguments (GCC 12 miscompiles those).
  const TierUsage usage = run.record.cloud_usage.value_or(TierUsage{});
  co_await finish(run, cloud.finish_reason, usage);
  co_return std::nullopt;
}

}  // namespace tandem::server
