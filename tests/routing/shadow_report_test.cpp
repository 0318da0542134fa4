// Shadow mode's arithmetic: Wilson bounds checked against values worked out by hand, the
// verdict rules, the sample-size estimate, traffic shares, sampling, token F1 and --since.

#include "routing/shadow_report.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::routing {
namespace {

ShadowCounts counts(const std::string& kind, int64_t agreed, int64_t samples) {
  ShadowCounts c;
  c.kind = kind;
  c.compared = samples;
  c.agreed = agreed;
  c.sum_f1 = 0.9 * static_cast<double>(samples);
  c.sum_edge_confidence = 0.7 * static_cast<double>(samples);
  return c;
}

config::ShadowConfig shadow(double target = 0.95, uint32_t min_samples = 30) {
  config::ShadowConfig c;
  c.enabled = true;
  c.target_quality = target;
  c.min_samples = min_samples;
  return c;
}

const ShadowKindReport& kind_of(const ShadowReport& report, const std::string& kind) {
  for (const auto& k : report.kinds) {
    if (k.kind == kind) {
      return k;
    }
  }
  static const ShadowKindReport kMissing;
  ADD_FAILURE() << "no kind " << kind;
  return kMissing;
}

TEST(WilsonInterval, MatchesTheHandComputedBounds) {
  // 8 of 10, z = 1.959964: z^2 = 3.841459; d = 1 + z^2/n = 1.3841459;
  // centre = (0.8 + z^2/(2n)) / d = 0.9920729 / 1.3841459 = 0.7167470;
  // half = z / d * sqrt(0.8 * 0.2 / 10 + z^2 / (4 n^2)) = 1.4160 * sqrt(0.0256036) = 0.2265845.
  const Interval b = wilson_interval(8, 10);
  EXPECT_NEAR(b.lower, 0.490162, 1e-6);
  EXPECT_NEAR(b.upper, 0.943318, 1e-6);
  // All of n agree: lower = n / (n + z^2). 73 / 76.841459 = 0.950008, the first n past 0.95.
  EXPECT_NEAR(wilson_interval(73, 73).lower, 0.950008, 1e-6);
  EXPECT_LT(wilson_interval(72, 72).lower, 0.95);
  // None of n agree: upper = z^2 / (n + z^2). 3.841459 / 6.841459 = 0.561497.
  EXPECT_NEAR(wilson_interval(0, 3).upper, 0.561497, 1e-6);
  EXPECT_DOUBLE_EQ(wilson_interval(0, 3).lower, 0.0);
  const Interval none = wilson_interval(0, 0);
  EXPECT_DOUBLE_EQ(none.lower, 0.0);
  EXPECT_DOUBLE_EQ(none.upper, 1.0);
}

TEST(ShadowVerdict, MovesOnlyOnEnoughEvidence) {
  const ShadowReport r = shadow_report({counts("factoid", 73, 73), counts("math", 40, 40),
                                        counts("code", 0, 3), counts("multiple_choice", 19, 20)},
                                       shadow());
  const auto& factoid = kind_of(r, "factoid");
  EXPECT_EQ(factoid.verdict, ShadowVerdict::kMoveToEdge);
  EXPECT_FALSE(factoid.more_samples);
  EXPECT_DOUBLE_EQ(factoid.agreement, 1.0);
  EXPECT_DOUBLE_EQ(factoid.mean_f1, 0.9);
  EXPECT_DOUBLE_EQ(factoid.mean_edge_confidence, 0.7);

  // 40 of 40 is not yet evidence of 95 %: 33 more agreeing samples make 73.
  const auto& math = kind_of(r, "math");
  EXPECT_EQ(math.verdict, ShadowVerdict::kNeedMoreSamples);
  EXPECT_NEAR(math.bounds.lower, 0.912378, 1e-6);
  ASSERT_TRUE(math.more_samples);
  EXPECT_EQ(*math.more_samples, 33);

  // Three disagreements already rule 95 % out.
  EXPECT_EQ(kind_of(r, "code").verdict, ShadowVerdict::kStayInCloud);

  // Exactly the target: no number of samples at this rate decides.
  const auto& mc = kind_of(r, "multiple_choice");
  EXPECT_EQ(mc.verdict, ShadowVerdict::kNeedMoreSamples);
  EXPECT_FALSE(mc.more_samples);

  // A kind without samples needs min_samples.
  const auto& open = kind_of(r, "open");
  EXPECT_EQ(open.samples, 0);
  EXPECT_EQ(open.verdict, ShadowVerdict::kNeedMoreSamples);
  ASSERT_TRUE(open.more_samples);
  EXPECT_EQ(*open.more_samples, 30);

  EXPECT_EQ(r.move_to_edge, std::vector<std::string>{"factoid"});
  EXPECT_EQ(r.overall.kind, "overall");
  EXPECT_EQ(r.overall.samples, 136);
  EXPECT_EQ(r.overall.agreed, 132);
}

TEST(ShadowVerdict, MinSamplesHoldsBackAPerfectRecord) {
  const ShadowReport r = shadow_report({counts("factoid", 73, 73)}, shadow(0.95, 100));
  const auto& factoid = kind_of(r, "factoid");
  EXPECT_EQ(factoid.verdict, ShadowVerdict::kNeedMoreSamples);
  ASSERT_TRUE(factoid.more_samples);
  EXPECT_EQ(*factoid.more_samples, 27);
  // At a lower target, 29 of 30 (lower bound 0.8333) is enough.
  const ShadowReport low = shadow_report({counts("code", 29, 30)}, shadow(0.8, 30));
  EXPECT_EQ(kind_of(low, "code").verdict, ShadowVerdict::kMoveToEdge);
}

TEST(ShadowVerdict, EstimatesSamplesUntilTheCloudIsCertainlyBetter) {
  // 9 of 10: upper bound 0.982; at a steady 90 % the upper bound drops below 0.95 at n = 73.
  const ShadowReport r = shadow_report({counts("math", 9, 10)}, shadow());
  const auto& math = kind_of(r, "math");
  EXPECT_NEAR(math.bounds.upper, 0.982124, 1e-6);
  EXPECT_EQ(math.verdict, ShadowVerdict::kNeedMoreSamples);
  ASSERT_TRUE(math.more_samples);
  EXPECT_EQ(*math.more_samples, 63);
  // A target of 1 can never be shown.
  const ShadowReport perfect = shadow_report({counts("math", 50, 50)}, shadow(1.0, 30));
  EXPECT_FALSE(kind_of(perfect, "math").more_samples);
}

TEST(ShadowReport, TrafficSharesSayWhatMovingAKindMoves) {
  auto math = counts("math", 73, 73);
  math.requests = 60;
  math.shadowed = 50;  // 10 stayed on the edge by rule (private data...)
  auto code = counts("code", 0, 5);
  code.requests = 30;
  code.shadowed = 30;
  ShadowCounts open;  // traffic, no samples yet
  open.kind = "open";
  open.requests = 10;
  open.shadowed = 10;
  const ShadowReport r = shadow_report({math, code, open}, shadow());
  EXPECT_EQ(r.requests, 100);
  EXPECT_EQ(r.shadowed, 90);
  EXPECT_DOUBLE_EQ(kind_of(r, "math").traffic_share, 0.6);
  EXPECT_DOUBLE_EQ(kind_of(r, "math").movable_share, 0.5);
  EXPECT_DOUBLE_EQ(kind_of(r, "code").traffic_share, 0.3);
  EXPECT_EQ(r.move_to_edge, std::vector<std::string>{"math"});
  EXPECT_DOUBLE_EQ(r.edge_share_if_moved, 0.5);
  EXPECT_DOUBLE_EQ(r.overall.traffic_share, 1.0);
  EXPECT_DOUBLE_EQ(r.overall.movable_share, 0.9);
}

TEST(ShadowReport, ListsEveryKnownKindAndThenUnknownOnes) {
  const ShadowReport r = shadow_report({counts("poetry", 1, 1), counts("math", 1, 1)}, shadow());
  ASSERT_EQ(r.kinds.size(), 6U);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.kinds[i].kind, config::kQueryKinds[i]);
  }
  EXPECT_EQ(r.kinds[5].kind, "poetry");
  EXPECT_DOUBLE_EQ(r.kinds[0].traffic_share, 0.0);  // no traffic counted: no division by zero
}

