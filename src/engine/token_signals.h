#pragma once
// Per-token confidence signals computed from the model's raw logits, before any sampling
// transform (temperature, top-k, penalties). They describe what the model believes, not what
// the sampler did, which is what the routing layer needs and what llama-server reports as
// logprobs when post-sampling probabilities are off.

#include <cstdint>
#include <span>
#include <vector>

namespace tandem::engine {

struct TokenAlternative {
  int32_t token = 0;
  float logprob = 0.0F;
};

struct TokenSignals {
  float logprob = 0.0F;               // log p(chosen token)
  float entropy = 0.0F;               // -sum p log p over the whole vocabulary, in nats
  float margin = 0.0F;                // logprob of the best token minus that of the second best
  std::vector<TokenAlternative> top;  // the `top_k` most likely tokens, most likely first
};

// exp(x) for x <= 0 to within 2e-7 relative, vectorisable (no libm call). Exposed for tests.
float exp_nonpositive(float x);

// Reusable scratch space so that the per-token path allocates nothing in steady state.
class TokenSignalCalculator {
 public:
  // `logits` spans the vocabulary; `chosen` indexes into it; `top_k` may be 0.
  TokenSignals compute(std::span<const float> logits, int32_t chosen, int top_k);

 private:
  std::vector<int32_t> order_;
};

}  // namespace tandem::engine
