// An app's task stated in its system prompt (prompt_features.h, kSystemHeadBytes): the cases in
// tests/routing/cases/system_prompt.jsonl through the shipped classifier, the head's bound, and
// hostile input.

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "../support/json_lines.h"
#include "routing/complexity_model.h"
#include "routing/prompt_features.h"
#include "routing/system_task.h"
#include "routing/task_model.h"

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
  EXPECT_GE(cases.size(), 17u);
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

// Whether a head states a task is kept per thread for the heads seen last, and the kept answer
// belongs to the task model that gave it: two models that read the same head differently each
// get their own, also when one is loaded where the other was (same address, new weights).
TEST(SystemPromptTest, AKeptAnswerBelongsToItsTaskModel) {
  const std::string head = "Respond to the message below.";  // no task cue: the model decides
  const std::string user = "The shipment left the warehouse on Monday.";
  const auto model_with = [](float weight) {
    return TaskModel::from_weights(std::vector<float>(kNgramBuckets, weight), 0.0, 1,
                                   nlohmann::json::object());
  };
  const auto chars_read = [&](std::string_view system, const TaskModel& model) {
    PromptView view;
    view.system = system;
    view.last_user = user;
    return extract_features(view, model).values[feature_index("log_chars")];
  };
  std::optional<TaskModel> model;
  for (int round = 0; round < 3; ++round) {
    model.emplace(model_with(0.0f));  // every head reads as its bias: no task stated
    EXPECT_EQ(chars_read(head, *model), chars_read("", *model)) << round;
    model.emplace(model_with(3.0f));  // every n-gram leans hard: the head states a task
    EXPECT_GT(chars_read(head, *model), chars_read("", *model)) << round;
  }
}

// A persona's clause ends at its sentence's end, a colon, a line break or a Chinese comma; what
// follows it is where an app states its task.
TEST(SystemPromptTest, WhatFollowsAPersona) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"You are Acme's assistant.\nSummarize the text.", "Summarize the text."},
      {"  you are a translator: translate into French.", "translate into French."},
      {"You\u2019re Ava. Be kind.", "Be kind."},
      {"Act as a chemist! List the hazards.", "List the hazards."},
      {"I want you to act as an editor. Fix the grammar.", "Fix the grammar."},
      {"You are GPT-4.1, an assistant.\nAnswer briefly.", "Answer briefly."},
      {"你是顺丰速运的客服助手。请把消息翻译成英文。", "请把消息翻译成英文。"},
      {"你是一名翻译，把用户的话翻译成英文", "把用户的话翻译成英文"},
      {"您是律师：分析案情", "分析案情"},
      {"You are a helpful assistant.", ""},
      {"Summarize the text. You are terse.", ""},
      {"Your answers are short.", ""},
      {"", ""},
  };
  for (const auto& [text, rest] : cases) {
    EXPECT_EQ(after_persona(text), rest) << text;
  }
}

// The part read is the task after the persona, not the persona: the features equal those of
// the task stated alone before the same message.
TEST(SystemPromptTest, TheTaskAfterAPersonaIsReadWithoutIt) {
  const std::string user = "The shipment left the warehouse on Monday and arrives on Friday.";
  const PromptFeatures after = features_of(
      "You are Harbor Line's assistant.\nSummarize the "
      "message in one sentence.\nBe polite.",
      user);
  const PromptFeatures alone =
      features_of("Summarize the message in one sentence.\nBe polite.", user);
  const size_t system_chars = feature_index("log_system_chars");
  for (size_t i = 0; i < kFeatureCount; ++i) {
    if (i != system_chars) {
      EXPECT_EQ(after.values[i], alone.values[i]) << feature_names()[i];
    }
  }
  EXPECT_EQ(system_task("You are a helpful assistant.", TaskModel::builtin()), "");
}

}  // namespace
}  // namespace tandem::routing
