#include "engine/token_signals.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

namespace tandem::engine {

float exp_nonpositive(float x) {
  // exp(x) = 2^n * exp(r) with n = round(x / ln 2) and |r| <= ln(2) / 2; exp(r) by its
  // Taylor series to r^7 (relative error < 2e-7 there); 2^n built in the exponent bits.
  // Every step is plain arithmetic, so the loop that calls it vectorises.
  constexpr float kLog2e = 1.44269504088896341F;
  constexpr float kLn2Hi = 0.693359375F;  // ln 2 split so that n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4F;
  constexpr float kRoundMagic = 12582912.0F;  // 1.5 * 2^23: adding it rounds to an integer
  x = std::max(x, -87.0F);                    // exp(-87) ~ 1.6e-38: below, 0 is exact enough
  const float n = (x * kLog2e + kRoundMagic) - kRoundMagic;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0F / 5040.0F;
  p = p * r + 1.0F / 720.0F;
  p = p * r + 1.0F / 120.0F;
  p = p * r + 1.0F / 24.0F;
  p = p * r + 1.0F / 6.0F;
  p = p * r + 0.5F;
  p = p * r + 1.0F;
  p = p * r + 1.0F;
  const auto exponent = static_cast<int32_t>(n) + 127;
  return p * std::bit_cast<float>(static_cast<uint32_t>(exponent) << 23);
}

TokenSignals TokenSignalCalculator::compute(std::span<const float> logits, int32_t chosen,
                                            int top_k) {
  TokenSignals signals;
  if (logits.empty()) {
    return signals;
  }
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  // exp() over the whole vocabulary is the per-token cost here (128 k entries for Llama 3):
  // libm's exp costs ~100 instructions a call, the vectorised exp_nonpositive a few.
  // Sums run in float within blocks and in double across them, so large vocabularies keep
  // their tail.
  constexpr size_t kBlock = 1024;
  double sum = 0.0;
  double weighted = 0.0;  // sum of exp(l - max) * (l - max)
  for (size_t begin = 0; begin < logits.size(); begin += kBlock) {
    const size_t end = std::min(logits.size(), begin + kBlock);
    float block_sum = 0.0F;
    float block_weighted = 0.0F;
#pragma omp simd reduction(+ : block_sum, block_weighted)
    for (size_t i = begin; i < end; ++i) {
      const float shifted = logits[i] - max_logit;
      const float e = exp_nonpositive(shifted);
      block_sum += e;
      block_weighted += e * shifted;
    }
    sum += block_sum;
    weighted += block_weighted;
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
