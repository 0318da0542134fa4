#include "routing/confidence.h"

#include <algorithm>
#include <cmath>

namespace tandem::routing {

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

void ConfidenceTracker::add(double logprob, double entropy, double margin) {
  // NaN (a broken logit row) counts as the least confident token, never as a free pass.
  logprob = std::isnan(logprob) ? kMinLogprob : std::clamp(logprob, kMinLogprob, 0.0);
  entropy = std::isnan(entropy) ? kMaxEntropy : std::clamp(entropy, 0.0, kMaxEntropy);
  margin = std::isnan(margin) ? 0.0 : std::clamp(margin, 0.0, kMaxMargin);
  min_logprob_ = tokens_ == 0 ? logprob : std::min(min_logprob_, logprob);
  sum_logprob_ += logprob;
  sum_entropy_ += entropy;
  sum_margin_ += margin;
  ++tokens_;
}

double ConfidenceTracker::combine(double mean_logprob, double min_logprob, double mean_entropy,
                                  double mean_margin) const {
  return sigmoid(weights_.bias + weights_.mean_logprob * mean_logprob +
                 weights_.min_logprob * min_logprob + weights_.mean_entropy * mean_entropy +
                 weights_.mean_margin * mean_margin);
}

ConfidenceSnapshot ConfidenceTracker::snapshot() const {
  ConfidenceSnapshot s;
  s.tokens = tokens_;
  if (tokens_ == 0) {
    return s;
  }
  const double n = static_cast<double>(tokens_);
  s.mean_logprob = sum_logprob_ / n;
  s.min_logprob = min_logprob_;
  s.mean_entropy = sum_entropy_ / n;
  s.mean_margin = sum_margin_ / n;
  s.combined = combine(s.mean_logprob, s.min_logprob, s.mean_entropy, s.mean_margin);
  return s;
}

ConfidenceVerdict ConfidenceTracker::verdict(double threshold, size_t remaining_tokens) const {
  if (tokens_ == 0) {
    return ConfidenceVerdict::kUndecided;
  }
  // The best final value of each signal, over every way the answer could continue (0 to
  // `remaining_tokens` more tokens). Each mean moves monotonically toward the value of the
  // added tokens, so its extreme is reached with all remaining tokens at the favourable bound;
  // which bound is favourable depends on the sign of the signal's weight. The minimum logprob
  // can only fall, so at best it stays where it is.
  const double n = static_cast<double>(tokens_);
  const double r = static_cast<double>(remaining_tokens);
  auto best_mean = [&](double sum, double weight, double low, double high) {
    const double now = sum / n;
    const double extreme = weight >= 0 ? high : low;
    const double reached = (sum + extreme * r) / (n + r);
    return weight >= 0 ? std::max(now, reached) : std::min(now, reached);
  };
  const double mean_logprob = best_mean(sum_logprob_, weights_.mean_logprob, kMinLogprob, 0.0);
  const double min_logprob = weights_.min_logprob >= 0 ? min_logprob_ : kMinLogprob;
  const double mean_entropy = best_mean(sum_entropy_, weights_.mean_entropy, 0.0, kMaxEntropy);
  const double mean_margin = best_mean(sum_margin_, weights_.mean_margin, 0.0, kMaxMargin);
  const double best = combine(mean_logprob, min_logprob, mean_entropy, mean_margin);
  return best < threshold ? ConfidenceVerdict::kEscalateCertain : ConfidenceVerdict::kUndecided;
}

}  // namespace tandem::routing
