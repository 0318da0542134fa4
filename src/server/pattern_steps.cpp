#include "server/pattern_steps.h"

#include "server/gateway_util.h"
#include "server/responses.h"

namespace tandem::server::pattern_steps {

using nlohmann::json;
using upstream::ApiKind;

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

net::awaitable<bool> revise(Gateway::Run& run, const std::string& from_tier,
                            const std::string& to_tier, const std::string& reason) {
  Revision revision;
  revision.id = "rev-" + std::to_string(run.record.tiers.size());
  revision.from_tier = from_tier;
  revision.to_tier = to_tier;
  revision.reason = reason;
  run.record.revision = revision;
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

}  // namespace tandem::server::pattern_steps
