// Token-level collaboration: the edge decodes; where its entropy is high, the cloud continues
// the text for a few tokens.

#include <algorithm>

#include "server/gateway_util.h"
#include "server/pattern_steps.h"
#include "server/patterns.h"
#include "server/responses.h"

namespace tandem::server {

using nlohmann::json;
using upstream::ApiKind;
using namespace pattern_steps;

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
  std::vector<CollaborationSegment> segments;
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
      segments.push_back(
          {"edge", accepted,
           CollaborationSegment::EdgePrompt{summary.prompt_tokens, summary.cached_prompt_tokens}});
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
    segments.push_back({"cloud", written, std::nullopt});
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
  CollaborationPart& collaboration = run.record.collaboration.emplace();
  collaboration.handoffs = handoffs;
  collaboration.edge_tokens = edge_tokens;
  collaboration.cloud_tokens = cloud_tokens;
  collaboration.entropy_threshold = cfg.entropy_threshold;
  collaboration.segments = std::move(segments);
  if (!cloud_failure.empty()) {
    collaboration.cloud_failure = cloud_failure;
  }
  if (!cloud_failure.empty()) {
    run.record.degraded = "the cloud could not take over uncertain positions (" + cloud_failure +
                          "); the on-device model wrote them";
  }
  const TierUsage usage{prompt_tokens, edge_tokens + cloud_tokens, cached_prompt_tokens};
  co_await finish(run, finish_reason, usage);
  co_return std::nullopt;
}

}  // namespace tandem::server
