#include "engine/token_signals.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

namespace tandem::engine {
namespace {

TEST(TokenSignalsTest, FastExpMatchesLibm) {
  double worst = 0.0;
  for (float x = -87.0F; x <= 0.0F; x += 0.001F) {
    const double exact = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(exp_nonpositive(x) - exact) / exact);
  }
  EXPECT_LT(worst, 5e-7);
  EXPECT_EQ(exp_nonpositive(0.0F), 1.0F);
  EXPECT_LT(exp_nonpositive(-1000.0F), 1e-37F);
  EXPECT_GE(exp_nonpositive(-1000.0F), 0.0F);
}

TEST(TokenSignalsTest, LargeVocabularyMatchesADoublePrecisionReference) {
  std::vector<float> logits(128256);
  for (size_t i = 0; i < logits.size(); ++i) {
    logits[i] = static_cast<float>((i * 7919) % 1000) / 100.0F - 5.0F;
  }
  double max = -1e30;
  for (float l : logits) {
    max = std::max<double>(max, l);
  }
  double sum = 0.0;
  for (float l : logits) {
    sum += std::exp(l - max);
  }
  double entropy = 0.0;
  for (float l : logits) {
    const double lp = l - max - std::log(sum);
    entropy -= std::exp(lp) * lp;
  }
  TokenSignalCalculator calc;
  auto s = calc.compute(logits, 42, 5);
  EXPECT_NEAR(s.logprob, logits[42] - max - std::log(sum), 1e-5);
  EXPECT_NEAR(s.entropy, entropy, 1e-4);
}

TEST(TokenSignalsTest, UniformDistributionHasMaximalEntropy) {
  TokenSignalCalculator calc;
  std::vector<float> logits(8, 1.5F);
  auto s = calc.compute(logits, 3, 4);
  EXPECT_NEAR(s.logprob, -std::log(8.0), 1e-5);
  EXPECT_NEAR(s.entropy, std::log(8.0), 1e-5);
  EXPECT_NEAR(s.margin, 0.0, 1e-6);
  ASSERT_EQ(s.top.size(), 4U);
}

TEST(TokenSignalsTest, MatchesAHandComputedSoftmax) {
  TokenSignalCalculator calc;
  std::vector<float> logits = {2.0F, 1.0F, 0.0F};
  const double z = std::exp(2.0) + std::exp(1.0) + 1.0;
  const double p0 = std::exp(2.0) / z;
  const double p1 = std::exp(1.0) / z;
  const double p2 = 1.0 / z;
  auto s = calc.compute(logits, 1, 3);
  EXPECT_NEAR(s.logprob, std::log(p1), 1e-6);
  EXPECT_NEAR(s.entropy, -(p0 * std::log(p0) + p1 * std::log(p1) + p2 * std::log(p2)), 1e-6);
  EXPECT_NEAR(s.margin, 1.0, 1e-6);
  ASSERT_EQ(s.top.size(), 3U);
  EXPECT_EQ(s.top[0].token, 0);
  EXPECT_EQ(s.top[1].token, 1);
  EXPECT_EQ(s.top[2].token, 2);
  EXPECT_NEAR(s.top[0].logprob, std::log(p0), 1e-6);
}

TEST(TokenSignalsTest, StableWithExtremeLogits) {
  TokenSignalCalculator calc;
  std::vector<float> logits = {1000.0F, -1000.0F, 0.0F};
  auto s = calc.compute(logits, 0, 0);
  EXPECT_NEAR(s.logprob, 0.0, 1e-6);
  EXPECT_GE(s.entropy, 0.0F);
  EXPECT_TRUE(s.top.empty());
  EXPECT_TRUE(std::isfinite(s.margin));
}

TEST(TokenSignalsTest, TopKLargerThanVocabularyIsClamped) {
  TokenSignalCalculator calc;
  std::vector<float> logits = {0.5F, 0.25F};
  auto s = calc.compute(logits, 0, 20);
  EXPECT_EQ(s.top.size(), 2U);
}

}  // namespace
}  // namespace tandem::engine
