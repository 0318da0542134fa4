#include "engine/generate.h"

#include <chrono>
#include <future>
#include <memory>

namespace tandem::engine {

Result<Completion> generate(Engine& engine, GenerationRequest request,
                            std::function<void(const TokenEvent&)> on_token,
                            const std::atomic<bool>* cancel) {
  struct Shared {
    Completion completion;
    std::promise<Result<Completion>> done;
  };
  auto shared = std::make_shared<Shared>();
  auto future = shared->done.get_future();

  GenerationCallbacks callbacks;
  callbacks.on_token = [shared, on_token = std::move(on_token)](const TokenEvent& event) {
    if (on_token) {
      on_token(event);
    }
    if (!event.is_flush()) {
      shared->completion.tokens.push_back(event);
    }
  };
  callbacks.on_complete = [shared](const CompletionSummary& summary) {
    shared->completion.summary = summary;
    shared->done.set_value(std::move(shared->completion));
  };
  callbacks.on_error = [shared](const Error& error) { shared->done.set_value(error); };

  auto handle = engine.submit(std::move(request), std::move(callbacks));
  if (!handle) {
    return handle.error();
  }
  // Poll the caller's flag (set from a signal handler, say) while waiting.
  while (cancel != nullptr &&
         future.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (cancel->load(std::memory_order_relaxed)) {
      handle.value()->cancel();
      break;
    }
  }
  return future.get();
}

}  // namespace tandem::engine
