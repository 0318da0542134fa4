#include "engine/llama_backend.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include <llama.h>

namespace tandem::engine {
namespace {

std::atomic<LlamaLogLevel> g_level{LlamaLogLevel::kQuiet};

void log_callback(ggml_log_level level, const char* text, void* /*user_data*/) {
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

void set_llama_log_level(LlamaLogLevel level) {
  g_level.store(level, std::memory_order_relaxed);
  ensure_llama_backend();
}

}  // namespace tandem::engine
