#pragma once
// Process-wide llama.cpp set-up: backend initialisation (once) and where its log goes.

namespace tandem::engine {

enum class LlamaLogLevel {
  kQuiet,    // nothing (the default: Tandem reports errors itself, with context)
  kErrors,   // llama.cpp's errors and warnings, prefixed "llama.cpp: ", on stderr
  kVerbose,  // everything llama.cpp says
};

// Idempotent and thread-safe.
void ensure_llama_backend();

void set_llama_log_level(LlamaLogLevel level);

}  // namespace tandem::engine
