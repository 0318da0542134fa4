#pragma once
// Process-wide llama.cpp set-up: backend initialisation (once) and where its log goes.

#include <functional>
#include <string_view>

namespace tandem::engine {

enum class LlamaLogLevel {
  kQuiet,    // nothing (the default: Tandem reports errors itself, with context)
  kErrors,   // llama.cpp's errors and warnings, prefixed "llama.cpp: ", on stderr
  kVerbose,  // everything llama.cpp says
};

// Idempotent and thread-safe.
void ensure_llama_backend();

// Sets the level only; it applies from the backend's start on (ensure_llama_backend).
void set_llama_log_level(LlamaLogLevel level);

// While it lives, sees every piece of text llama.cpp logs, whatever the level above: how Tandem
// follows work that llama.cpp reports only in its log (the quantizer's per-tensor lines). The
// observer runs on whichever thread logs, one call at a time. Observers nest: the newest one
// sees the log until it is destroyed (in reverse order of creation).
class LlamaLogObserver {
 public:
  using Observe = std::function<void(std::string_view text)>;
  explicit LlamaLogObserver(Observe observe);
  ~LlamaLogObserver();
  LlamaLogObserver(const LlamaLogObserver&) = delete;
  LlamaLogObserver& operator=(const LlamaLogObserver&) = delete;

 private:
  Observe observe_;
  const Observe* previous_;
};

}  // namespace tandem::engine
