// Common sense as an acceptance check for new router weights: pair_ordering.h's floor and its
// use by `train_router`, on the golden pairs (never trained on; here they only judge).

#include "eval/pair_ordering.h"

#include <gtest/gtest.h>

#include "eval/router_training.h"

namespace tandem::eval {
namespace {

using routing::ComplexityModel;

constexpr const char* kSampleTraces = TANDEM_SOURCE_DIR "/tests/data/routing/sample-traces.jsonl";
constexpr const char* kGoldenPairs = TANDEM_SOURCE_DIR "/tests/routing/cases/golden_pairs.jsonl";

std::vector<PromptPair> golden_pairs() {
  auto pairs = load_prompt_pairs({kGoldenPairs});
  EXPECT_TRUE(pairs.ok()) << (pairs.ok() ? "" : pairs.error().message);
  return pairs.ok() ? std::move(pairs).value() : std::vector<PromptPair>{};
}

// Weights that score every prompt the same order nothing: hard is never above easy.
ComplexityModel flat_model() {
  const ComplexityModel& shipped = ComplexityModel::builtin();
  return ComplexityModel::from_parameters(shipped.means(), shipped.stds(), {}, 0.0,
                                          nlohmann::json::object());
}

TEST(CommonSense, TheShippedWeightsKeepItOnTheGoldenPairs) {
  const auto check = check_common_sense(golden_pairs(), ComplexityModel::builtin(), nullptr,
                                        routing::TaskModel::builtin());
  EXPECT_TRUE(check.kept);
  ASSERT_EQ(check.model.size(), 2u);  // one row per language of the one file
  for (const auto& row : check.model) {
    EXPECT_EQ(row.pairs, 54u) << row.lang;
    EXPECT_GE(row.ordered, 49u) << row.lang;
  }
  EXPECT_TRUE(check.incumbent.empty());
}

TEST(CommonSense, WeightsThatOrderNothingLoseIt) {
  const auto check =
      check_common_sense(golden_pairs(), flat_model(), nullptr, routing::TaskModel::builtin());
  EXPECT_FALSE(check.kept);
  for (const auto& row : check.model) {
    EXPECT_EQ(row.ordered, 0u) << row.lang;
    EXPECT_EQ(row.misordered.size(), row.pairs) << row.lang;
  }
}

// Below the floor is kept where the weights in service are no better: a deployment whose own
// pairs are hard for every model is not locked out of retraining.
TEST(CommonSense, BelowTheFloorIsKeptWhenTheIncumbentIsNoBetter) {
  const ComplexityModel flat = flat_model();
  const auto check = check_common_sense(golden_pairs(), flat, &flat, routing::TaskModel::builtin());
  EXPECT_TRUE(check.kept);
  ASSERT_EQ(check.incumbent.size(), check.model.size());
}

TrainingOptions options_with_pairs() {
  TrainingOptions options;
  options.data_files = {kSampleTraces};
  options.pairs = {{"llama3.1-8b", "llama3.1-405b"}};
  options.common_sense = golden_pairs();
  return options;
}

// The issue this guards against: fitted freely to one model pair's benchmark rows, the weights
// learn that pair's quirks and order plainly easy and hard prompts worse than a coin.
TEST(CommonSense, TrainingRefusesAFreeFitThatLosesIt) {
  auto options = options_with_pairs();
  options.prior = "none";
  options.l2 = 1.0;
  auto report = train_router(options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_TRUE(report->common_sense.has_value());
  EXPECT_FALSE(report->common_sense->kept);
  EXPECT_FALSE(report->accepted);
  // Compared with the shipped weights, which keep it.
  ASSERT_EQ(report->common_sense->incumbent.size(), 2u);
  EXPECT_GE(report->common_sense->incumbent[0].ordered, 49u);
}

TEST(CommonSense, TrainingFromThePriorKeepsItAndIsAccepted) {
  auto report = train_router(options_with_pairs());
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_TRUE(report->common_sense.has_value());
  EXPECT_TRUE(report->common_sense->kept);
  EXPECT_TRUE(report->accepted);
}

TEST(CommonSense, NotCheckedWithoutPairs) {
  TrainingOptions options = options_with_pairs();
  options.common_sense.clear();
  auto report = train_router(options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_FALSE(report->common_sense.has_value());
}

}  // namespace
}  // namespace tandem::eval
