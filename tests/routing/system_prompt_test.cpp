// An app's task stated in its system prompt (prompt_features.h, kSystemHeadBytes): the cases in
// tests/routing/cases/system_prompt.jsonl through the shipped classifier, the head's bound, and
// hostile input.

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "../support/json_lines.h"
#include "routing/complexity_model.h"
#include "routing/prompt_features.h"

namespace tandem::routing {
namespace {

double score(std::string_view system, std::string_view user) {
  PromptView view;
  view.system = system;
  view.last_user = user;
  return ComplexityModel::builtin().score(extract_features(view));
}

PromptFeatures features_of(std::string_view system, std::string_view user) {
  PromptView view;
  view.system = system;
  view.last_user = user;
  return extract_features(view);
}

// A task makes the same material easier or harder; a system prompt that states none leaves
// every feature of the request as it is (its length is a feature of its own).
TEST(SystemPromptTest, TheCasesFile) {
  const auto cases =
      test::read_json_lines(std::string(TANDEM_ROUTING_CASES) + "/system_prompt.jsonl");
  const size_t system_chars = feature_index("log_system_chars");
  for (const auto& c : cases) {
    const std::string system = c.at("system");
    const std::string user = c.at("user");
    const std::string expect = c.at("expect");
    if (expect == "easier") {
      EXPECT_LT(score(system, user), score("", user)) << c.at("name");
    } else if (expect == "harder") {
      EXPECT_GT(score(system, user), score("", user)) << c.at("name");
    } else {
      const PromptFeatures with = features_of(system, user);
      const PromptFeatures without = features_of("", user);
      for (size_t i = 0; i < kFeatureCount; ++i) {
        if (i != system_chars) {
          EXPECT_EQ(with.values[i], without.values[i]) << c.at("name") << ": " << i;
        }
      }
    }
  }
  EXPECT_GE(cases.size(), 11u);
}

// An agent's long system prompt is read in its head only: what follows costs nothing and
// changes nothing.
TEST(SystemPromptTest, OnlyTheHeadIsRead) {
  const std::string task = "Translate the user's text into French. Output only the translation.\n";
  const std::string rules(3 * kSystemHeadBytes, 'x');
  const std::string user = "The Borrower shall repay the Term Loan in quarterly instalments.";
  const PromptFeatures short_rules = features_of(task + rules, user);
  const PromptFeatures long_rules = features_of(task + rules + rules, user);
  for (size_t i = 0; i < kFeatureCount; ++i) {
    if (i != feature_index("log_system_chars")) {
      EXPECT_EQ(short_rules.values[i], long_rules.values[i]) << i;
    }
  }
}

TEST(SystemPromptTest, AnyBytesGiveFiniteFeatures) {
  std::string noise;
  for (int i = 0; i < 3000; ++i) {
    noise.push_back(static_cast<char>((i * 131 + 7) % 256));
  }
  // A head cut inside a multi-byte character, and one of exactly the head's size.
  const std::string just_over(kSystemHeadBytes + 1, 'a');
  const std::string cut = std::string(kSystemHeadBytes - 1, 'a') + "翻译";
  for (const std::string& system : {noise, just_over, cut, std::string("Translate: ") + noise}) {
    for (const float v : features_of(system, noise).values) {
      EXPECT_TRUE(std::isfinite(v));
    }
  }
}

}  // namespace
}  // namespace tandem::routing
