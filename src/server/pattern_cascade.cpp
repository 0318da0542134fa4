// P1, the cascade: the edge answers; below the confidence threshold the cloud answers instead.

#include "common/answer_match.h"
#include "routing/confidence.h"
#include "server/gateway_util.h"
#include "server/pattern_steps.h"
#include "server/patterns.h"
#include "server/responses.h"

namespace tandem::server {
namespace {

using upstream::ApiKind;
using namespace pattern_steps;

// The edge's draft as it is written: each token judged, its pieces held back from the client
// or streamed, and why it stopped early. Lives on the request's coroutine frame.
class CascadeDraft {
 public:
  CascadeDraft(Gateway& gateway, Gateway::Run& run, const config::KindCascade& settings)
      : gateway_(gateway),
        run_(run),
        cascade_(gateway.config().routing.cascade),
        settings_(settings),
        tracker_(settings.weights, run.complexity),
        // Non-streaming clients see nothing until the end anyway: holding costs them nothing. A
        // streaming client's hold is bounded: after max_hold_tokens the prefix decides.
        hold_(cascade_.streaming == "hold" || !run.request.stream),
        hold_limit_(run.request.stream && cascade_.streaming == "hold" ? cascade_.max_hold_tokens
                                                                       : 0),
        max_tokens_(static_cast<size_t>(run.request.sampling.max_tokens)) {}

  // The edge's token handler: false stops the generation (the client left, or the draft's
  // fate is decided).
  net::awaitable<bool> take(const engine::TokenEvent& event) {
    if (!event.is_flush()) {
      tracker_.add(event.signals.logprob, event.signals.entropy, event.signals.margin);
    }
    if (auto piece = gateway_.edge_piece(event, run_.request, offset_)) {
      text_ += piece->text;
      if (hold_) {
        held_.push_back(std::move(*piece));
      } else {
        const bool sent = co_await emit(gateway_, run_, kEdge, std::move(*piece));
        if (!sent) {
          client_left_ = true;
          co_return false;
        }
      }
    }
    const size_t n = tracker_.tokens();
    if (escalation_certain(n)) {
      early_stop_ = true;
      co_return false;
    }
    if (hold_ && hold_limit_ > 0 && n >= hold_limit_ && n < max_tokens_) {
      // The bounded hold is over: the prefix decides. Below the threshold, escalate now;
      // otherwise commit to the edge and stream, the rest judged at the end as in "revise".
      if (tracker_.snapshot().combined < settings_.threshold) {
        early_stop_ = true;
        prefix_escalation_ = true;
        co_return false;
      }
      hold_ = false;
      const bool sent = co_await send_held();
      if (!sent) {
        client_left_ = true;
        co_return false;
      }
    }
    co_return true;
  }

  // Sends what was held back, in order; false once the client is gone.
  net::awaitable<bool> send_held() {
    for (auto& piece : held_) {
      const bool sent = co_await emit(gateway_, run_, kEdge, std::move(piece));
      if (!sent) {
        co_return false;
      }
    }
    held_.clear();
    co_return true;
  }

  // Whether the cloud should answer, once the edge has finished or stopped.
  bool escalates() const {
    const routing::ConfidenceSnapshot confidence = tracker_.snapshot();
    return early_stop_ || confidence.tokens == 0 || confidence.combined < settings_.threshold;
  }

  // Why the cloud answers instead, for the record.
  std::string escalation_reason() const {
    const routing::ConfidenceSnapshot confidence = tracker_.snapshot();
    const std::string threshold = std::to_string(settings_.threshold);
    if (confidence.tokens == 0) {
      return "the edge produced no tokens";
    }
    if (prefix_escalation_) {
      return "edge confidence " + std::to_string(confidence.combined) + " < " + threshold +
             " after the held prefix of " + std::to_string(confidence.tokens) + " tokens";
    }
    if (early_stop_) {
      return "escalation became certain after " + std::to_string(confidence.tokens) +
             " tokens: no continuation could reach confidence " + threshold;
    }
    return "edge confidence " + std::to_string(confidence.combined) + " < " + threshold;
  }

