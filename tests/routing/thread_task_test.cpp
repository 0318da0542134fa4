// What a conversation is about, for the message that continues it (thread_task.h): the cases in
// tests/routing/cases/thread_task.jsonl, the reliance on the thread, how far back it reaches, the
// feature through extract_features, and hostile input.

#include "routing/thread_task.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/json_lines.h"
#include "routing/prompt_features.h"
#include "routing/task_model.h"

namespace tandem::routing {
namespace {

const TaskModel& task() {
  return TaskModel::builtin();
}

constexpr std::string_view kHardRequest =
    "Prove that there are infinitely many primes, then show that the sum of their reciprocals "
    "diverges.";

TEST(ThreadTaskTest, TheCasesFile) {
  const auto cases =
      test::read_json_lines(std::string(TANDEM_ROUTING_CASES) + "/thread_task.jsonl");
  for (const auto& c : cases) {
    const auto texts = c.at("earlier").get<std::vector<std::string>>();
    const std::vector<std::string_view> earlier(texts.begin(), texts.end());
    const std::string last = c.at("last").get<std::string>();
    const double value = thread_task_value(earlier, last, task());
    if (c.at("expect") == "raised") {
      EXPECT_GT(value, 0.0) << c.at("name");
    } else {
      EXPECT_EQ(value, 0.0) << c.at("name");
    }
  }
  EXPECT_GE(cases.size(), 15u);
}

TEST(ThreadTaskTest, TheLongerTheMessageTheLessItLeansOnTheThread) {
  EXPECT_DOUBLE_EQ(thread_reliance(""), 1.0);
  EXPECT_DOUBLE_EQ(thread_reliance(std::string(256, 'a')), 0.5);
  EXPECT_LT(thread_reliance(std::string(2000, 'a')), 0.12);
  // From the limit on the message stands alone, and the thread is not read.
  EXPECT_GT(thread_reliance(std::string(kSelfContainedLimit - 1, 'a')), 0.09);
  EXPECT_EQ(thread_reliance(std::string(kSelfContainedLimit, 'a')), 0.0);
  EXPECT_EQ(thread_reliance("Unrelated, but what is 2 + 2?"), 0.0);
  const std::vector<std::string_view> earlier = {kHardRequest};
  EXPECT_GT(thread_task_value(earlier, "Why?", task()),
            thread_task_value(earlier, "Why? " + std::string(400, 'x'), task()));
}

TEST(ThreadTaskTest, TheMostRecentRequestCountsMostAndOnlyTheLastFewAreRead) {
  const std::vector<std::string_view> recent = {"thanks", kHardRequest};
  const std::vector<std::string_view> further = {kHardRequest, "thanks"};
  const double near_value = thread_task_value(recent, "Why?", task());
  ASSERT_GT(near_value, 0.0);
  EXPECT_NEAR(thread_task_value(further, "Why?", task()), near_value * kThreadDecay, 1e-9);
  std::vector<std::string_view> long_ago = {kHardRequest};
  long_ago.insert(long_ago.end(), kThreadTurns, "thanks");
  EXPECT_EQ(thread_task_value(long_ago, "Why?", task()), 0.0);
}

// An earlier message is read at its ends, where its request is: a long paste after "Prove…"
// leaves the request read, and the same request buried in the middle is material.
TEST(ThreadTaskTest, AnEarlierMessageIsReadAtItsEnds) {
  const std::string paste(3 * kThreadWindowBytes, 'x');
  const std::string opening = std::string(kHardRequest) + "\n" + paste;
  const std::string buried = paste + "\n" + std::string(kHardRequest) + "\n" + paste;
  const std::vector<std::string_view> read = {opening};
  const std::vector<std::string_view> unread = {buried};
  EXPECT_GT(thread_task_value(read, "Why?", task()), thread_task_value(unread, "Why?", task()));
}

TEST(ThreadTaskTest, TheFeatureReadsTheThreadAndOnePromptHasNone) {
  const size_t index = feature_index("thread_task");
  ASSERT_LT(index, kFeatureCount);
  const std::vector<std::string_view> earlier = {kHardRequest};
  PromptView view;
  view.last_user = "Why?";
  EXPECT_EQ(extract_features(view).values[index], 0.0f);
  view.earlier_user = earlier;
  view.turns = 3;
  EXPECT_GT(extract_features(view).values[index], 0.0f);
}

TEST(ThreadTaskTest, TraceRowsFromBeforeTheLastFeaturesAreRead) {
  PromptFeatures features;
  for (const size_t count : {kFeatureCount, kFeatureCount - 1, kFeatureCount - 2}) {
    const std::vector<float> values(count, 1.0f);
    ASSERT_TRUE(read_recorded_features(values, features)) << count;
    EXPECT_EQ(features.values[kFeatureCount - 1], count == kFeatureCount ? 1.0f : 0.0f);
  }
  EXPECT_FALSE(read_recorded_features(std::vector<float>(kFeatureCount - 3, 1.0f), features));
  EXPECT_FALSE(read_recorded_features(std::vector<float>(kFeatureCount + 1, 1.0f), features));
}

TEST(ThreadTaskTest, AnyBytesGiveAFiniteValue) {
  std::string noise;
  for (int i = 0; i < 3000; ++i) {
    noise.push_back(static_cast<char>((i * 131 + 7) % 256));
  }
  const std::vector<std::string_view> earlier = {noise, "", std::string_view(noise).substr(0, 47)};
  for (const std::string_view last :
       {std::string_view(noise), std::string_view(""), std::string_view(noise).substr(0, 48)}) {
    const double value = thread_task_value(earlier, last, task());
    EXPECT_TRUE(std::isfinite(value));
    EXPECT_GE(value, 0.0);
    EXPECT_LE(value, kTaskLogitLimit);
    changes_subject(last);
  }
}

}  // namespace
}  // namespace tandem::routing
