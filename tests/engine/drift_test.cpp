// Quantization drift on the real shipped model: its Q8_0 and Q4_0, derived in the test through
// the quantize API, measured against the F32 original.

#include "engine/drift.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "../support/recording_progress.h"
#include "engine/quantize.h"
#include "test_files.h"

namespace tandem::engine {
namespace {

namespace fs = std::filesystem;
using test::model_path;

const std::vector<DriftPrompt> kPrompts = {
    {"Once upon a time", "test:1"},
    {"Lily and Ben went to the park", "test:2"},
    {"The little dog was sad because", "test:3"},
    {"Tom had a big red ball. One day,", "test:4"},
    {"Mom said to Sue, \"Be careful!\"", "test:5"},
    {"The sun was shining and the birds", "test:6"},
};

class DriftTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto dir = fs::path(::testing::TempDir()) / "tandem_drift_models";
    fs::create_directories(dir);
    for (const std::string type : {"Q8_0", "Q4_0"}) {
      QuantizeOptions options;
      options.input_path = model_path();
      options.output_path = (dir / ("stories260K-" + type + ".gguf")).string();
      options.type = type;
      options.threads = 1;
      auto written = quantize_model(options);
      ASSERT_TRUE(written.ok()) << written.error().message;
      (type == "Q8_0" ? q8_path_ : q4_path_) = options.output_path;
    }
  }

  static DriftOptions options_for(const std::string& candidate) {
    DriftOptions options;
    options.reference_path = model_path();
    options.candidate_path = candidate;
    options.continuation_tokens = 24;
    options.threads = 1;
    return options;
  }

  static DriftReport measure(const DriftOptions& options,
                             const std::vector<DriftPrompt>& prompts = kPrompts) {
    auto report = measure_drift(options, prompts);
    EXPECT_TRUE(report.ok()) << report.error().message;
    return report.ok() ? std::move(report).value() : DriftReport{};
  }

  static std::string q8_path_;
  static std::string q4_path_;
};

std::string DriftTest::q8_path_;
std::string DriftTest::q4_path_;

TEST_F(DriftTest, AnIdenticalModelHasNoDriftAtAll) {
  const auto report = measure(options_for(model_path()));
  const auto& s = report.summary;
  EXPECT_EQ(s.prompts, kPrompts.size());
  EXPECT_LT(s.mean_kl, 1e-9);
  EXPECT_EQ(s.max_kl, 0.0);  // the same batches through the same weights: bit-identical logits
  EXPECT_EQ(s.top1_agreement, 1.0);
  EXPECT_DOUBLE_EQ(s.perplexity_ratio, 1.0);
  EXPECT_EQ(s.greedy_exact_match, 1.0);
  EXPECT_EQ(s.greedy_prefix_agreement, 1.0);
  EXPECT_FALSE(report.drifted());
  for (const auto& p : report.prompts) {
    EXPECT_EQ(p.reference_text, p.candidate_text);
    EXPECT_FALSE(p.reference_text.empty()) << p.source;
  }
  EXPECT_EQ(report.reference.sha256, report.candidate.sha256);
  // The reference's greedy continuation is what `tandem run --temp 0` writes, leading
  // punctuation and spaces included.
  EXPECT_EQ(report.prompts[0].reference_text.rfind(", there was a little girl named Lily", 0), 0U)
      << report.prompts[0].reference_text;
}

TEST_F(DriftTest, CountsEveryScoredToken) {
  const auto report = measure(options_for(q8_path_));
  const auto& s = report.summary;
  // Each position but the last of prompt + continuation predicts a known next token.
  EXPECT_EQ(s.scored_tokens, s.prompt_tokens + s.continuation_tokens - s.prompts);
  for (const auto& p : report.prompts) {
    EXPECT_GE(p.prompt_tokens, 2) << p.source;  // BOS and at least one word
    EXPECT_GE(p.continuation_tokens, 1);
    EXPECT_LE(p.continuation_tokens, 24);
    EXPECT_EQ(p.scored_tokens(), p.prompt_tokens + p.continuation_tokens - 1);
    EXPECT_LE(p.greedy_common_prefix, p.greedy_reference_tokens);
  }
  EXPECT_EQ(report.prompts[0].source, "test:1");
  EXPECT_EQ(report.candidate.quantization, "Q8_0");
  EXPECT_EQ(report.reference.quantization, "all F32");
}

