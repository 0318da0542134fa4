#pragma once
// The edge's running confidence, updated per token, for the confidence cascade (P1).
// Signals: mean and minimum token logprob, mean entropy and mean margin, combined by a learned
// logistic model into P(the edge's answer is good). Because the tracker knows how many tokens
// may still come, it can tell when no continuation could lift the confidence over the
// threshold, so the cascade stops a doomed draft early instead of finishing it.

#include <cstddef>

#include "config/config.h"

namespace tandem::routing {

// Signal values are clipped to these ranges so that one extreme token cannot dominate and so
// that the best case of the remaining tokens is finite.
inline constexpr double kMinLogprob = -20.0;
inline constexpr double kMaxEntropy = 12.0;  // nats; ln(160k) for the largest vocabularies
inline constexpr double kMaxMargin = 20.0;
inline constexpr double kMinDoubt = 1e-6;  // -mean logprob is clipped here before its log

// log(-mean_logprob), clipped: the `log_doubt` signal.
double log_doubt(double mean_logprob);

struct ConfidenceSnapshot {
  size_t tokens = 0;
  double mean_logprob = 0.0;
  double min_logprob = 0.0;
  double mean_entropy = 0.0;
  double mean_margin = 0.0;
  double combined = 1.0;  // P(good) under the weights; 1 before any token
};

enum class ConfidenceVerdict {
  kUndecided,        // more tokens could still go either way
  kEscalateCertain,  // even perfect remaining tokens leave the confidence below the threshold
};

class ConfidenceTracker {
 public:
  // `complexity`: the ingress classifier's P(cloud needed) for the query; it enters the
  // combination through weights.complexity (0.5 is neutral).
  explicit ConfidenceTracker(const config::ConfidenceWeights& weights, double complexity = 0.5);

  void add(double logprob, double entropy, double margin);
  size_t tokens() const { return tokens_; }
  ConfidenceSnapshot snapshot() const;

  // Whether escalation is already certain when at most `remaining_tokens` more may come.
  ConfidenceVerdict verdict(double threshold, size_t remaining_tokens) const;

 private:
  friend double combined_confidence(const config::ConfidenceWeights&, double, double, double,
                                    double, double, double);
  double combine(double mean_logprob, double min_logprob, double mean_entropy, double mean_margin,
                 double tokens) const;

  config::ConfidenceWeights weights_;
  double prior_ = 0.0;  // weights.complexity * logit(complexity), constant per query
  size_t tokens_ = 0;
  double sum_logprob_ = 0.0;
  double min_logprob_ = 0.0;
  double sum_entropy_ = 0.0;
  double sum_margin_ = 0.0;
};

double sigmoid(double x);

// P(the edge answer is good) for aggregated signals: what the tracker's snapshot computes,
// for callers that have the aggregates (recorded traces) rather than the tokens.
double combined_confidence(const config::ConfidenceWeights& weights, double mean_logprob,
                           double min_logprob, double mean_entropy, double mean_margin,
                           double complexity = 0.5, double tokens = 1);
// log(p / (1 - p)), with p clipped away from 0 and 1 so that the result is finite.
double logit(double p);

}  // namespace tandem::routing
