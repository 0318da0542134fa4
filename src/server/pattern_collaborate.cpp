// Token-level collaboration: the edge decodes; where its entropy is high, the cloud continues
// the text for a few tokens.

#include <algorithm>

#include "server/gateway_util.h"
#include "server/pattern_steps.h"
#include "server/patterns.h"
#include "server/responses.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using upstream::ApiKind;
using namespace pattern_steps;

// The text the two tiers write together, and what each wrote.
struct Collaboration {
  engine::GenerationRequest base;  // the edge's generation for the request as it came
  int max_tokens = 0;
  std::string text;  // everything written so far, by either tier
  int edge_tokens = 0;
  int cloud_tokens = 0;
  int prompt_tokens = 0;
  int cached_prompt_tokens = 0;  // of the first segment's prompt
  uint32_t handoffs = 0;
  std::vector<CollaborationSegment> segments;
  std::string finish_reason = "length";
  std::string cloud_failure;  // once the cloud failed, the edge finishes alone
  bool done = false;          // a tier ended the answer

  int remaining() const { return max_tokens - edge_tokens - cloud_tokens; }
};

// The edge writes until its entropy passes the threshold at a position the cloud may take
// (then that position is the cloud's, and its token is dropped) or until it ends the answer.
net::awaitable<std::optional<ApiError>> edge_segment(Gateway& gateway, Gateway::Run& run,
                                                     const config::CollaborateConfig& cfg,
                                                     Collaboration& c) {
  engine::GenerationRequest segment = c.base;
  segment.prompt = c.base.prompt + c.text;
  segment.sampling.max_tokens = c.remaining();
  std::string raw;    // this segment's accepted tokens
  std::string shown;  // what of it reached the client
  bool uncertain = false;
  bool client_left = false;
  size_t offset = c.text.size();
  int accepted = 0;
  const bool may_hand_off = c.handoffs < cfg.max_handoffs && c.cloud_failure.empty();
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
      const bool sent = co_await emit(gateway, run, "edge", std::move(*piece));
      client_left = !sent;
      co_return sent;
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
  if (c.prompt_tokens == 0) {
    c.prompt_tokens = summary.prompt_tokens;
    c.cached_prompt_tokens = summary.cached_prompt_tokens;
  }
  c.edge_tokens += accepted;
  if (accepted > 0) {
    // A hand-back's prompt is the last one plus the cloud's tokens: the cache holds the rest.
    c.segments.push_back(
        {"edge", accepted,
         CollaborationSegment::EdgePrompt{summary.prompt_tokens, summary.cached_prompt_tokens}});
  }
  run.record.add_tier("edge");
  if (!uncertain) {
    c.text += shown;
    c.finish_reason = finish_name(summary.finish_reason);
    c.done = true;
    co_return std::nullopt;
  }
  // Text the edge held back (a partial stop string or character) is part of the context.
  if (raw.size() > shown.size() && raw.compare(0, shown.size(), shown) == 0) {
    Piece rest;
    rest.text = raw.substr(shown.size());
    const bool sent = co_await emit(gateway, run, "edge", std::move(rest));
    if (!sent) {
      co_return client_gone();
    }
  }
  c.text += raw;
  co_return std::nullopt;
}

// The cloud continues the text for a few tokens (completions API, same prompt format). A
// failure leaves the rest to the edge.
net::awaitable<std::optional<ApiError>> cloud_segment(Gateway& gateway, Gateway::Run& run,
                                                      const config::CollaborateConfig& cfg,
                                                      Collaboration& c) {
  ++c.handoffs;
  const int budget = std::min<int>(static_cast<int>(cfg.cloud_tokens), c.remaining());
  json body = {{"prompt", c.base.prompt + c.text},
               {"max_tokens", budget},
               {"temperature", std::max(0.0F, run.request.sampling.temperature)},
               {"top_p", run.request.sampling.top_p}};
  if (!run.request.sampling.stop.empty()) {
    body["stop"] = run.request.sampling.stop;
  }
  auto answer =
      co_await gateway.cloud_answer(ApiKind::kCompletion, body, run.cancel, run.record, "continue");
  if (auto* error = std::get_if<ApiError>(&answer)) {
    if (run.cancel.cancelled()) {
      co_return client_gone();
    }
    c.cloud_failure = error->message;
    co_return std::nullopt;
  }
  const auto& cloud = std::get<Gateway::CloudAnswer>(answer);
  // What the upstream says it wrote, within what it was asked for: a report beyond the budget
  // (malformed, or hostile) cannot push the counts out of range.
  const int written =
      std::min(std::max(cloud.usage.completion_tokens, cloud.text.empty() ? 0 : 1), budget);
  c.cloud_tokens += written;
  c.segments.push_back({"cloud", written, std::nullopt});
  Piece piece;
  piece.text = cloud.text;
  const bool sent = co_await emit(gateway, run, "cloud", std::move(piece));
  if (!sent) {
    co_return client_gone();
  }
  c.text += cloud.text;
  if (cloud.finish_reason == "stop" && written < budget) {
    c.finish_reason = "stop";  // the cloud ended the answer
    c.done = true;
  }
  co_return std::nullopt;
}

// The record of a finished collaboration: tiers, usage, segments, and a degraded note when the
// cloud failed.
void record_collaboration(Gateway::Run& run, const config::CollaborateConfig& cfg,
                          Collaboration& c) {
  run.record.tier = c.cloud_tokens > 0 ? "edge+cloud" : "edge";
  run.record.edge_usage = TierUsage{c.prompt_tokens, c.edge_tokens, c.cached_prompt_tokens};
  CollaborationPart& collaboration = run.record.collaboration.emplace();
  collaboration.handoffs = c.handoffs;
  collaboration.edge_tokens = c.edge_tokens;
  collaboration.cloud_tokens = c.cloud_tokens;
  collaboration.entropy_threshold = cfg.entropy_threshold;
  collaboration.segments = std::move(c.segments);
  if (!c.cloud_failure.empty()) {
    collaboration.cloud_failure = c.cloud_failure;
    run.record.degraded = "the cloud could not take over uncertain positions (" + c.cloud_failure +
                          "); the on-device model wrote them";
  }
}

}  // namespace

net::awaitable<std::optional<ApiError>> run_collaborate(Gateway& gateway, Gateway::Run& run) {
  const config::CollaborateConfig& cfg = gateway.config().routing.collaborate;
  auto generation = co_await gateway.prepare_edge(run.request);
  if (auto* error = std::get_if<ApiError>(&generation)) {
    co_return *error;
  }
  Collaboration c;
  c.base = std::get<engine::GenerationRequest>(generation);
  c.max_tokens = run.request.sampling.max_tokens;
  while (!c.done && c.remaining() > 0) {
    auto edge_error = co_await edge_segment(gateway, run, cfg, c);
    if (edge_error) {
      co_return edge_error;
    }
    if (c.done) {
      break;
    }
    auto cloud_error = co_await cloud_segment(gateway, run, cfg, c);
    if (cloud_error) {
      co_return cloud_error;
    }
  }
  const bool started = co_await gateway.start_answer(run, "edge");
  if (!started) {
    co_return client_gone();
  }
  record_collaboration(run, cfg, c);
  const TierUsage usage{c.prompt_tokens, c.edge_tokens + c.cloud_tokens, c.cached_prompt_tokens};
  co_await finish(run, c.finish_reason, usage);
  co_return std::nullopt;
}

}  // namespace tandem::server
