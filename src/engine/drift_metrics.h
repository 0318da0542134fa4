#pragma once
// The arithmetic of a drift measurement (docs/DRIFT.md): per-position comparison of two
// next-token distributions, per-prompt and overall figures, and the verdict against limits.
// Pure functions over numbers: no llama.cpp, no I/O.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace tandem::engine {

// A log-softmax over raw logits, kept implicit: log p(i) = logits[i] - max - log_sum.
struct LogSoftmax {
  int32_t argmax = 0;    // the lowest index among the largest logits (greedy's choice)
  double max = 0.0;      // the largest logit
  double log_sum = 0.0;  // log sum_i exp(logits[i] - max), >= 0
  double logprob(std::span<const float> logits, int32_t token) const {
    return static_cast<double>(logits[static_cast<size_t>(token)]) - max - log_sum;
  }
};

// Nullopt when `logits` is empty or holds NaN or +infinity (a broken model); -infinity is a
// legitimate "never" and is kept.
std::optional<LogSoftmax> log_softmax(std::span<const float> logits);

// KL(p || q) in nats over the whole vocabulary, computed in double from the raw logits; >= 0,
// +infinity when q rules out a token p allows.
double kl_divergence(std::span<const float> p_logits, const LogSoftmax& p,
                     std::span<const float> q_logits, const LogSoftmax& q);

// The value below which `fraction` (0..1) of `values` lie, interpolating linearly between the
// closest ranks (numpy's default). 0 for no values.
double percentile(std::vector<double> values, double fraction);

// One prompt's measurement. Scored positions are every position of the teacher-forced sequence
// (prompt + the reference's greedy continuation) whose next token is known.
struct PromptDrift {
  std::string source;  // FILE:LINE
  std::string prompt;
  int prompt_tokens = 0;
  int continuation_tokens = 0;   // the reference's greedy continuation, end-of-text included
  std::vector<double> token_kl;  // KL(reference || candidate) per scored position
  int top1_agreements = 0;       // scored positions where both models' first choice is the same
  double reference_nll = 0.0;    // sum over scored positions of -log p(next token), nats
  double candidate_nll = 0.0;
  // Free-running greedy generation from the prompt, end-of-text included when reached.
  int greedy_reference_tokens = 0;
  int greedy_candidate_tokens = 0;
  int greedy_common_prefix = 0;  // leading tokens both generated identically
  std::string reference_text;    // the generated texts, for a reader
  std::string candidate_text;

  int scored_tokens() const { return static_cast<int>(token_kl.size()); }
  double mean_kl() const;
  double max_kl() const;
  double top1_agreement() const;
  double reference_perplexity() const;
  double candidate_perplexity() const;
  double perplexity_ratio() const;  // candidate / reference
  bool greedy_exact_match() const;
  double greedy_prefix_agreement() const;  // common prefix / the longer of the two outputs
};

struct DriftSummary {
  size_t prompts = 0;
  size_t prompt_tokens = 0;
  size_t continuation_tokens = 0;
  size_t scored_tokens = 0;
  // Over every scored position of every prompt (token-weighted).
  double mean_kl = 0.0;
  double p50_kl = 0.0;
  double p95_kl = 0.0;
  double max_kl = 0.0;
  double top1_agreement = 0.0;
  double reference_perplexity = 0.0;
  double candidate_perplexity = 0.0;
  double perplexity_ratio = 0.0;
  // Over prompts (each prompt counts once).
  double greedy_exact_match = 0.0;  // share of prompts whose greedy outputs are identical
  double greedy_prefix_agreement = 0.0;
};

DriftSummary summarize(const std::vector<PromptDrift>& prompts);

// When a candidate counts as drifted. Defaults and their reasons: docs/DRIFT.md.
struct DriftLimits {
  double max_mean_kl = 0.05;                  // nats per token
  double min_top1_agreement = 0.90;           // share of scored positions
  double max_perplexity_ratio = 1.05;         // candidate / reference
  double min_greedy_prefix_agreement = 0.50;  // mean share over prompts
};

// Each limit's range: KL >= 0, ratio > 0, shares within 0..1; the error names the field.
Status validate(const DriftLimits& limits);

struct LimitViolation {
  std::string limit;  // the DriftLimits field, e.g. "max_mean_kl"
  double value = 0.0;
  double bound = 0.0;
  std::string message;  // e.g. "mean KL 0.0812 nats/token exceeds 0.05"
};

// Empty when the summary is within every limit. A NaN figure counts as a violation.
std::vector<LimitViolation> check_limits(const DriftSummary& summary, const DriftLimits& limits);

}  // namespace tandem::engine
