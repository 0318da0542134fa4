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
namespace {

using nlohmann::json;
using upstream::ApiKind;
using namespace pattern_steps;

// The cloud's verification, run beside the edge: started once, its verdict awaited once. Its
// state is shared with its coroutine, so that should the request's frame end early (an
// exception), the coroutine still has what it refers to; it is cancelled with the request, and
// when this object goes.
class Verifier {
 public:
  Verifier(Gateway& gateway, Gateway::Run& run, net::asio::any_io_executor executor)
      : gateway_(gateway),
        kind_(run.request.kind),
        executor_(std::move(executor)),
        verdicts_(std::make_shared<net::AsyncQueue<CloudResult>>(executor_)),
        state_(std::make_shared<State>()),
        link_(run.cancel, [state = state_] { state->cancel.cancel(); }) {
    state_->record.request_id = run.record.request_id;
    state_->record.client = run.record.client;
    state_->record.may_leave_device = run.record.may_leave_device;
  }
  ~Verifier() { state_->cancel.cancel(); }
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;

  // Sends `body` to the cloud for its verdict.
  void start(json body) {
    started_ = true;
    // A verification that throws still gives its verdict (an error), so nobody waits for ever.
    auto failed =
        net::on_failure("routing", "verification", [verdicts = verdicts_](std::exception_ptr) {
          ApiError fault =
              make_api_error(ErrorKind::kInternal, ErrorOrigin::kGateway,
                             "the verification failed inside the gateway", "internal_error");
          fault.retryable = true;  // a verdict like an unreachable judge's: the answer stands
          verdicts->push(CloudResult(std::move(fault)));
        });
    net::asio::co_spawn(
        executor_,
        [&gateway = gateway_, verdicts = verdicts_, kind = kind_, body = std::move(body),
         state = state_]() -> net::awaitable<void> {
          auto answer =
              co_await gateway.cloud_answer(kind, body, state->cancel, state->record, "verify");
          verdicts->push(std::move(answer));
        },
        std::move(failed));
  }

  // The verdict; nullopt when none came.
  net::awaitable<std::optional<CloudResult>> verdict() {
    auto verdict = co_await verdicts_->pop();
    co_return verdict;
  }

  // Cancels a verification under way and waits for it to end: it must not outlive the request.
  net::awaitable<void> abandon() {
    if (!started_) {
      co_return;
    }
    state_->cancel.cancel();
    co_await verdicts_->pop();
  }

  // The verification's cloud usage counts for the request, and what its cloud loop passed by
  // or fell back from is the request's to report.
  void merge_into(DecisionRecord& record) const {
    const DecisionRecord& verify = state_->record;
    record.data_left_device = record.data_left_device || verify.data_left_device;
    record.reasons.insert(record.reasons.end(), verify.reasons.begin(), verify.reasons.end());
    record.fallbacks.insert(record.fallbacks.end(), verify.fallbacks.begin(),
                            verify.fallbacks.end());
    if (verify.cloud_usage) {
      record.cloud_usage = verify.cloud_usage;
      record.cloud_cost_usd += verify.cloud_cost_usd;
      record.cloud_upstream = verify.cloud_upstream;
      record.cloud_model = verify.cloud_model;
    }
  }

 private:
  struct State {
    CancelSignal cancel;
    DecisionRecord record;  // usage of the verification, merged by merge_into()
  };

