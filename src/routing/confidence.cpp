#include "routing/confidence.h"

#include <algorithm>
#include <cmath>

namespace tandem::routing {

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

double logit(double p) {
  constexpr double kEdge = 1e-6;
  p = std::isnan(p) ? 0.5 : std::clamp(p, kEdge, 1.0 - kEdge);
  return std::log(p / (1.0 - p));
}

double log_doubt(double mean_logprob) {
  return std::log(std::clamp(-mean_logprob, kMinDoubt, -kMinLogprob));
}

double combined_confidence(const config::ConfidenceWeights& weights, double mean_logprob,
                           double min_logprob, double mean_entropy, double mean_margin,
                           double complexity, double tokens) {
  ConfidenceTracker tracker(weights, complexity);
  return tracker.combine(std::clamp(mean_logprob, kMinLogprob, 0.0),
                         std::clamp(min_logprob, kMinLogprob, 0.0),
                         std::clamp(mean_entropy, 0.0, kMaxEntropy),
                         std::clamp(mean_margin, 0.0, kMaxMargin), std::max(tokens, 0.0));
}

ConfidenceTracker::ConfidenceTracker(const config::ConfidenceWeights& weights, double complexity)
    : weights_(weights), prior_(weights.complexity * logit(complexity)) {}

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
                                  double mean_margin, double tokens) const {
  return sigmoid(prior_ + weights_.bias + weights_.log_tokens * std::log1p(tokens) +
                 weights_.mean_logprob * mean_logprob +
                 weights_.log_doubt * log_doubt(mean_logprob) + weights_.min_logprob * min_logprob +
                 weights_.mean_entropy * mean_entropy + weights_.mean_margin * mean_margin);
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
  s.combined = combine(s.mean_logprob, s.min_logprob, s.mean_entropy, s.mean_margin, n);
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
  // The mean logprob enters twice (linear and log-doubt terms), so its best final value may
  // lie inside the reachable interval: check the ends and the stationary point.
  const double now = sum_logprob_ / n;
  const double low = std::min(now, (sum_logprob_ + kMinLogprob * r) / (n + r));
  const double high = std::max(now, sum_logprob_ / (n + r));
  auto logprob_terms = [&](double m) {
    return weights_.mean_logprob * m + weights_.log_doubt * log_doubt(m);
  };
  double mean_logprob = logprob_terms(low) >= logprob_terms(high) ? low : high;
  if (weights_.mean_logprob != 0) {
    const double stationary = -weights_.log_doubt / weights_.mean_logprob;
    if (stationary > low && stationary < high &&
        logprob_terms(stationary) > logprob_terms(mean_logprob)) {
      mean_logprob = stationary;
    }
  }
  const double min_logprob = weights_.min_logprob >= 0 ? min_logprob_ : kMinLogprob;
  const double mean_entropy = best_mean(sum_entropy_, weights_.mean_entropy, 0.0, kMaxEntropy);
  const double mean_margin = best_mean(sum_margin_, weights_.mean_margin, 0.0, kMaxMargin);
  // The answer's length can only grow: at best it stops now or runs to the limit.
  const double tokens = weights_.log_tokens >= 0 ? n + r : n;
  const double best = combine(mean_logprob, min_logprob, mean_entropy, mean_margin, tokens);
  return best < threshold ? ConfidenceVerdict::kEscalateCertain : ConfidenceVerdict::kUndecided;
}

}  // namespace tandem::routing