  const routing::ConfidenceTracker& tracker() const { return tracker_; }
  const std::string& text() const { return text_; }
  bool early_stop() const { return early_stop_; }
  bool prefix_escalation() const { return prefix_escalation_; }
  bool client_left() const { return client_left_; }

 private:
  static inline const std::string kEdge = "edge";

  // The early-stop bound: no continuation within max_tokens could reach the threshold.
  bool escalation_certain(size_t n) const {
    return cascade_.early_stop && n >= cascade_.min_tokens && n < max_tokens_ &&
           tracker_.verdict(settings_.threshold, max_tokens_ - n) ==
               routing::ConfidenceVerdict::kEscalateCertain;
  }

  Gateway& gateway_;
  Gateway::Run& run_;
  const config::CascadeConfig& cascade_;
  const config::KindCascade& settings_;
  routing::ConfidenceTracker tracker_;
  bool hold_;
  const size_t hold_limit_;
  const size_t max_tokens_;
  std::vector<Piece> held_;
  size_t offset_ = 0;
  std::string text_;  // hashed for the routing trace (a reviewer's answer labels it)
  bool early_stop_ = false;
  bool prefix_escalation_ = false;
  bool client_left_ = false;
};

// The edge's draft is the answer: what was held goes out, `reason` (when there is one) joins
// the record's reasons after the response's start, and the response ends.
net::awaitable<std::optional<ApiError>> answer_from_edge(Gateway& gateway, Gateway::Run& run,
                                                         CascadeDraft& draft,
                                                         const engine::CompletionSummary& summary,
                                                         const std::string& reason) {
  const bool sent = co_await draft.send_held();
  if (!sent) {
    co_return client_gone();
  }
  const bool started = co_await gateway.start_answer(run, "edge");
  if (!started) {
    co_return client_gone();
  }
  if (!reason.empty()) {
    run.record.reasons.push_back(reason);
  }
  co_await finish(run, finish_name(summary.finish_reason), *run.record.edge_usage);
  co_return std::nullopt;
}

// Escalation with human review on: the cloud's answer is judged before anyone sees it, and
// when the cloud is unsure too a human answers.
net::awaitable<std::optional<ApiError>> escalate_with_review(Gateway& gateway, Gateway::Run& run,
                                                             const config::KindCascade& settings,
                                                             const std::string& why) {
  const config::ReviewConfig& review = gateway.config().routing.review;
  auto answer = co_await gateway.cloud_answer(
      run.request.kind, with_logprobs(run.request.cloud_body, run.request.kind), run.cancel,
      run.record);
  auto* cloud = std::get_if<Gateway::CloudAnswer>(&answer);
  if (cloud == nullptr) {
    co_return std::get<ApiError>(answer);
  }
  run.record.add_tier("cloud");
  const auto cloud_conf = cloud_confidence(cloud->logprobs, run.request.kind, settings.weights);
  run.record.escalation->cloud_confidence = JudgedConfidence{cloud_conf};
  if (cloud_conf && *cloud_conf < review.cloud_threshold) {
    const std::string reason = "the cloud is unsure too: confidence " +
                               std::to_string(*cloud_conf) + " < " +
                               std::to_string(review.cloud_threshold);
    auto reviewed = co_await run_review(gateway, run, reason, cloud->text, "cloud");
    co_return reviewed;
  }
  const bool revised = co_await revise(run, "edge", "cloud", why);
  if (!revised) {
    co_return client_gone();
  }
  Piece piece = answer_piece(*cloud, run.request.logprobs);
  const bool sent = co_await emit(gateway, run, "cloud", std::move(piece));
  if (!sent) {
    co_return client_gone();
  }
  run.record.tier = "cloud";
  co_await finish(run, cloud->finish_reason, *run.record.cloud_usage);
  co_return std::nullopt;
}

// Escalation: the cloud answers (with fallback across upstreams); when it fails before the
// client has anything, the edge's own answer is better than none.
net::awaitable<std::optional<ApiError>> escalate(Gateway& gateway, Gateway::Run& run,
                                                 CascadeDraft& draft,
                                                 const engine::CompletionSummary& summary,
                                                 const std::string& why) {
  if (run.started) {
    const bool revised = co_await revise(run, "edge", "cloud", why);
    if (!revised) {
      co_return client_gone();
    }
  }
  auto cloud_error = co_await gateway.run_cloud(run);
  if (!cloud_error) {
    run.record.tier = "cloud";
    co_return std::nullopt;
  }
  // Once the client has something (the edge's streamed draft, or the cloud's first pieces
  // before it failed), the edge's answer cannot follow: the response ends with the error.
  if (run.started || cloud_error->cancelled() || run.cancel.cancelled()) {
    co_return cloud_error;
  }
  run.record.fallbacks.push_back({"cloud", "edge", cloud_error->message});
  run.record.degraded = "escalation to the cloud failed (" + cloud_error->message +
                        "); this is the on-device model's low-confidence answer";
  if (draft.early_stop()) {  // the draft was cut short: write it whole
    auto whole = co_await gateway.run_edge(run);
    co_return whole;
  }
  run.record.tier = "edge";
  auto answered = co_await answer_from_edge(gateway, run, draft, summary, "");
  co_return answered;
}

// What the edge's draft leaves in the record: its tier, usage, confidence and answer hash.
void record_draft(Gateway::Run& run, const CascadeDraft& draft,
                  const engine::CompletionSummary& summary, double threshold) {
  run.record.add_tier("edge");
  run.record.edge_usage = edge_usage_of(summary);
  run.record.confidence = ConfidencePart{draft.tracker().snapshot(), threshold};
  if (!draft.text().empty()) {
    run.record.edge_answer_hash = answer_hash(draft.text());
  }
}

void record_escalation(Gateway::Run& run, const CascadeDraft& draft,
                       const engine::CompletionSummary& summary, const std::string& why) {
  EscalationPart& escalation = run.record.escalation.emplace();
  escalation.reason = why;
  escalation.early_stop = draft.early_stop();
  escalation.prefix_decision = draft.prefix_escalation();
  escalation.at_token = draft.tracker().tokens();
  escalation.edge_tokens_discarded = summary.completion_tokens;
  run.record.reasons.push_back("escalated to the cloud: " + why);
}

}  // namespace

net::awaitable<std::optional<ApiError>> run_cascade(Gateway& gateway, Gateway::Run& run) {
  const config::RoutingConfig& routing = gateway.config().routing;
  const config::KindCascade settings = routing::cascade_settings(routing.cascade, run.kind);
  auto generation = co_await gateway.prepare_edge(run.request);
  if (auto* error = std::get_if<ApiError>(&generation)) {
    co_return *error;
  }
  CascadeDraft draft(gateway, run, settings);
  const Gateway::TokenHandler on_token = [&draft](const engine::TokenEvent& event) {
    return draft.take(event);
  };
  auto result = co_await gateway.edge_generate(
      std::move(std::get<engine::GenerationRequest>(generation)), on_token, run.cancel);
  if (auto* error = std::get_if<ApiError>(&result)) {
    co_return *error;
  }
  const auto& summary = std::get<engine::CompletionSummary>(result);
  if (draft.client_left() ||
      (summary.finish_reason == engine::FinishReason::kCancelled && !draft.early_stop())) {
    co_return client_gone();
  }
  record_draft(run, draft, summary, settings.threshold);
  if (!draft.escalates()) {
    const std::string reason = "edge confidence " +
                               std::to_string(draft.tracker().snapshot().combined) +
                               " >= " + std::to_string(settings.threshold) + ": the edge answers";
    auto answered = co_await answer_from_edge(gateway, run, draft, summary, reason);
    co_return answered;
  }
  const std::string why = draft.escalation_reason();
  record_escalation(run, draft, summary, why);
  if (routing.review.enabled) {
    auto reviewed = co_await escalate_with_review(gateway, run, settings, why);
    co_return reviewed;
  }
  auto escalated = co_await escalate(gateway, run, draft, summary, why);
  co_return escalated;
}

}  // namespace tandem::server
