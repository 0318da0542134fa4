#include "server/canary.h"

#include "common/answer_match.h"
#include "common/log.h"
#include "net/sleep.h"
#include "server/gateway.h"
#include "server/gateway_util.h"

namespace tandem::server {
namespace {

using nlohmann::json;

// One canary prompt as a completion request (greedy, short), parsed the way a client's is.
std::optional<CompletionRequest> canary_request(const std::string& prompt, uint32_t max_tokens,
                                                const std::string& model) {
  const json body = {{"model", model},
                     {"messages", json::array({{{"role", "user"}, {"content", prompt}}})},
                     {"temperature", 0},
                     {"max_tokens", max_tokens}};
  auto parsed =
      parse_completion_request(body.dump(), upstream::ApiKind::kChat, static_cast<int>(max_tokens));
  if (auto* request = std::get_if<CompletionRequest>(&parsed)) {
    return std::move(*request);
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& default_canary_prompts() {
  static const std::vector<std::string> prompts = {
      "What is the capital of France? Answer with one word.",
      "What is 12 + 30? Answer with the number only.",
      "Which planet is known as the Red Planet? Answer with one word.",
      "Is water wet? Answer yes or no.",
      "What is the opposite of 'hot'? Answer with one word.",
  };
  return prompts;
}

net::awaitable<telemetry::CanaryRun> run_canary(Gateway& gateway, CancelSignal& cancel) {
  const auto& settings = gateway.config().operations.canary;
  const auto& prompts = settings.prompts.empty() ? default_canary_prompts() : settings.prompts;
  telemetry::CanaryRun run;
  run.prompts = prompts.size();
  if (gateway.engine() != nullptr) {
    run.edge_sha256 = gateway.engine()->model().sha256;
  }
  run.cloud_model = gateway.cloud_model();
  for (const auto& prompt : prompts) {
    if (cancel.cancelled()) {
      ++run.failed;
      continue;
    }
    auto request = canary_request(prompt, settings.max_tokens, kRoutedModel);
    if (!request || gateway.engine() == nullptr || gateway.cloud_model().empty()) {
      ++run.failed;
      continue;
    }
    auto generation = co_await gateway.prepare_edge(*request);
    if (std::holds_alternative<ApiError>(generation)) {
      ++run.failed;
      continue;
    }
    const Gateway::TokenHandler ignore = [](const engine::TokenEvent&) -> net::awaitable<bool> {
      co_return true;
    };
    auto edge = co_await gateway.edge_generate(
        std::move(std::get<engine::GenerationRequest>(generation)), ignore, cancel);
    DecisionRecord record;
    record.request_id = "canary";
    json body = request->cloud_body;
    auto cloud = co_await gateway.cloud_answer(upstream::ApiKind::kChat, std::move(body), cancel,
                                               record, "canary");
    const auto* edge_summary = std::get_if<engine::CompletionSummary>(&edge);
    const auto* cloud_answer = std::get_if<Gateway::CloudAnswer>(&cloud);
    if (edge_summary == nullptr || cloud_answer == nullptr) {
      ++run.failed;
      continue;
    }
    if (!record.cloud_model.empty()) {
      run.cloud_model = record.cloud_model;
    }
    if (answer_hash(edge_summary->text) == answer_hash(cloud_answer->text)) {
      ++run.agreed;
    }
  }
  run.at_ms = unix_ms();
  co_return run;
}

net::awaitable<void> canary_forever(Gateway& gateway, CancelSignal& stop) {
  const auto interval = std::chrono::seconds(gateway.config().operations.canary.interval_s);
  while (!stop.cancelled()) {
    auto run = co_await run_canary(gateway, stop);
    if (stop.cancelled()) {
      break;
    }
    gateway.operations().record_canary(run);
    const bool slept = co_await net::sleep_for(interval, stop);
    if (!slept) {
      break;
    }
  }
}

}  // namespace tandem::server