TEST_F(DriftTest, ReportsLoadingEachModelAndEachPrompt) {
  testing_support::RecordingProgress progress;
  ASSERT_TRUE(measure_drift(options_for(q8_path_), kPrompts, progress).ok());
  EXPECT_EQ(progress.labels(),
            (std::vector<std::string>{"hashing the reference model", "loading the reference model",
                                      "hashing the candidate model", "loading the candidate model",
                                      "measuring drift on prompts"}));
  EXPECT_TRUE(progress.every_phase_completes());  // llama.cpp's loading ends at 100%
  EXPECT_EQ(progress.phases()[4].total, kPrompts.size());
  EXPECT_EQ(progress.phases()[4].updates.size(), kPrompts.size());
}

TEST_F(DriftTest, Q8_0DriftsLittleAndStaysWithinTheDefaultLimits) {
  const auto report = measure(options_for(q8_path_));
  const auto& s = report.summary;
  EXPECT_GT(s.mean_kl, 0.0);  // a different model after all
  EXPECT_LT(s.mean_kl, 0.01);
  EXPECT_GE(s.top1_agreement, 0.95);
  EXPECT_LT(s.perplexity_ratio, 1.02);
  EXPECT_GE(s.greedy_prefix_agreement, DriftLimits{}.min_greedy_prefix_agreement);
  EXPECT_TRUE(report.violations.empty()) << report.violations.front().message;
  EXPECT_LE(s.p50_kl, s.p95_kl);
  EXPECT_LE(s.p95_kl, s.max_kl);
}

TEST_F(DriftTest, Q4_0DriftsFurtherThanQ8_0) {
  const auto q8 = measure(options_for(q8_path_)).summary;
  const auto q4 = measure(options_for(q4_path_)).summary;
  EXPECT_GT(q4.mean_kl, 2 * q8.mean_kl);
  EXPECT_GT(q4.p95_kl, q8.p95_kl);
  EXPECT_GT(q4.perplexity_ratio, q8.perplexity_ratio);
  EXPECT_GT(q4.perplexity_ratio, 1.0);
  EXPECT_LE(q4.top1_agreement, q8.top1_agreement);
}

TEST_F(DriftTest, IsDeterministic) {
  const auto first = measure(options_for(q4_path_));
  const auto second = measure(options_for(q4_path_));
  EXPECT_EQ(first.summary.mean_kl, second.summary.mean_kl);
  EXPECT_EQ(first.summary.perplexity_ratio, second.summary.perplexity_ratio);
  ASSERT_EQ(first.prompts.size(), second.prompts.size());
  for (size_t i = 0; i < first.prompts.size(); ++i) {
    EXPECT_EQ(first.prompts[i].token_kl, second.prompts[i].token_kl);
    EXPECT_EQ(first.prompts[i].candidate_text, second.prompts[i].candidate_text);
  }
}

TEST_F(DriftTest, TightLimitsGiveADriftedVerdictNamingEachViolation) {
  auto options = options_for(q4_path_);
  options.limits.max_mean_kl = 1e-6;
  options.limits.max_perplexity_ratio = 1.0;
  const auto report = measure(options);
  ASSERT_TRUE(report.drifted());
  std::vector<std::string> limits;
  for (const auto& v : report.violations) {
    limits.push_back(v.limit);
    EXPECT_FALSE(v.message.empty());
  }
  EXPECT_NE(std::find(limits.begin(), limits.end(), "max_mean_kl"), limits.end());
  EXPECT_NE(std::find(limits.begin(), limits.end(), "max_perplexity_ratio"), limits.end());
  EXPECT_NE(report.violations.front().message.find("mean KL"), std::string::npos);
}

TEST_F(DriftTest, RefusesModelsWhoseVocabulariesDiffer) {
  // The shipped model with one token's text changed ("▁Lily" -> "▁Xyzq"): a different tokenizer.
  std::string bytes = test::read_file(model_path());
  const size_t at = bytes.find("\xe2\x96\x81Lily");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at + 3, 4, "Xyzq");
  const auto other = test::write_temp_file("other-vocab.gguf", bytes);
  auto result = measure_drift(options_for(other), kPrompts);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find("vocabularies"), std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("Xyzq"), std::string::npos) << result.error().message;
}

