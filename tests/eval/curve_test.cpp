// The cost-quality curve and RouteLLM's metrics on a five-query example computed by hand
// (docs/EVALUATION.md walks through the same numbers).
//
//   query  edge  cloud  edge confidence   (edge costs 1, cloud 10)
//   a      0     1      -3.0
//   b      0     1      -0.2
//   c      1     1      -1.0
//   d      1     0      -2.0
//   e      0     0      -0.5
//
// Edge quality 0.4, cloud quality 0.6. The confidence cascade escalates the least confident
// first: a (+1), d (-1), c, e (0), b (+1), so PGR goes 0, 1, 0, 0, 0, 1 at shares 0, .2 ... 1:
// APGR = 0.1 + 0.1 + 0.1 = 0.3; CPT(x) = 0.2x (the first segment); 95% of cloud quality
// (0.57) at share 0.17, where the cascade costs 5 + 50 * 0.17 = 13.5 of an all-cloud 50.

#include "eval/curve.h"

#include <gtest/gtest.h>

namespace tandem::eval {
namespace {

const std::vector<Outcome> kOutcomes = {
    {0, 1, 1, 10}, {0, 1, 1, 10}, {1, 1, 1, 10}, {1, 0, 1, 10}, {0, 0, 1, 10}};
const std::vector<double> kNeed = {3.0, 0.2, 1.0, 2.0, 0.5};  // -confidence

TEST(Curve, ConfidenceCascadeMatchesTheHandComputedCurve) {
  const auto curve = sweep(kNeed, kOutcomes, CostModel::kCascade);
  ASSERT_EQ(curve.size(), 6u);
  const double shares[] = {0, 0.2, 0.4, 0.6, 0.8, 1.0};
  const double quality[] = {0.4, 0.6, 0.4, 0.4, 0.4, 0.6};
  for (size_t i = 0; i < curve.size(); ++i) {
    EXPECT_DOUBLE_EQ(curve[i].cloud_share, shares[i]) << i;
    EXPECT_NEAR(curve[i].quality, quality[i], 1e-12) << i;
    EXPECT_NEAR(curve[i].cost, 5 + 10.0 * static_cast<double>(i), 1e-12) << i;
  }
  EXPECT_DOUBLE_EQ(curve[1].threshold, 3.0);

  const CurveSummary s = summarize(curve, 50.0);
  EXPECT_NEAR(s.edge_quality, 0.4, 1e-12);
  EXPECT_NEAR(s.cloud_quality, 0.6, 1e-12);
  ASSERT_TRUE(s.apgr && s.cpt50 && s.cpt80 && s.cpt95);
  EXPECT_NEAR(*s.apgr, 0.3, 1e-12);
  EXPECT_NEAR(*s.cpt50, 0.10, 1e-12);
  EXPECT_NEAR(*s.cpt80, 0.16, 1e-12);
  EXPECT_NEAR(*s.cpt95, 0.19, 1e-12);
  EXPECT_NEAR(s.cloud_share_at_95, 0.17, 1e-12);
  EXPECT_NEAR(s.edge_share_at_95, 0.83, 1e-12);
  EXPECT_NEAR(s.cost_at_95, 13.5, 1e-9);
  EXPECT_NEAR(s.cost_saved_at_95, 0.73, 1e-12);
}

TEST(Curve, RandomRouterIsTheStraightLine) {
  const CurveSummary s = summarize(random_curve(kOutcomes), 50.0);
  EXPECT_NEAR(*s.apgr, 0.5, 1e-12);
  EXPECT_NEAR(*s.cpt50, 0.5, 1e-12);
  EXPECT_NEAR(*s.cpt80, 0.8, 1e-12);
  EXPECT_NEAR(*s.cpt95, 0.95, 1e-12);
  // 0.4 + 0.2 s >= 0.57 at s = 0.85; one tier per query: 5 + 9 * 5 * 0.85 = 43.25.
  EXPECT_NEAR(s.cloud_share_at_95, 0.85, 1e-12);
  EXPECT_NEAR(s.cost_saved_at_95, 1 - 43.25 / 50, 1e-12);
}

TEST(Curve, OracleSendsExactlyTheGainsFirstAndTiesMoveTogether) {
  // Gains a +1, b +1, c 0, d -1, e 0: groups {a, b}, {c, e}, {d}.
  const auto curve = oracle_curve(kOutcomes);
  ASSERT_EQ(curve.size(), 4u);
  EXPECT_NEAR(curve[1].cloud_share, 0.4, 1e-12);
  EXPECT_NEAR(curve[1].quality, 0.8, 1e-12);
  EXPECT_NEAR(curve[2].quality, 0.8, 1e-12);
  EXPECT_NEAR(curve[3].quality, 0.6, 1e-12);
  const CurveSummary s = summarize(curve, 50.0);
  // PGR 0 -> 2 over [0, .4], 2 over [.4, .8], 2 -> 1 over [.8, 1]: 0.4 + 0.8 + 0.3.
  EXPECT_NEAR(*s.apgr, 1.5, 1e-12);
  EXPECT_NEAR(*s.cpt50, 0.1, 1e-12);
  EXPECT_NEAR(s.cost_saved_at_95, 1 - (5 + 45 * 0.17) / 50, 1e-12);
}

TEST(Curve, NoGapMeansNoPgrMetrics) {
  const std::vector<Outcome> same = {{1, 1, 0, 1}, {0, 0, 0, 1}};
  const CurveSummary s = summarize(sweep({1, 0}, same, CostModel::kOneTier), 2.0);
  EXPECT_FALSE(s.apgr.has_value());
  EXPECT_FALSE(s.cpt50.has_value());
  // The edge already has the cloud's quality: nothing needs the cloud.
  EXPECT_DOUBLE_EQ(s.edge_share_at_95, 1.0);
  EXPECT_DOUBLE_EQ(s.cost_saved_at_95, 1.0);
}

TEST(Curve, EmptyInputGivesAnEmptyCurve) {
  EXPECT_TRUE(sweep({}, {}, CostModel::kCascade).empty());
  const CurveSummary s = summarize({}, 0);
  EXPECT_FALSE(s.apgr.has_value());
}

TEST(Curve, AtCloudShareInterpolates) {
  const auto curve = sweep(kNeed, kOutcomes, CostModel::kCascade);
  const Crossing at = at_cloud_share(curve, 0.1);
  EXPECT_NEAR(at.quality, 0.5, 1e-12);
  EXPECT_NEAR(at.cost, 10, 1e-12);
  EXPECT_NEAR(at_cloud_share(curve, 1.0).quality, 0.6, 1e-12);
}

}  // namespace
}  // namespace tandem::eval
