// The routing patterns: P1 cascade, P3 speculative edge with cloud verification, token-level
// collaboration and the human tier, composed from the gateway's tier building blocks.

#include <algorithm>

#include "common/answer_match.h"
#include "common/log.h"
#include "net/async_queue.h"
#include "net/offload.h"
#include "net/spawn.h"
#include "routing/confidence.h"
#include "server/gateway_util.h"
#include "server/patterns.h"
#include "server/responses.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using upstream::ApiKind;
using CloudResult = std::variant<Gateway::CloudAnswer, ApiError>;

json snapshot_json(const routing::ConfidenceSnapshot& s, double threshold) {
  return {{"tokens", s.tokens},           {"mean_logprob", s.mean_logprob},
          {"min_logprob", s.min_logprob}, {"mean_entropy", s.mean_entropy},
          {"mean_margin", s.mean_margin}, {"combined", s.combined},
          {"threshold", threshold}};
}

// The cloud's confidence in its own answer, from the token logprobs it returned: the same
// learned combination as the edge's, with the signals the API exposes (logprobs only).
std::optional<double> cloud_confidence(const json& logprobs, ApiKind kind,
                                       const config::ConfidenceWeights& weights) {
  routing::ConfidenceTracker tracker(weights);
  if (kind == ApiKind::kChat && logprobs.is_array()) {
    for (const auto& entry : logprobs) {
      if (entry.contains("logprob") && entry["logprob"].is_number()) {
        tracker.add(entry["logprob"].get<double>(), 0.0, 0.0);
      }
    }
  } else if (logprobs.is_object() && logprobs.contains("token_logprobs")) {
    for (const auto& value : logprobs["token_logprobs"]) {
      if (value.is_number()) {
        tracker.add(value.get<double>(), 0.0, 0.0);
      }
    }
  }
  const auto snapshot = tracker.snapshot();
  if (snapshot.tokens == 0) {
    return std::nullopt;
  }
  return snapshot.combined;
}

// The request body for a whole cloud answer, with logprobs asked for so that the cloud's
// confidence can be judged.
json with_logprobs(json body, ApiKind kind) {
  body["stream"] = false;
  body.erase("stream_options");
  if (kind == ApiKind::kChat) {
    body["logprobs"] = true;
  } else if (!body.contains("logprobs") || body["logprobs"].is_null()) {
    body["logprobs"] = 1;
  }
  return body;
}

// A whole cloud answer as one piece for the client: its text, and its reasoning and tool calls
// (which the judges, reading the text, leave aside but the client must receive).
Piece answer_piece(const Gateway::CloudAnswer& cloud, bool with_logprobs) {
  Piece piece;
  piece.text = cloud.text;
  if (with_logprobs) {
    piece.logprobs = cloud.logprobs;
  }
  piece.reasoning = cloud.reasoning;
  piece.tool_calls = cloud.tool_calls;
  return piece;
}

net::awaitable<bool> emit(Gateway& gateway, Gateway::Run& run, const std::string& tier,
                          Piece piece) {
  bool open = co_await gateway.start_answer(run, tier);
  const bool carries = !piece.text.empty() || !piece.logprobs.is_null() ||
                       !piece.reasoning.empty() || !piece.tool_calls.empty();
  if (open && carries) {
    open = co_await run.sink.piece(piece);
  }
  co_return open;
}

net::awaitable<void> finish(Gateway::Run& run, const std::string& finish_reason,
                            const TierUsage& usage) {
  run.record.latency_ms = ms_since(run.record.started_at);
  const Outcome outcome{finish_reason, usage};
  co_await run.sink.finish(outcome, run.record);
}

// Withdraws what the client has seen (when it has seen anything) in favour of `to_tier`.
net::awaitable<bool> revise(Gateway::Run& run, const std::string& from_tier,
                            const std::string& to_tier, const std::string& reason) {
  Revision revision;
  revision.id = "rev-" + std::to_string(run.record.tiers.size());
  revision.from_tier = from_tier;
  revision.to_tier = to_tier;
  revision.reason = reason;
  run.record.revision = revision.to_json();
  run.record.tier = to_tier;
  if (!run.started) {
    co_return true;
  }
  const bool delivered = co_await run.sink.revise(revision);
  co_return delivered;
}

