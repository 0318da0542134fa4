#include "engine/token_signals.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tandem::engine {

TokenSignals TokenSignalCalculator::compute(std::span<const float> logits, int32_t chosen,
                                            int top_k) {
  TokenSignals signals;
  if (logits.empty()) {
    return signals;
  }
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  // Sum in double: with 100k+ vocabularies float accumulation loses the tail.
  double sum = 0.0;
  double weighted = 0.0;  // sum of exp(l - max) * (l - max)
  for (float logit : logits) {
    const double shifted = static_cast<double>(logit) - max_logit;
    const double e = std::exp(shifted);
    sum += e;
    weighted += e * shifted;
  }
  const double log_sum = std::log(sum);
  auto logprob_of = [&](int32_t token) {
    return static_cast<float>(static_cast<double>(logits[static_cast<size_t>(token)]) - max_logit -
                              log_sum);
  };
  // H = -sum p log p with p = e/sum and log p = shifted - log_sum.
  signals.entropy = static_cast<float>(std::max(0.0, log_sum - weighted / sum));
  signals.logprob = logprob_of(chosen);

  const int keep = std::clamp(std::max(top_k, 2), 0, static_cast<int>(logits.size()));
  order_.resize(logits.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::partial_sort(order_.begin(), order_.begin() + keep, order_.end(), [&](int32_t a, int32_t b) {
    const float la = logits[static_cast<size_t>(a)];
    const float lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  });
  signals.margin = keep >= 2 ? logprob_of(order_[0]) - logprob_of(order_[1])
                             : std::numeric_limits<float>::infinity();
  const int reported = std::clamp(top_k, 0, keep);
  signals.top.reserve(static_cast<size_t>(reported));
  for (int i = 0; i < reported; ++i) {
    signals.top.push_back(
        {order_[static_cast<size_t>(i)], logprob_of(order_[static_cast<size_t>(i)])});
  }
  return signals;
}

}  // namespace tandem::engine