  Gateway& gateway_;
  const ApiKind kind_;
  const net::asio::any_io_executor executor_;
  const std::shared_ptr<net::AsyncQueue<CloudResult>> verdicts_;
  const std::shared_ptr<State> state_;
  const CancelRegistration link_;
  bool started_ = false;
};

// The "prompt" judge's question: the request with the edge's answer, asking yes or no.
json prompt_judge_body(const CompletionRequest& request, const std::string& edge_text) {
  json body = request.cloud_body;
  body["stream"] = false;
  body.erase("stream_options");
  body["max_tokens"] = 3;
  body["temperature"] = 0;
  const std::string question =
      "Is the answer above correct and complete? Reply with one word: yes or no.";
  if (request.kind == ApiKind::kChat) {
    body["messages"].push_back({{"role", "assistant"}, {"content", edge_text}});
    body["messages"].push_back({{"role", "user"}, {"content", question}});
  } else {
    body["prompt"] = request.prompt + edge_text + "\n\n" + question + "\nAnswer:";
  }
  return body;
}

// Whether the cloud's verification agrees with the edge's answer, per the configured judge;
// what the judge read goes into `verification`.
bool judge_agrees(const config::RoutingConfig& routing, ApiKind kind, const std::string& edge_text,
                  const Gateway::CloudAnswer& cloud, VerificationPart& verification) {
  const std::string& judge = routing.speculative.judge;
  const bool same_answer = normalised_answer(edge_text) == normalised_answer(cloud.text);
  if (judge == "match") {
    return same_answer;
  }
  if (judge == "confidence") {
    const auto conf = cloud_confidence(cloud.logprobs, kind, routing.cascade.weights);
    verification.cloud_confidence = JudgedConfidence{conf};
    return same_answer || !conf || *conf < routing.speculative.cloud_confidence;
  }
  const std::string reply = normalised_answer(cloud.text);
  verification.cloud_reply = cloud.text;
  return reply.rfind("yes", 0) == 0 || reply.rfind("no", 0) != 0;
}

// The edge's answer stands, unverified or judged wrong without a better one: `degraded` says
// which, and the response ends.
net::awaitable<std::optional<ApiError>> keep_unverified(Gateway::Run& run,
                                                        VerificationPart verification,
                                                        const engine::CompletionSummary& summary,
                                                        const std::string& degraded) {
  run.record.verification = std::move(verification);
  run.record.degraded = degraded;
  co_await finish(run, finish_name(summary.finish_reason), *run.record.edge_usage);
  co_return std::nullopt;
}

// The cloud disagreed: its answer replaces the edge's in a marked revision.
net::awaitable<std::optional<ApiError>> revise_to_cloud(Gateway& gateway, Gateway::Run& run,
                                                        const Gateway::CloudAnswer& cloud,
                                                        const std::string& judge) {
  const bool revised = co_await revise(run, "edge", "cloud",
                                       "the cloud disagreed with the edge answer (" + judge + ")");
  if (!revised) {
    co_return client_gone();
  }
  run.record.reasons.push_back("revised: the cloud disagreed with the edge answer");
  Piece piece = answer_piece(cloud, run.request.logprobs);
  const bool sent = co_await emit(gateway, run, "cloud", std::move(piece));
  if (!sent) {
    co_return client_gone();
  }
  // A named value, not a temporary in the co_await's arguments (GCC 12 miscompiles those).
  const TierUsage usage = run.record.cloud_usage.value_or(TierUsage{});
  co_await finish(run, cloud.finish_reason, usage);
  co_return std::nullopt;
}

// The edge's answer is out; the verdict decides whether it stands.
net::awaitable<std::optional<ApiError>> settle(Gateway& gateway, Gateway::Run& run,
                                               Verifier& verifier, const std::string& edge_text,
                                               const engine::CompletionSummary& summary) {
  const config::RoutingConfig& routing = gateway.config().routing;
  const std::string& judge = routing.speculative.judge;
  auto verdict = co_await verifier.verdict();
  verifier.merge_into(run.record);
  VerificationPart verification;
  verification.judge = judge;
  if (!verdict || std::holds_alternative<ApiError>(*verdict)) {
    verification.status = "unverified";
    verification.error = verdict ? std::get<ApiError>(*verdict).message : std::string("no verdict");
    auto kept = co_await keep_unverified(run, std::move(verification), summary,
                                         "the cloud could not verify the on-device answer");
    co_return kept;
  }
  run.record.add_tier("cloud");
  Gateway::CloudAnswer cloud = std::get<Gateway::CloudAnswer>(std::move(*verdict));
  const bool agree = judge_agrees(routing, run.request.kind, edge_text, cloud, verification);
  verification.status = agree ? "agreed" : "disagreed";
  if (!agree && judge == "prompt") {  // the cloud said no: its own answer replaces the edge's
    auto answer = co_await gateway.cloud_answer(
        run.request.kind, with_logprobs(run.request.cloud_body, run.request.kind), run.cancel,
        run.record);
    if (auto* error = std::get_if<ApiError>(&answer)) {
      verification.status = "disagreed_unrevised";
      verification.error = error->message;
      auto kept = co_await keep_unverified(
          run, std::move(verification), summary,
          "the cloud judged the on-device answer wrong but could not answer");
      co_return kept;
    }
    cloud = std::get<Gateway::CloudAnswer>(std::move(answer));
  }
  run.record.verification = std::move(verification);
  if (agree) {
    run.record.reasons.push_back("the cloud verified the edge answer (" + judge + ")");
    co_await finish(run, finish_name(summary.finish_reason), *run.record.edge_usage);
    co_return std::nullopt;
  }
  auto revised = co_await revise_to_cloud(gateway, run, cloud, judge);
  co_return revised;
}

}  // namespace

net::awaitable<std::optional<ApiError>> run_speculative(Gateway& gateway, Gateway::Run& run) {
  const std::string& judge = gateway.config().routing.speculative.judge;
  auto generation = co_await gateway.prepare_edge(run.request);
  if (auto* error = std::get_if<ApiError>(&generation)) {
    co_return *error;
  }
  // The cloud answers the same request while the edge streams (judges "match" and
  // "confidence"); the "prompt" judge needs the edge's answer first.
  auto executor = co_await net::asio::this_coro::executor;
  Verifier verifier(gateway, run, executor);
  if (judge != "prompt") {
    verifier.start(with_logprobs(run.request.cloud_body, run.request.kind));
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
    const bool sent = co_await emit(gateway, run, "edge", std::move(*piece));
    client_left = !sent;
    co_return sent;
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
    co_await verifier.abandon();
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
    co_await verifier.abandon();
    co_return client_gone();
  }
  if (judge == "prompt") {
    verifier.start(prompt_judge_body(run.request, edge_text));
  }
  auto settled = co_await settle(gateway, run, verifier, edge_text, summary);
  co_return settled;
}

}  // namespace tandem::server