std::string finish_name(engine::FinishReason reason) {
  return reason == engine::FinishReason::kLength ? "length" : "stop";
}

}  // namespace

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
  run.record.confidence = snapshot_json(confidence, cfg.threshold);
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
  run.record.escalation = {{"reason", why},
                           {"early_stop", early_stop},
                           {"prefix_decision", prefix_escalation},
                           {"at_token", confidence.tokens},
                           {"edge_tokens_discarded", summary.completion_tokens}};
  run.record.reasons.push_back("escalated to the cloud: " + why);

  if (routing.review.enabled) {
    // The cloud's answer is judged before anyone sees it: unsure, it goes to a human.
    auto answer = co_await gateway.cloud_answer(
        run.request.kind, with_logprobs(run.request.cloud_body, run.request.kind), run.cancel,
        run.record);
    if (auto* cloud = std::get_if<Gateway::CloudAnswer>(&answer)) {
      run.record.add_tier("cloud");
      const auto cloud_conf = cloud_confidence(cloud->logprobs, run.request.kind, cfg.weights);
      run.record.escalation["cloud_confidence"] = cloud_conf ? json(*cloud_conf) : json(nullptr);
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
  json verification = {{"judge", judge}};
  if (!verdict || std::holds_alternative<ApiError>(*verdict)) {
    verification["status"] = "unverified";
    verification["error"] =
        verdict ? std::get<ApiError>(*verdict).message : std::string("no verdict");
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
    verification["cloud_confidence"] = conf ? json(*conf) : json(nullptr);
    agree = normalised_answer(edge_text) == normalised_answer(cloud.text) || !conf ||
            *conf < routing.speculative.cloud_confidence;
  } else {
    const std::string reply = normalised_answer(cloud.text);
    verification["cloud_reply"] = cloud.text;
    agree = reply.rfind("yes", 0) == 0 || reply.rfind("no", 0) != 0;
  }
  verification["status"] = agree ? "agreed" : "disagreed";
  if (!agree && judge == "prompt") {  // the cloud said no: its own answer replaces the edge's
    auto answer = co_await gateway.cloud_answer(kind, with_logprobs(run.request.cloud_body, kind),
                                                run.cancel, run.record);
    if (auto* error = std::get_if<ApiError>(&answer)) {
      verification["status"] = "disagreed_unrevised";
      verification["error"] = error->message;
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
  co_await finish(run, cloud.finish_reason, run.record.cloud_usage.value_or(TierUsage{}));
  co_return std::nullopt;
}

net::awaitable<std::optional<ApiError>> run_collaborate(Gateway& gateway, Gateway::Run& run) {
  const config::CollaborateConfig& cfg = gateway.config().routing.collaborate;
  auto generation = co_await gateway.prepare_edge(run.request);
  if (auto* error = std::get_if<ApiError>(&generation)) {
    co_return *error;
  }
  const engine::GenerationRequest base = std::get<engine::GenerationRequest>(generation);
  const int max_tokens = run.request.sampling.max_tokens;
  std::string text;  // everything written so far, by either tier
  int edge_tokens = 0;
  int cloud_tokens = 0;
  int prompt_tokens = 0;
  int cached_prompt_tokens = 0;  // of the first segment's prompt
  uint32_t handoffs = 0;
  json segments = json::array();
  std::string finish_reason = "length";
  std::string cloud_failure;

  while (edge_tokens + cloud_tokens < max_tokens) {
    engine::GenerationRequest segment = base;
    segment.prompt = base.prompt + text;
    segment.sampling.max_tokens = max_tokens - edge_tokens - cloud_tokens;
    std::string raw;    // this segment's accepted tokens
    std::string shown;  // what of it reached the client
    bool uncertain = false;
    bool client_left = false;
    size_t offset = text.size();
    int accepted = 0;
    const bool may_hand_off = handoffs < cfg.max_handoffs && cloud_failure.empty();
    const Gateway::TokenHandler on_token =
        [&](const engine::TokenEvent& event) -> net::awaitable<bool> {
      if (!event.is_flush() && may_hand_off && event.signals.entropy > cfg.entropy_threshold) {
        uncertain = true;  // this position goes to the cloud; the edge's token is dropped
        co_return false;
      }
      if (!event.is_flush()) {
        raw += event.piece;
        ++accepted;
      }
      auto piece = gateway.edge_piece(event, run.request, offset);
      if (piece) {
        shown += piece->text;
        if (!co_await emit(gateway, run, "edge", std::move(*piece))) {
          client_left = true;
          co_return false;
        }
      }
      co_return true;
    };
    auto result = co_await gateway.edge_generate(segment, on_token, run.cancel);
    if (auto* error = std::get_if<ApiError>(&result)) {
      co_return *error;
    }
    const auto& summary = std::get<engine::CompletionSummary>(result);
    if (client_left || (summary.finish_reason == engine::FinishReason::kCancelled && !uncertain)) {
      co_return client_gone();
    }
    if (prompt_tokens == 0) {
      prompt_tokens = summary.prompt_tokens;
      cached_prompt_tokens = summary.cached_prompt_tokens;
    }
    edge_tokens += accepted;
    if (accepted > 0) {
      // A hand-back's prompt is the last one plus the cloud's tokens: the cache holds the rest.
      segments.push_back({{"tier", "edge"},
                          {"tokens", accepted},
                          {"cached_prompt_tokens", summary.cached_prompt_tokens},
                          {"prompt_tokens", summary.prompt_tokens}});
    }
    run.record.add_tier("edge");
    if (!uncertain) {
      text += shown;
      finish_reason = finish_name(summary.finish_reason);
      break;
    }
    // Text the edge held back (a partial stop string or character) is part of the context.
    if (raw.size() > shown.size() && raw.compare(0, shown.size(), shown) == 0) {
      Piece rest;
      rest.text = raw.substr(shown.size());
      if (!co_await emit(gateway, run, "edge", std::move(rest))) {
        co_return client_gone();
      }
    }
    text += raw;

    // The cloud continues the text for a few tokens (completions API, same prompt format).
    ++handoffs;
    const int budget =
        std::min<int>(static_cast<int>(cfg.cloud_tokens), max_tokens - edge_tokens - cloud_tokens);
    json body = {{"prompt", base.prompt + text},
                 {"max_tokens", budget},
                 {"temperature", std::max(0.0F, run.request.sampling.temperature)},
                 {"top_p", run.request.sampling.top_p}};
    if (!run.request.sampling.stop.empty()) {
      body["stop"] = run.request.sampling.stop;
    }
    auto answer = co_await gateway.cloud_answer(ApiKind::kCompletion, body, run.cancel, run.record,
                                                "continue");
    if (auto* error = std::get_if<ApiError>(&answer)) {
      if (run.cancel.cancelled()) {
        co_return client_gone();
      }
      cloud_failure = error->message;  // the edge finishes alone
      continue;
    }
    const auto& cloud = std::get<Gateway::CloudAnswer>(answer);
    // What the upstream says it wrote, within what it was asked for: a report beyond the budget
    // (malformed, or hostile) cannot push the counts below out of range.
    const int written =
        std::min(std::max(cloud.usage.completion_tokens, cloud.text.empty() ? 0 : 1), budget);
    cloud_tokens += written;
    segments.push_back({{"tier", "cloud"}, {"tokens", written}});
    Piece piece;
    piece.text = cloud.text;
    if (!co_await emit(gateway, run, "cloud", std::move(piece))) {
      co_return client_gone();
    }
    text += cloud.text;
    if (cloud.finish_reason == "stop" && written < budget) {
      finish_reason = "stop";  // the cloud ended the answer
      break;
    }
  }
  if (!co_await gateway.start_answer(run, "edge")) {
    co_return client_gone();
  }
  run.record.tier = cloud_tokens > 0 ? "edge+cloud" : "edge";
  run.record.edge_usage = TierUsage{prompt_tokens, edge_tokens, cached_prompt_tokens};
  run.record.collaboration = {
      {"handoffs", handoffs},
      {"edge_tokens", edge_tokens},
      {"cloud_tokens", cloud_tokens},
      {"entropy_threshold", cfg.entropy_threshold},
      {"segments", std::move(segments)},
      {"cloud_failure", cloud_failure.empty() ? json(nullptr) : json(cloud_failure)}};
  if (!cloud_failure.empty()) {
    run.record.degraded = "the cloud could not take over uncertain positions (" + cloud_failure +
                          "); the on-device model wrote them";
  }
  const TierUsage usage{prompt_tokens, edge_tokens + cloud_tokens, cached_prompt_tokens};
  co_await finish(run, finish_reason, usage);
  co_return std::nullopt;
}

net::awaitable<std::optional<ApiError>> run_review(Gateway& gateway, Gateway::Run& run,
                                                   const std::string& reason,
                                                   const std::string& draft,
                                                   const std::string& draft_tier) {
  const CompletionRequest& request = run.request;
  store::NewTicket ticket;
  if (run.record.routing.is_object() && run.record.routing.contains("signals") &&
      run.record.routing["signals"]["client"].is_string()) {
    ticket.client = run.record.routing["signals"]["client"].get<std::string>();
  }
  ticket.model = request.model;
  ticket.request_json = dump(request.cloud_body);
  if (request.kind == ApiKind::kChat) {
    for (const auto& m : request.messages) {
      if (m.role == "user") {
        ticket.prompt_text = m.content;
      }
    }
  } else {
    ticket.prompt_text = request.prompt;
  }
  ticket.reason = reason;
  ticket.decision_json = dump(run.record.to_json());
  ticket.draft_answer = draft;
  ticket.draft_tier = draft_tier;
  auto created = co_await net::run_on(gateway.store_workers(), [&gateway, &ticket] {
    return gateway.reviews().create(ticket, unix_ms());
  });
  if (!created) {
    log_event(LogLevel::kError, "review", "ticket_not_stored",
              {{"message", created.error().message}});
    ApiError e;
    e.status = 503;
    e.type = "server_error";
    e.code = "review_unavailable";
    e.message = "the query needs a human reviewer but the review queue is unavailable: " +
                created.error().message;
    co_return e;
  }
  const std::string& id = created->id;
  log_event(LogLevel::kInfo, "review", "ticket_created", {{"ticket", id}, {"reason", reason}});
  run.record.review = {{"ticket", id},
                       {"status", "pending_review"},
                       {"reason", reason},
                       {"poll", "/v1/tandem/reviews/" + id}};
  if (run.started && !co_await revise(run, run.record.tier, "human", reason)) {
    co_return client_gone();
  }
  run.record.add_tier("human");
  if (!co_await gateway.start_answer(run, "human")) {
    co_return client_gone();
  }
  run.record.tier = "human";
  co_await finish(run, "pending_review", TierUsage{});
  co_return std::nullopt;
}

}  // namespace tandem::server
