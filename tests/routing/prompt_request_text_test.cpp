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

bool identifier_at(const std::string& text, const std::string& word) {
  const size_t at = text.find(word);
  return part_of_identifier(text, at, at + word.size());
}

TEST(PartOfIdentifier, AToolsNameAndParametersAreNotTheRequest) {
  EXPECT_TRUE(identifier_at("zendesk.search_tickets", "search"));
  EXPECT_TRUE(identifier_at("meetings.get_transcript(id=1)", "transcript"));
  EXPECT_TRUE(identifier_at("pagerduty.list_incidents", "list"));
  EXPECT_TRUE(identifier_at("(tag=x, sort=created_asc)", "sort"));
  EXPECT_TRUE(identifier_at("summarize(text)", "summarize"));
  EXPECT_TRUE(identifier_at(R"(get(id="7", title="Orders DB migration sync"))", "migration"));
  EXPECT_TRUE(identifier_at("run(query='analyze churn')", "analyze"));
}

TEST(PartOfIdentifier, WordsOfProseAreNot) {
  EXPECT_FALSE(identifier_at("List the errors.", "List"));
  EXPECT_FALSE(identifier_at("Summarize the above. Then list the risks.", "Summarize"));
  EXPECT_FALSE(identifier_at("Summarize the above. Then list the risks.", "list"));
  EXPECT_FALSE(identifier_at("Design a plan (two pages).", "Design"));
  EXPECT_FALSE(identifier_at(R"(Translate "good morning" into French.)", "Translate"));
  // A quote that no '=' opens is not a parameter's value.
  EXPECT_FALSE(identifier_at(R"(He said "please analyze it")", "analyze"));
  // A value closed before the word: the word is past it.
  EXPECT_FALSE(identifier_at(R"(get(id="7") then analyze it)", "analyze"));
  // A value opened on an earlier line does not reach this one.
  EXPECT_FALSE(identifier_at("x=\"a\nAnalyze it", "Analyze"));
}

TEST(PartOfIdentifier, PositionsOutsideTheTextAreNot) {
  EXPECT_FALSE(part_of_identifier("list", 3, 1));
  EXPECT_FALSE(part_of_identifier("list", 0, 99));
}

TEST(TaskNegatedBefore, PositionsOutsideTheTextAreNotNegated) {
  EXPECT_FALSE(task_negated_before("no", 5, 2));
  EXPECT_FALSE(task_negated_before("no", 0, 99));
  EXPECT_FALSE(task_negated_before("", 0, 0));
}

}  // namespace
}  // namespace tandem::routing
