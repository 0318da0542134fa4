// The left-out report's noise measurement: each slice's difference from the baselines with a
// paired-bootstrap interval. Models here are fixed (the fitter ignores its rows) and score one
// feature, so what each slice's interval must be is known: zero-width where the model orders
// rows exactly as length does, above 0 for an oracle, below 0 for an inverted one.

#include "eval/left_out.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace tandem::eval {
namespace {

// Two feature slots the fixed models read: the prompt's length and the cloud's gain.
const size_t kLogChars = routing::feature_index("log_chars");
const size_t kLogWords = routing::feature_index("log_words");

// Three tasks of one source, 150 rows each. The cloud is better on a random third of the rows
// and the edge on a random tenth, unrelated to the prompt's length; the feature kLogWords
// holds the cloud's gain, what an oracle would route by.
std::vector<TrainingExample> examples(const std::vector<std::string>& tasks) {
  std::vector<TrainingExample> out;
  for (const std::string& task : tasks) {
    std::mt19937 random(static_cast<unsigned>(std::hash<std::string>{}(task)&0xffff));
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int i = 0; i < 150; ++i) {
      TrainingExample row;
      row.source = "test/source";
      row.task = task;
      row.chars = 10 + std::floor(990 * unit(random));
      const double draw = unit(random);
      row.edge = draw < 0.33 ? 0.0 : (draw < 0.43 ? 1.0 : unit(random) < 0.5 ? 1.0 : 0.0);
      row.cloud = draw < 0.33 ? 1.0 : (draw < 0.43 ? 0.0 : row.edge);
      row.label = row.cloud > row.edge ? 1 : 0;
      row.features.values[kLogChars] = static_cast<float>(std::log(row.chars));
      row.features.values[kLogWords] = static_cast<float>(row.cloud - row.edge);
      out.push_back(row);
    }
  }
  return out;
}

// A model scoring one feature with the given sign (scales wide enough that nothing clips).
ModelFitter scoring(size_t feature, double sign) {
  return [feature, sign](const ExampleRefs&) {
    std::array<double, routing::kFeatureCount> means{};
    std::array<double, routing::kFeatureCount> stds{};
    std::array<double, routing::kFeatureCount> weights{};
    stds.fill(10.0);
    weights[feature] = sign;
    return routing::ComplexityModel::from_parameters(means, stds, weights, 0.0, {});
  };
}

const std::vector<std::string> kTasks = {"alpha", "beta", "gamma"};

TEST(LeftOutNoise, AModelOrderingRowsAsLengthDoesDiffersFromItByExactlyNothing) {
  const auto rows = examples(kTasks);
  auto report = leave_one_out(rows, "task", scoring(kLogChars, 1.0));
  measure_noise(report, rows, 50, 7);
  ASSERT_EQ(report.counted, 3u);
  for (const auto& slice : report.slices) {
    ASSERT_TRUE(slice.versus_length.has_value()) << slice.task;
    // Paired: every resample scores the same rows by the same order for both.
    EXPECT_EQ(slice.versus_length->estimate, 0.0);
    EXPECT_EQ(slice.versus_length->low, 0.0);
    EXPECT_EQ(slice.versus_length->high, 0.0);
  }
  EXPECT_EQ(report.versus_length.below, 0u);
  EXPECT_EQ(report.versus_length.above, 0u);
  ASSERT_TRUE(report.versus_length.mean.has_value());
  EXPECT_EQ(report.versus_length.mean->high, 0.0);
}

TEST(LeftOutNoise, AnOracleIsAboveTheBaselinesBeyondChanceAndAnInvertedOneBelow) {
  const auto rows = examples(kTasks);
  auto oracle = leave_one_out(rows, "task", scoring(kLogWords, 1.0));
  measure_noise(oracle, rows, 100, 1);
  EXPECT_EQ(oracle.versus_length.above, 3u);
  EXPECT_EQ(oracle.versus_best.above, 3u);
  EXPECT_EQ(oracle.versus_best.below, 0u);
  ASSERT_TRUE(oracle.versus_best.mean.has_value());
  EXPECT_GT(oracle.versus_best.mean->low, 0.0);
  for (const auto& slice : oracle.slices) {
    ASSERT_TRUE(slice.versus_best.has_value());
    EXPECT_LE(slice.versus_best->low, slice.versus_best->estimate);
    EXPECT_GE(slice.versus_best->high, slice.versus_best->estimate);
  }
  // The source's mixed traffic gets its interval too.
  ASSERT_EQ(oracle.mixed.size(), 1u);
  ASSERT_TRUE(oracle.mixed[0].versus_best.has_value());
  EXPECT_GT(oracle.mixed[0].versus_best->low, 0.0);

  auto inverted = leave_one_out(rows, "task", scoring(kLogWords, -1.0));
  measure_noise(inverted, rows, 100, 1);
  EXPECT_EQ(inverted.versus_best.below, 3u);
  EXPECT_EQ(inverted.versus_best.above, 0u);
  EXPECT_LT(inverted.versus_best.mean->high, 0.0);
}

TEST(LeftOutNoise, ASlicesIntervalDependsOnItsRowsAndTheSeedOnly) {
  const auto all = examples(kTasks);
  auto report = leave_one_out(all, "task", scoring(kLogWords, 0.5));
  measure_noise(report, all, 60, 3);
  auto again = leave_one_out(all, "task", scoring(kLogWords, 0.5));
  measure_noise(again, all, 60, 3);
  // Without the first task, the others' rows, scores and draws are the same.
  const auto fewer = examples({"beta", "gamma"});
  auto without_alpha = leave_one_out(fewer, "task", scoring(kLogWords, 0.5));
  measure_noise(without_alpha, fewer, 60, 3);
  ASSERT_EQ(report.slices.size(), 3u);
  ASSERT_EQ(without_alpha.slices.size(), 2u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(report.slices[i].versus_best->low, again.slices[i].versus_best->low);
    EXPECT_EQ(report.slices[i].versus_best->high, again.slices[i].versus_best->high);
  }
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(report.slices[i + 1].task, without_alpha.slices[i].task);
    EXPECT_EQ(report.slices[i + 1].versus_best->low, without_alpha.slices[i].versus_best->low);
    EXPECT_EQ(report.slices[i + 1].versus_best->high, without_alpha.slices[i].versus_best->high);
  }
}

TEST(LeftOutNoise, NothingIsMeasuredUntilAsked) {
  const auto rows = examples(kTasks);
  auto report = leave_one_out(rows, "task", scoring(kLogWords, 1.0));
  EXPECT_EQ(report.noise_draws, 0u);
  EXPECT_FALSE(report.versus_best.mean.has_value());
  for (const auto& slice : report.slices) {
    EXPECT_FALSE(slice.versus_best.has_value());
  }
  // Examples other than those the report scored are not resampled.
  measure_noise(report, examples({"alpha"}), 50, 0);
  EXPECT_EQ(report.noise_draws, 0u);
}

}  // namespace
}  // namespace tandem::eval
