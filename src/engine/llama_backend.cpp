#include "engine/llama_backend.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include <llama.h>

namespace tandem::engine {
namespace {

std::atomic<LlamaLogLevel> g_level{LlamaLogLevel::kQuiet};
std::mutex g_observer_mutex;
const LlamaLogObserver::Observe* g_observer = nullptr;  // guarded by g_observer_mutex

void log_callback(ggml_log_level level, const char* text, void* /*user_data*/) {
  {
    std::lock_guard lock(g_observer_mutex);
    if (g_observer != nullptr && text != nullptr) {
      (*g_observer)(text);
    }
  }
  const LlamaLogLevel configured = g_level.load(std::memory_order_relaxed);
  if (configured == LlamaLogLevel::kQuiet) {
    return;
  }
  const bool important = level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN;
  if (configured == LlamaLogLevel::kErrors && !important) {
    return;
  }
  std::fputs(text, stderr);
}

}  // namespace

void ensure_llama_backend() {
  static std::once_flag once;
  std::call_once(once, [] {
    llama_log_set(log_callback, nullptr);
    llama_backend_init();
  });
}

// Only the level: the backend starts with the first model load (ensure_llama_backend), so a
// gateway without an edge never initialises ggml's CPU backend at all.
void set_llama_log_level(LlamaLogLevel level) {
  g_level.store(level, std::memory_order_relaxed);
}

LlamaLogObserver::LlamaLogObserver(Observe observe) : observe_(std::move(observe)) {
  ensure_llama_backend();  // installs the callback that calls observers
  std::lock_guard lock(g_observer_mutex);
  previous_ = g_observer;
  g_observer = &observe_;
}

LlamaLogObserver::~LlamaLogObserver() {
  std::lock_guard lock(g_observer_mutex);
  g_observer = previous_;
}

}  // namespace tandem::engine