TEST(ShadowSampling, IsDeterministicPerRequestAndHonoursTheShare) {
  EXPECT_FALSE(shadow_sampled("chatcmpl-1", 0.0));
  EXPECT_TRUE(shadow_sampled("chatcmpl-1", 1.0));
  EXPECT_TRUE(shadow_sampled("", 1.0));
  int sampled = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string id = "chatcmpl-" + std::to_string(i);
    const bool once = shadow_sampled(id, 0.1);
    EXPECT_EQ(once, shadow_sampled(id, 0.1));
    sampled += once ? 1 : 0;
  }
  EXPECT_NEAR(sampled / 20000.0, 0.1, 0.01);
}

TEST(TokenF1, OverlapOfNormalisedTokens) {
  EXPECT_DOUBLE_EQ(token_f1("the cat sat", "the cat sat down"), 6.0 / 7.0);
  EXPECT_DOUBLE_EQ(token_f1("Hello, World!", "hello world"), 1.0);
  EXPECT_DOUBLE_EQ(token_f1("a a b", "a b b"), 2.0 / 3.0);  // multiset overlap
  EXPECT_DOUBLE_EQ(token_f1("", ""), 1.0);
  EXPECT_DOUBLE_EQ(token_f1("", "x"), 0.0);
  EXPECT_DOUBLE_EQ(token_f1("red", "blue"), 0.0);
  EXPECT_DOUBLE_EQ(token_f1("我爱你", "我爱他"), 2.0 / 3.0);  // one token per character
}

TEST(ParseSince, DurationsDatesAndMilliseconds) {
  const int64_t now = 1748779200000;  // 2025-06-01T12:00:00Z
  EXPECT_EQ(parse_since("24h", now).value(), now - 86400000);
  EXPECT_EQ(parse_since("90s", now).value(), now - 90000);
  EXPECT_EQ(parse_since("2w", now).value(), now - 14 * 86400000LL);
  EXPECT_EQ(parse_since("2025-06-01", now).value(), 1748736000000);
  EXPECT_EQ(parse_since("2025-06-01T12:00", now).value(), now);
  EXPECT_EQ(parse_since("2025-06-01T12:00:00Z", now).value(), now);
  EXPECT_EQ(parse_since("1748736000000", now).value(), 1748736000000);
  EXPECT_EQ(parse_since("100000d", now).value(), 0);  // before the epoch: everything
  for (const char* bad : {"", "yesterday", "5x", "-1h", "1.5h", "2025-13-01", "2025-02-30",
                          "2025-06-01T25:00", "2025-06-01T12", "2025-06-01T12:00:00.5"}) {
    auto parsed = parse_since(bad, now);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find("24h"), std::string::npos);
  }
}

}  // namespace
}  // namespace tandem::routing
