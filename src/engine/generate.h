#pragma once
// Blocking convenience over Engine::submit for callers that want the whole completion:
// the CLI, tests and benchmarks. The server uses submit() directly.

#include <atomic>
#include <functional>
#include <vector>

#include "engine/engine.h"

namespace tandem::engine {

struct Completion {
  CompletionSummary summary;
  std::vector<TokenEvent> tokens;  // sampled tokens; flush-only events are not listed
};

// Runs one request to the end. `on_token`, if set, sees every event as it streams (on the
// engine's callback thread). When `cancel` becomes true the request is cancelled and the
// completion ends with FinishReason::kCancelled. Returns the engine's error if it failed.
Result<Completion> generate(Engine& engine, GenerationRequest request,
                            std::function<void(const TokenEvent&)> on_token = {},
                            const std::atomic<bool>* cancel = nullptr);

}  // namespace tandem::engine