TEST_F(DriftTest, ModelFileErrorsSayWhichModel) {
  auto missing = measure_drift(options_for("/nonexistent/candidate.gguf"), kPrompts);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("candidate"), std::string::npos);
  EXPECT_NE(missing.error().message.find("/nonexistent/candidate.gguf"), std::string::npos);

  const auto text = test::write_temp_file("model.gguf", "not a model\n");
  auto options = options_for(q8_path_);
  options.reference_path = text;
  auto not_gguf = measure_drift(options, kPrompts);
  ASSERT_FALSE(not_gguf.ok());
  EXPECT_EQ(not_gguf.error().code, ErrorCode::kInvalidModel);
  EXPECT_NE(not_gguf.error().message.find("reference"), std::string::npos)
      << not_gguf.error().message;
}

TEST_F(DriftTest, BadOptionsAreRejectedBeforeLoading) {
  auto options = options_for(q8_path_);
  options.continuation_tokens = 0;
  auto zero = measure_drift(options, kPrompts);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().code, ErrorCode::kInvalidArgument);

  options = options_for(q8_path_);
  options.limits.min_top1_agreement = 2.0;
  auto bad_limit = measure_drift(options, kPrompts);
  ASSERT_FALSE(bad_limit.ok());
  EXPECT_NE(bad_limit.error().message.find("min_top1_agreement"), std::string::npos);

  auto no_prompts = measure_drift(options_for(q8_path_), {});
  ASSERT_FALSE(no_prompts.ok());
  EXPECT_EQ(no_prompts.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(DriftTest, APromptBeyondTheTrainedContextNamesItsLine) {
  auto options = options_for(q8_path_);
  options.continuation_tokens = kMaxDriftContinuationTokens;  // stories260K was trained on 2048
  auto result = measure_drift(options, {{"Once upon a time", "prompts.txt:7"}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kContextOverflow);
  EXPECT_NE(result.error().message.find("prompts.txt:7"), std::string::npos)
      << result.error().message;
}

// --- The prompts file ---

TEST(DriftPromptsTest, ReadsOnePromptPerLineSkippingBlankLines) {
  const auto path =
      test::write_temp_file("prompts.txt", "Once upon a time\n\n  \r\nThe cat sat\r\nLast one");
  auto prompts = read_drift_prompts(path);
  ASSERT_TRUE(prompts.ok()) << prompts.error().message;
  ASSERT_EQ(prompts->size(), 3U);
  EXPECT_EQ((*prompts)[0].text, "Once upon a time");
  EXPECT_EQ((*prompts)[0].source, path + ":1");
  EXPECT_EQ((*prompts)[1].text, "The cat sat");
  EXPECT_EQ((*prompts)[1].source, path + ":4");
  EXPECT_EQ((*prompts)[2].text, "Last one");
}

TEST(DriftPromptsTest, ReadsJsonlWithAPromptField) {
  const auto path = test::write_temp_file(
      "prompts.jsonl",
      "{\"prompt\": \"Line one\\nline two\", \"id\": 1}\n\n{\"prompt\": \"Second\"}\n");
  auto prompts = read_drift_prompts(path);
  ASSERT_TRUE(prompts.ok()) << prompts.error().message;
  ASSERT_EQ(prompts->size(), 2U);
  EXPECT_EQ((*prompts)[0].text, "Line one\nline two");
  EXPECT_EQ((*prompts)[1].source, path + ":3");
}

TEST(DriftPromptsTest, BadJsonlLinesNameFileAndLine) {
  const auto broken =
      test::write_temp_file("broken.jsonl", "{\"prompt\": \"fine\"}\n{\"prompt\": \"unclosed\n");
  auto result = read_drift_prompts(broken);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find(broken + ":2"), std::string::npos)
      << result.error().message;

  const auto no_field = test::write_temp_file("nofield.jsonl", "{\"text\": \"hi\"}\n");
  auto missing = read_drift_prompts(no_field);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(no_field + ":1: expected a string field \"prompt\""),
            std::string::npos)
      << missing.error().message;

  const auto mixed = test::write_temp_file("mixed.jsonl", "{\"prompt\": \"a\"}\nplain text\n");
  auto mixed_result = read_drift_prompts(mixed);
  ASSERT_FALSE(mixed_result.ok());
  EXPECT_NE(mixed_result.error().message.find(mixed + ":2"), std::string::npos);
}

