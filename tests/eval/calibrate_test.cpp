// Calibration on synthetic traffic whose truth is known: the edge is right with probability
// sigmoid(2 + 2c) for its confidence c, the cloud with probability 0.9.

#include "eval/calibrate.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "../support/recording_progress.h"
#include "routing/policy.h"

namespace tandem::eval {
namespace {

std::vector<Sample> synthetic(size_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> confidence(-3.0, 0.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<Sample> samples;
  for (size_t i = 0; i < n; ++i) {
    Sample s;
    s.id = "q" + std::to_string(i);
    s.hash = eval::row_hash(s.id, 0);
    // Two kinds with different cloud quality, so that per-kind thresholds can matter.
    s.kind = i % 2 ? routing::QueryKind::kMath : routing::QueryKind::kFactoid;
    const double c = confidence(random);
    s.confidence[kEdgeTier] = ConfidenceSignals{c, c, 0, 0};
    s.score[kEdgeTier] = unit(random) < 1 / (1 + std::exp(-(2 + 2 * c))) ? 1 : 0;
    s.score[kCloudTier] = unit(random) < (i % 2 ? 0.95 : 0.8) ? 1 : 0;
    s.cost = {0.0, 0.0, 1.0};
    samples.push_back(std::move(s));
  }
  return samples;
}

TEST(Calibrate, TargetQualityHoldsOnRowsItDidNotFitOn) {
  const auto samples = synthetic(6000, 1);
  CalibrateOptions options;
  options.target_quality = 0.95;
  auto result = calibrate(samples, options);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_GT(result->fit_rows, 3800u);
  EXPECT_GT(result->check_rows, 1400u);
  EXPECT_NEAR(result->expected_quality_vs_cloud.estimate, 0.95, 0.005);
  EXPECT_LE(result->expected_quality_vs_cloud.low, result->expected_quality_vs_cloud.estimate);
  EXPECT_GE(result->expected_quality_vs_cloud.high, result->expected_quality_vs_cloud.estimate);
  EXPECT_NEAR(result->check.quality_vs_cloud, 0.95, 0.02);
  EXPECT_GT(result->check.cloud_share, 0.05);
  EXPECT_LT(result->check.cloud_share, 0.95);
  // The learned weights recover the slope of the truth (2 per unit of logprob, with the
  // log-doubt term absorbing some of it).
  EXPECT_GT(result->calibration.pooled.mean_logprob, 0.5);
}

TEST(Calibrate, LeavesEachTaskOutAndAppliesTheRestsCalibrationToIt) {
  auto samples = synthetic(3000, 2);
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i].task = i % 3 == 0 ? "alpha" : (i % 3 == 1 ? "beta" : "gamma");
  }
  CalibrateOptions options;
  options.target_quality = 0.95;
  auto checks = check_left_out_tasks(samples, options);
  ASSERT_TRUE(checks) << checks.error().message;
  ASSERT_EQ(checks->size(), 3u);
  size_t rows = 0;
  for (const auto& check : checks.value()) {
    rows += check.realized.rows;
    EXPECT_EQ(check.target, 0.95);
    // The three tasks are drawn alike: what holds on two holds on the third, within noise.
    EXPECT_NEAR(check.realized.quality_vs_cloud, 0.95, 0.03) << check.task;
    // Beside it, what the target costs with hindsight: the oracle never needs more cloud calls
    // than the policy's own threshold tuned on these rows.
    ASSERT_TRUE(check.hindsight.tuned.has_value()) << check.task;
    ASSERT_TRUE(check.hindsight.oracle.has_value()) << check.task;
    EXPECT_LE(*check.hindsight.oracle, *check.hindsight.tuned) << check.task;
  }
  EXPECT_EQ(rows, samples.size());
  // One task cannot be left out.
  for (auto& sample : samples) {
    sample.task = "alpha";
  }
  auto single = check_left_out_tasks(samples, options);
  ASSERT_FALSE(single);
  EXPECT_NE(single.error().message.find("at least two tasks"), std::string::npos);
}

TEST(Calibrate, ReportsItsStepsAndOneStepPerLeftOutTask) {
  auto samples = synthetic(600, 3);
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i].task = i % 2 == 0 ? "alpha" : "beta";
  }
  CalibrateOptions options;
  options.target_quality = 0.95;
  testing_support::RecordingProgress progress;
  ASSERT_TRUE(calibrate(samples, options, progress));
  ASSERT_TRUE(check_left_out_tasks(samples, options, progress));
  EXPECT_EQ(progress.labels(),
            (std::vector<std::string>{"calibrating", "calibrating without each task"}));
  EXPECT_EQ(progress.phases()[0].total, 4u);  // per kind and pooled, the final fit, the bootstrap
  EXPECT_EQ(progress.phases()[1].total, 2u);
  EXPECT_TRUE(progress.every_phase_completes());
}

