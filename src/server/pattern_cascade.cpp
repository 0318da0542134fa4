// P1, the cascade: the edge answers; below the confidence threshold the cloud answers instead.

#include "common/answer_match.h"
#include "routing/confidence.h"
#include "server/gateway_util.h"
#include "server/pattern_steps.h"
#include "server/patterns.h"
#include "server/responses.h"

namespace tandem::server {

using upstream::ApiKind;
using namespace pattern_steps;

net::awaitable<std::optional<ApiError>> run_cascade(Gateway& gateway, Gateway::Run& run) {
  const config::RoutingConfig& routing = gateway.config().routing;
  const config::CascadeConfig& cascade = routing.cascade;
  const config::KindCascade cfg = routing::cascade_settings(cascade, run.kind);
  auto generation = co_await gateway.prepare_edge(run.request);
  if (auto* error = std::get_if<ApiError>(&generation)) {
    co_return *error;
  }
  // Non-streaming clients see nothing until the end anyway: holding costs them nothing. A
  // streaming client's hold is bounded: after max_hold_tokens the prefix decides.
  bool hold = cascade.streaming == "hold" || !run.request.stream;
  const size_t hold_limit =
      run.request.stream && cascade.streaming == "hold" ? cascade.max_hold_tokens : 0;
  const auto max_tokens = static_cast<size_t>(run.request.sampling.max_tokens);
  routing::ConfidenceTracker tracker(cfg.weights, run.complexity);
  std::vector<Piece> held;
  size_t offset = 0;
  bool early_stop = false;
  bool prefix_escalation = false;
  bool client_left = false;
  const std::string edge_tier = "edge";
  std::string edge_text;  // hashed for the routing trace (a reviewer's answer labels it)
  const Gateway::TokenHandler on_token =
      [&](const engine::TokenEvent& event) -> net::awaitable<bool> {
    if (!event.is_flush()) {
      tracker.add(event.signals.logprob, event.signals.entropy, event.signals.margin);
    }
    if (auto piece = gateway.edge_piece(event, run.request, offset)) {
      edge_text += piece->text;
      if (hold) {
        held.push_back(std::move(*piece));
      } else if (!co_await emit(gateway, run, "edge", std::move(*piece))) {
        client_left = true;
        co_return false;
      }
    }
    const size_t n = tracker.tokens();
    if (cascade.early_stop && n >= cascade.min_tokens && n < max_tokens &&
        tracker.verdict(cfg.threshold, max_tokens - n) ==
            routing::ConfidenceVerdict::kEscalateCertain) {
      early_stop = true;
      co_return false;
    }
    if (hold && hold_limit > 0 && n >= hold_limit && n < max_tokens) {
      // The bounded hold is over: the prefix decides. Below the threshold, escalate now;
      // otherwise commit to the edge and stream, the rest judged at the end as in "revise".
      if (tracker.snapshot().combined < cfg.threshold) {
        early_stop = true;
        prefix_escalation = true;
        co_return false;
      }
      hold = false;
      for (auto& piece : held) {
        const bool sent = co_await emit(gateway, run, edge_tier, std::move(piece));
        if (!sent) {
          client_left = true;
          co_return false;
        }
      }
      held.clear();
    }
    co_return true;
  };
  auto result = co_await gateway.edge_generate(
      std::move(std::get<engine::GenerationRequest>(generation)), on_token, run.cancel);
  if (auto* error = std::get_if<ApiError>(&result)) {
    co_return *error;
  }
  const auto& summary = std::get<engine::CompletionSummary>(result);
  if (client_left || (summary.finish_reason == engine::FinishReason::kCancelled && !early_stop)) {
    co_return client_gone();
  }
  run.record.add_tier("edge");
  run.record.edge_usage = edge_usage_of(summary);
  const routing::ConfidenceSnapshot confidence = tracker.snapshot();
  run.record.confidence = ConfidencePart{confidence, cfg.threshold};
  if (!edge_text.empty()) {
    run.record.edge_answer_hash = answer_hash(edge_text);
  }
  const bool escalate = early_stop || confidence.tokens == 0 || confidence.combined < cfg.threshold;
  if (!escalate) {
    for (auto& piece : held) {
      if (!co_await emit(gateway, run, "edge", std::move(piece))) {
        co_return client_gone();
      }
    }
    if (!co_await gateway.start_answer(run, "edge")) {
      co_return client_gone();
    }
    run.record.reasons.push_back("edge confidence " + std::to_string(confidence.combined) +
                                 " >= " + std::to_string(cfg.threshold) + ": the edge answers");
    co_await finish(run, finish_name(summary.finish_reason), *run.record.edge_usage);
    co_return std::nullopt;
  }

  const std::string why =
      confidence.tokens == 0 ? "the edge produced no tokens"
      : prefix_escalation    ? "edge confidence " + std::to_string(confidence.combined) + " < " +
                                std::to_string(cfg.threshold) + " after the held prefix of " +
                                std::to_string(confidence.tokens) + " tokens"
      : early_stop
          ? "escalation became certain after " + std::to_string(confidence.tokens) +
                " tokens: no continuation could reach confidence " + std::to_string(cfg.threshold)
          : "edge confidence " + std::to_string(confidence.combined) + " < " +
                std::to_string(cfg.threshold);
  EscalationPart& escalation = run.record.escalation.emplace();
  escalation.reason = why;
  escalation.early_stop = early_stop;
  escalation.prefix_decision = prefix_escalation;
  escalation.at_token = confidence.tokens;
  escalation.edge_tokens_discarded = summary.completion_tokens;
  run.record.reasons.push_back("escalated to the cloud: " + why);

  if (routing.review.enabled) {
    // The cloud's answer is judged before anyone sees it: unsure, it goes to a human.
    auto answer = co_await gateway.cloud_answer(
        run.request.kind, with_logprobs(run.request.cloud_body, run.request.kind), run.cancel,
        run.record);
    if (auto* cloud = std::get_if<Gateway::CloudAnswer>(&answer)) {
      run.record.add_tier("cloud");
      const auto cloud_conf = cloud_confidence(cloud->logprobs, run.request.kind, cfg.weights);
      run.record.escalation->cloud_confidence = JudgedConfidence{cloud_conf};
      if (cloud_conf && *cloud_conf < routing.review.cloud_threshold) {
        const std::string reason = "the cloud is unsure too: confidence " +
                                   std::to_string(*cloud_conf) + " < " +
                                   std::to_string(routing.review.cloud_threshold);
        co_return co_await run_review(gateway, run, reason, cloud->text, "cloud");
      }
      if (!co_await revise(run, "edge", "cloud", why)) {
        co_return client_gone();
      }
      Piece piece = answer_piece(*cloud, run.request.logprobs);
      if (!co_await emit(gateway, run, "cloud", std::move(piece))) {
        co_return client_gone();
      }
      run.record.tier = "cloud";
      co_await finish(run, cloud->finish_reason, *run.record.cloud_usage);
      co_return std::nullopt;
    }
    co_return std::get<ApiError>(answer);
  }

  if (run.started && !co_await revise(run, "edge", "cloud", why)) {
    co_return client_gone();
  }
  auto cloud_error = co_await gateway.run_cloud(run);
  if (!cloud_error) {
    run.record.tier = "cloud";
    co_return std::nullopt;
  }
  // Once the client has something (the edge's streamed draft, or the cloud's first pieces
  // before it failed), the edge's answer cannot follow: the response ends with the error.
  if (run.started || cloud_error->status == 499 || run.cancel.cancelled()) {
    co_return cloud_error;
  }
  // The cloud failed before answering: the edge's own answer is better than none.
  run.record.fallbacks.push_back({"cloud", "edge", cloud_error->message});
  run.record.degraded = "escalation to the cloud failed (" + cloud_error->message +
                        "); this is the on-device model's low-confidence answer";
  if (early_stop) {  // the draft was cut short: write it whole
    co_return co_await gateway.run_edge(run);
  }
  for (auto& piece : held) {
    if (!co_await emit(gateway, run, "edge", std::move(piece))) {
      co_return client_gone();
    }
  }
  if (!co_await gateway.start_answer(run, "edge")) {
    co_return client_gone();
  }
  run.record.tier = "edge";
  co_await finish(run, finish_name(summary.finish_reason), *run.record.edge_usage);
  co_return std::nullopt;
}

}  // namespace tandem::server
