#include "routing/prompt_request_text.h"

#include <string>

#include <gtest/gtest.h>

namespace tandem::routing {
namespace {

TEST(WeighedPromptLength, OneLineIsAllRequest) {
  EXPECT_EQ(weighed_prompt_length(""), 0.0);
  EXPECT_EQ(weighed_prompt_length("Design a plan."), 14.0);
  EXPECT_EQ(weighed_prompt_length("\n\n  hi  \n\n"), 10.0);
}

TEST(WeighedPromptLength, TheLinesBetweenTheEndsCountAQuarter) {
  const std::string middle(400, 'x');
  // "Context:" (8) and "Q?" (2) whole; the 400 bytes and the two line breaks at a quarter.
  EXPECT_DOUBLE_EQ(weighed_prompt_length("Context:\n" + middle + "\nQ?"), 10 + 0.25 * 402);
  // Two lines: only their line break is between them.
  EXPECT_DOUBLE_EQ(weighed_prompt_length("a\nb"), 2 + 0.25);
}

TEST(TaskNegatedBefore, ReadsTheClauseBeforeTheCue) {
  const std::string text = "List the lines. Do not explain or analyze them.";
  const size_t clause = text.find("Do");
  EXPECT_TRUE(task_negated_before(text, clause, text.find("explain")));
  EXPECT_TRUE(task_negated_before(text, clause, text.find("analyze")));  // three words back
  EXPECT_FALSE(task_negated_before(text, 0, text.find("List")));
  // A negation in an earlier clause does not reach the cue.
  EXPECT_FALSE(task_negated_before(text, text.find("analyze"), text.find("analyze")));
  const std::string zh = "把错误行挑出来，不要对错误做任何解释或分析。";
  EXPECT_TRUE(task_negated_before(zh, zh.find("不要"), zh.find("分析")));
}

TEST(TaskNegatedBefore, PositionsOutsideTheTextAreNotNegated) {
  EXPECT_FALSE(task_negated_before("no", 5, 2));
  EXPECT_FALSE(task_negated_before("no", 0, 99));
  EXPECT_FALSE(task_negated_before("", 0, 0));
}

}  // namespace
}  // namespace tandem::routing
