#pragma once
// Quantization drift: how far a candidate model (say, a Q4_0 derived for the edge) strays from
// its reference (the F32 or F16 original) on the operator's own prompts. See docs/DRIFT.md.
//
// An offline batch job, not part of serving: it loads both models, drives llama.cpp directly on
// the caller's thread, and is deterministic (greedy decoding, the same batch layout for both
// models, so an identical candidate measures exactly zero).

#include <string>
#include <vector>

#include "common/progress.h"
#include "common/result.h"
#include "engine/drift_metrics.h"
#include "engine/drift_prompts.h"
#include "engine/model_identity.h"

namespace tandem::engine {

inline constexpr int kMaxDriftContinuationTokens = 4096;

struct DriftOptions {
  std::string reference_path;
  std::string candidate_path;
  // Tokens of the reference's greedy continuation scored after each prompt, and the most each
  // model generates for the greedy comparison; 1 to kMaxDriftContinuationTokens.
  int continuation_tokens = 32;
  int threads = 0;  // 0: one per hardware thread
  DriftLimits limits;
};

struct DriftReport {
  ModelIdentity reference;
  ModelIdentity candidate;
  int continuation_tokens = 0;
  DriftLimits limits;
  std::vector<PromptDrift> prompts;  // in the order given
  DriftSummary summary;
  std::vector<LimitViolation> violations;  // empty: within limits
  bool drifted() const { return !violations.empty(); }
};

// For each prompt: feeds both models the same tokens (the prompt, then the reference's greedy
// continuation) and compares their next-token distributions at every position; then lets each
// model generate greedily from the prompt and compares the outputs.
// Errors: kInvalidArgument (options, limits, empty prompt list, vocabularies that differ, a
// prompt that tokenizes to nothing), kNotFound / kInvalidModel (a model file),
// kContextOverflow (a prompt plus the continuation exceeds a model's trained context, naming
// FILE:LINE), kInsufficientMemory, kInternal (llama.cpp failed, or produced NaN logits).
// Reports its phases: hashing and loading each model (in percent, from llama.cpp), then one step
// per prompt measured.
Result<DriftReport> measure_drift(const DriftOptions& options,
                                  const std::vector<DriftPrompt>& prompts,
                                  Progress& progress = no_progress());

}  // namespace tandem::engine