TEST(Calibrate, TargetCloudShare) {
  const auto samples = synthetic(4000, 2);
  CalibrateOptions options;
  options.target_cloud_share = 0.3;
  auto result = calibrate(samples, options);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_NEAR(result->expected_cloud_share.estimate, 0.3, 0.01);
  EXPECT_NEAR(result->check.cloud_share, 0.3, 0.05);
}

TEST(Calibrate, ConfigEditsInstallExactlyWhatWasMeasured) {
  const auto samples = synthetic(3000, 3);
  CalibrateOptions options;
  options.target_quality = 0.9;
  options.per_kind = "on";
  auto result = calibrate(samples, options);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(result->per_kind);
  auto text = config::apply_edits("", config_edits(result.value()), "new.yaml");
  ASSERT_TRUE(text) << text.error().message;
  auto parsed = config::parse_config(text.value(), "new.yaml");
  ASSERT_TRUE(parsed) << parsed.error().message << "\n" << text.value();
  // The server, reading the file, applies the same cascade the check measured.
  std::vector<const Sample*> all;
  for (const auto& s : samples) {
    all.push_back(&s);
  }
  const RealizedPoint from_result = apply_cascade(result->cascade, all);
  const RealizedPoint from_file = apply_cascade(parsed->routing.cascade, all);
  EXPECT_NEAR(from_file.cloud_share, from_result.cloud_share, 0.002);
  EXPECT_NEAR(from_file.quality, from_result.quality, 0.002);
  EXPECT_EQ(parsed->routing.cascade.kinds.size(), std::size(config::kQueryKinds));
  const auto math = routing::cascade_settings(parsed->routing.cascade, routing::QueryKind::kMath);
  const auto factoid =
      routing::cascade_settings(parsed->routing.cascade, routing::QueryKind::kFactoid);
  // The cloud is better on math (0.95 vs 0.8): math escalates more readily.
  EXPECT_GT(math.threshold, factoid.threshold);
}

TEST(Calibrate, RejectsBadOptions) {
  const auto samples = synthetic(200, 4);
  CalibrateOptions none;
  EXPECT_FALSE(calibrate(samples, none));
  CalibrateOptions both;
  both.target_quality = 0.9;
  both.target_cloud_share = 0.3;
  EXPECT_FALSE(calibrate(samples, both));
  CalibrateOptions bad_quality;
  bad_quality.target_quality = 1.5;
  auto r = calibrate(samples, bad_quality);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("--target-quality"), std::string::npos);
  CalibrateOptions bad_kind;
  bad_kind.target_quality = 0.9;
  bad_kind.per_kind = "sometimes";
  EXPECT_FALSE(calibrate(samples, bad_kind));
  CalibrateOptions few;
  few.target_quality = 0.9;
  auto tiny = calibrate(synthetic(10, 5), few);
  ASSERT_FALSE(tiny);
  EXPECT_NE(tiny.error().message.find("too few rows"), std::string::npos);
}

}  // namespace
}  // namespace tandem::eval