TEST(DriftPromptsTest, EmptyAndMissingFilesAreErrors) {
  const auto empty = test::write_temp_file("empty.txt", "\n  \n");
  auto none = read_drift_prompts(empty);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(none.error().message.find("no prompts"), std::string::npos);

  auto missing = read_drift_prompts("/nonexistent/prompts.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("/nonexistent/prompts.txt"), std::string::npos);
}

// --- The arithmetic ---

TEST(DriftMetricsTest, LogSoftmaxIsStableForLargeLogitsAndRejectsNaN) {
  const std::vector<float> huge = {1000.0F, 1001.0F, 999.0F};
  const auto s = log_softmax(huge);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->argmax, 1);
  double total = 0.0;
  for (int32_t i = 0; i < 3; ++i) {
    total += std::exp(s->logprob(huge, i));
  }
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_NEAR(s->logprob(huge, 1), -std::log(1.0 + std::exp(-1.0) + std::exp(-2.0)), 1e-12);

  const std::vector<float> broken = {0.0F, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_FALSE(log_softmax(broken).has_value());
  EXPECT_FALSE(log_softmax(std::vector<float>{}).has_value());
  const std::vector<float> ties = {2.0F, 5.0F, 5.0F};
  EXPECT_EQ(log_softmax(ties)->argmax, 1);  // the lowest index among equals
}

TEST(DriftMetricsTest, KlDivergenceMatchesTheClosedForm) {
  // p = (1/2, 1/2), q = (1/4, 3/4): KL = 1/2 ln 2 + 1/2 ln(2/3).
  const std::vector<float> p = {0.0F, 0.0F};
  const std::vector<float> q = {std::log(0.25F), std::log(0.75F)};
  const double expected = 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0);
  EXPECT_NEAR(kl_divergence(p, *log_softmax(p), q, *log_softmax(q)), expected, 1e-7);
  EXPECT_EQ(kl_divergence(p, *log_softmax(p), p, *log_softmax(p)), 0.0);

  // A token p rules out contributes nothing; one q rules out that p allows is infinite.
  const float never = -std::numeric_limits<float>::infinity();
  const std::vector<float> p_never = {0.0F, never};
  EXPECT_EQ(kl_divergence(p_never, *log_softmax(p_never), p_never, *log_softmax(p_never)), 0.0);
  EXPECT_TRUE(std::isinf(kl_divergence(p, *log_softmax(p), p_never, *log_softmax(p_never))));
}

TEST(DriftMetricsTest, PercentilesInterpolateBetweenRanks) {
  EXPECT_DOUBLE_EQ(percentile({4.0, 1.0, 3.0, 2.0}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4.0, 1.0, 3.0, 2.0}, 0.95), 3.85);
  EXPECT_DOUBLE_EQ(percentile({7.0}, 0.95), 7.0);
  EXPECT_DOUBLE_EQ(percentile({}, 0.5), 0.0);
}

TEST(DriftMetricsTest, GreedyAgreementComparesTheLongerOutput) {
  PromptDrift p;
  p.greedy_reference_tokens = 10;
  p.greedy_candidate_tokens = 4;  // stopped early
  p.greedy_common_prefix = 4;
  EXPECT_DOUBLE_EQ(p.greedy_prefix_agreement(), 0.4);
  EXPECT_FALSE(p.greedy_exact_match());
  p.greedy_candidate_tokens = 10;
  p.greedy_common_prefix = 10;
  EXPECT_TRUE(p.greedy_exact_match());
}

TEST(DriftMetricsTest, LimitsFlagEveryFigureOutsideAndNaN) {
  DriftSummary s;
  s.mean_kl = 0.2;
  s.top1_agreement = 0.5;
  s.perplexity_ratio = std::nan("");
  s.greedy_prefix_agreement = 0.9;
  const auto violations = check_limits(s, DriftLimits{});
  ASSERT_EQ(violations.size(), 3U);
  EXPECT_EQ(violations[0].limit, "max_mean_kl");
  EXPECT_EQ(violations[0].message, "mean KL 0.2 nats/token exceeds 0.05");
  EXPECT_EQ(violations[1].limit, "min_top1_agreement");
  EXPECT_EQ(violations[2].limit, "max_perplexity_ratio");

  DriftLimits bad;
  bad.max_mean_kl = -1.0;
  EXPECT_FALSE(validate(bad).ok());
  EXPECT_TRUE(validate(DriftLimits{}).ok());
}

}  // namespace
}  // namespace tandem::engine
