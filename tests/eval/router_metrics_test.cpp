#include "eval/router_metrics.h"

#include <cmath>

#include <gtest/gtest.h>

namespace tandem::eval {
namespace {

struct AucCase {
  const char* name;
  std::vector<double> scores;
  std::vector<int> labels;
  double auc;  // NaN: one class is absent
};

// Mann-Whitney AUC: the share of (positive, negative) pairs ranked right, ties counting half.
TEST(RouterMetricsTest, AucCountsPairsRankedRightAndTiesAsHalf) {
  const double nan = std::nan("");
  const AucCase cases[] = {
      {"perfect", {0.1, 0.2, 0.8, 0.9}, {0, 0, 1, 1}, 1.0},
      {"reversed", {0.9, 0.8, 0.2, 0.1}, {0, 0, 1, 1}, 0.0},
      {"all tied", {0.5, 0.5, 0.5, 0.5}, {0, 1, 0, 1}, 0.5},
      {"one tie across classes", {0.1, 0.5, 0.5, 0.9}, {0, 0, 1, 1}, 0.875},
      {"positives only", {0.1, 0.9}, {1, 1}, nan},
      {"no rows", {}, {}, nan},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const double got = auc(c.scores, c.labels);
    if (std::isnan(c.auc)) {
      EXPECT_TRUE(std::isnan(got));
    } else {
      EXPECT_DOUBLE_EQ(got, c.auc);
    }
  }
}

TEST(RouterMetricsTest, LogLossClampsCertainMistakesAndIsNanWithoutRows) {
  EXPECT_NEAR(log_loss({0.5, 0.5}, {0, 1}), std::log(2.0), 1e-12);
  EXPECT_TRUE(std::isfinite(log_loss({0.0, 1.0}, {1, 0})));  // clamped, not infinite
  EXPECT_TRUE(std::isnan(log_loss({}, {})));
}

TEST(RouterMetricsTest, ThresholdSendsTheWantedShareToTheCloud) {
  const std::vector<double> scores = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  EXPECT_DOUBLE_EQ(threshold_for_share(scores, 0.3), 0.8);  // 0.8, 0.9, 1.0 reach it
  EXPECT_DOUBLE_EQ(threshold_for_share(scores, 0.0), 1.0);  // at least one row
  EXPECT_DOUBLE_EQ(threshold_for_share(scores, 1.0), 0.1);
  EXPECT_TRUE(std::isnan(threshold_for_share({}, 0.5)));
}

// Routing points: quality is the routed answers' mean; the random router interpolates.
TEST(RouterMetricsTest, RoutingPointsMeasureTheThresholdOnTheRows) {
  std::vector<TrainingExample> examples(4);
  const double edge[] = {1.0, 1.0, 0.0, 0.0};
  const double cloud[] = {1.0, 1.0, 1.0, 1.0};
  std::vector<ScoredExample> rows;
  for (size_t i = 0; i < examples.size(); ++i) {
    examples[i].edge = edge[i];
    examples[i].cloud = cloud[i];
    examples[i].label = cloud[i] > edge[i] ? 1 : 0;
    rows.push_back({0.25 * static_cast<double>(i), &examples[i]});
  }
  EvaluationReport report;
  fill_routing(rows, {{0.5, 0.5}}, report);
  EXPECT_DOUBLE_EQ(report.all_edge_quality, 0.5);
  EXPECT_DOUBLE_EQ(report.all_cloud_quality, 1.0);
  EXPECT_DOUBLE_EQ(report.metrics.auc, 1.0);
  ASSERT_EQ(report.points.size(), 1u);
  const RoutingPoint& point = report.points[0];
  EXPECT_DOUBLE_EQ(point.cloud_share, 0.5);    // scores 0.5 and 0.75
  EXPECT_DOUBLE_EQ(point.quality, 1.0);        // exactly the rows the edge got wrong
  EXPECT_DOUBLE_EQ(point.gap_recovered, 1.0);  // all of the gap
  EXPECT_DOUBLE_EQ(point.random_quality, 0.75);
}

}  // namespace
}  // namespace tandem::eval
