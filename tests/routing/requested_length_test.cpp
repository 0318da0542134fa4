// The answer size a request names (requested_length.h), against the cases in
// tests/routing/cases/requested_length.jsonl, plus the feature's scale and hostile input.

#include "routing/requested_length.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/json_lines.h"
#include "routing/prompt_features.h"

namespace tandem::routing {
namespace {

TEST(RequestedLengthTest, TheCasesFile) {
  const auto cases =
      test::read_json_lines(std::string(TANDEM_ROUTING_CASES) + "/requested_length.jsonl");
  for (const auto& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    EXPECT_NEAR(requested_answer_words(text), c.at("words").get<double>(), 1e-6)
        << c.at("name") << ": " << text;
  }
  EXPECT_GE(cases.size(), 40u);
}

TEST(RequestedLengthTest, ShortAnswersAddNothingAndLongOnesGrowSlowly) {
  EXPECT_EQ(requested_length_value("Write a haiku about autumn"), 0.0);
  EXPECT_EQ(requested_length_value("Write 150 words on bees."), 0.0);
  EXPECT_NEAR(requested_length_value("Write 1,200 words on bees."), std::log1p(1.0), 1e-9);
  EXPECT_GT(requested_length_value("Write 20,000 words on bees."),
            requested_length_value("Write 2,000 words on bees."));
}

TEST(RequestedLengthTest, TheFeatureReadsTheSize) {
  PromptView prompt;
  prompt.last_user = "Write a 3,200-word story.";
  const PromptFeatures features = extract_features(prompt);
  const size_t index = feature_index("requested_length");
  ASSERT_LT(index, kFeatureCount);
  EXPECT_NEAR(features.values[index], std::log1p(3.0), 1e-6);
}

TEST(RequestedLengthTest, FeaturesRecordedBeforeItReadAsZero) {
  const size_t index = feature_index("requested_length");
  ASSERT_EQ(index, kFeatureCountBeforeRequestedLength);
  std::vector<float> older(kFeatureCountBeforeRequestedLength, 1.0f);
  PromptFeatures features;
  ASSERT_TRUE(read_recorded_features(older, features));
  EXPECT_EQ(features.values[index], 0.0f);
  EXPECT_EQ(features.values[0], 1.0f);
  std::vector<float> current(kFeatureCount, 2.0f);
  ASSERT_TRUE(read_recorded_features(current, features));
  EXPECT_EQ(features.values[index], 2.0f);
  EXPECT_FALSE(
      read_recorded_features(std::vector<float>(kFeatureCountBeforeRequestedLength - 1), features));
  EXPECT_FALSE(read_recorded_features(std::vector<float>(kFeatureCount + 1), features));
}

TEST(RequestedLengthTest, HostileNumbersStayFinite) {
  for (const std::string& text :
       {std::string(5000, '9') + " words", std::string("1,000,000,000,000 pages"),
        std::string("9999999.99999k words"), std::string("万万万万万万万万万万字"),
        std::string("九九九九九九九九九九九九九九九九九九千字"), std::string("\xe4\xb8", 2),
        std::string("1."), std::string("1,"), std::string("a a a a thousand"), std::string("一"),
        std::string("第"), std::string("\xff\xfe words")}) {
    const double words = requested_answer_words(text);
    EXPECT_TRUE(std::isfinite(words)) << text;
    EXPECT_GE(words, 0.0) << text;
    EXPECT_TRUE(std::isfinite(requested_length_value(text))) << text;
  }
}

}  // namespace
}  // namespace tandem::routing
