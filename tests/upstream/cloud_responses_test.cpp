// What the gateway reads of a native Responses upstream's answer (parse_responses_event,
// parse_responses_answer): the final Response's output and usage, text deltas, and the replies
// that leave a client without an answer, which fail as malformed.

#include <string>

#include <gtest/gtest.h>

#include "upstream/upstream.h"

namespace tandem::upstream {
namespace {

using nlohmann::json;

json response(const json& output, const json& usage) {
  return {{"id", "resp_up"},  {"object", "response"}, {"status", "completed"}, {"model", "gpt-x"},
          {"output", output}, {"usage", usage},       {"error", nullptr}};
}

json message(const std::string& text) {
  return {{"type", "message"},
          {"id", "msg_1"},
          {"role", "assistant"},
          {"content", json::array({{{"type", "output_text"}, {"text", text}}})}};
}

const json kSearch = {{"type", "web_search_call"}, {"id", "ws_1"}, {"status", "completed"}};

TEST(CloudResponsesTest, AWholeResponseGivesItsTextUsageAndModel) {
  const json usage = {
      {"input_tokens", 12}, {"output_tokens", 5}, {"input_tokens_details", {{"cached_tokens", 4}}}};
  auto parsed =
      parse_responses_answer(response(json::array({kSearch, message("Hi.")}), usage).dump());
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed->final);
  EXPECT_EQ(parsed->type, "response");
  EXPECT_EQ(parsed->text, "Hi.");
  EXPECT_EQ(parsed->model, "gpt-x");
  ASSERT_TRUE(parsed->usage);
  EXPECT_EQ(parsed->usage->prompt_tokens, 12);
  EXPECT_EQ(parsed->usage->completion_tokens, 5);
  EXPECT_EQ(parsed->usage->cached_prompt_tokens, 4);
  EXPECT_EQ(parsed->data["output"][0], kSearch);  // relayed as sent
}

TEST(CloudResponsesTest, UsageCountsOfTheWrongTypeReadAsZeroAndAreNamed) {
  const json usage = {{"input_tokens", nullptr}, {"output_tokens", "5"}, {"total_tokens", 1.5}};
  auto parsed = parse_responses_answer(response(json::array({message("x")}), usage).dump());
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_TRUE(parsed->usage);
  EXPECT_EQ(parsed->usage->prompt_tokens, 0);
  EXPECT_EQ(parsed->usage->completion_tokens, 0);
  EXPECT_EQ(parsed->usage_problem, "usage.input_tokens is null; usage.output_tokens is a string");
  auto no_usage = parse_responses_answer(response(json::array(), nullptr).dump());
  ASSERT_TRUE(no_usage) << no_usage.error().message;
  EXPECT_FALSE(no_usage->usage);
  auto text_usage = parse_responses_answer(response(json::array(), "lots").dump());
  ASSERT_TRUE(text_usage) << text_usage.error().message;
  EXPECT_EQ(text_usage->usage_problem, "usage is a string");
}

TEST(CloudResponsesTest, AWholeAnswerWithoutAnswerIsMalformed) {
  struct Case {
    std::string body;
    std::string says;
  };
  json no_output = response(json::array(), nullptr);
  no_output.erase("output");
  json failed = response(json::array(), nullptr);
  failed["status"] = "failed";
  json errored = response(json::array(), nullptr);
  errored["error"] = {{"message", "quota"}};
  const Case cases[] = {
      {"{not json", "not a JSON object"},
      {"[1]", "not a JSON object"},
      {no_output.dump(), "it has no output"},
      {response("none", nullptr).dump(), "output is a string"},
      {response(json::array({42}), nullptr).dump(), "output[0] is a number, not an object"},
      {response(json::array({{{"id", "x"}}}), nullptr).dump(), "output[0] has no type"},
      {failed.dump(), "failed"},
      {errored.dump(), "quota"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    auto parsed = parse_responses_answer(c.body);
    ASSERT_FALSE(parsed);
    EXPECT_NE(parsed.error().message.find(c.says), std::string::npos) << parsed.error().message;
  }
}

TEST(CloudResponsesTest, StreamEventsAreKeptAsSentWithTheirTextAndTheEnd) {
  auto created = parse_responses_event(json{
      {"type", "response.created"},
      {"sequence_number", 0},
      {"response", response({}, {})}}.dump());
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_FALSE(created->has_output());
  EXPECT_FALSE(created->final);

  auto delta = parse_responses_event(
      R"({"type":"response.output_text.delta","item_id":"msg_1","delta":"Hel","sequence_number":3})");
  ASSERT_TRUE(delta) << delta.error().message;
  EXPECT_TRUE(delta->has_output());
  EXPECT_EQ(delta->text, "Hel");
  EXPECT_EQ(delta->data["item_id"], "msg_1");

  auto unknown = parse_responses_event(R"({"type":"response.web_search_call.searching"})");
  ASSERT_TRUE(unknown) << unknown.error().message;
  EXPECT_TRUE(unknown->has_output());

  const json done = {{"type", "response.completed"},
                     {"response", response(json::array({message("Hello")}),
                                           {{"input_tokens", 3}, {"output_tokens", 1}})}};
  auto completed = parse_responses_event(done.dump());
  ASSERT_TRUE(completed) << completed.error().message;
  EXPECT_TRUE(completed->final);
  EXPECT_EQ(completed->text, "Hello");
  EXPECT_EQ(completed->usage->prompt_tokens, 3);
}

TEST(CloudResponsesTest, StreamEventsThatEndTheAnswerBadlyFail) {
  const std::string cases[] = {
      "{not json",
      R"({"sequence_number":1})",
      R"({"type":7})",
      R"({"type":"error","code":"server_error","message":"overloaded"})",
      R"({"type":"error","error":{"message":"overloaded"}})",
      R"({"type":"response.failed","response":{"error":{"message":"overloaded"}}})",
      R"({"type":"response.completed"})",
      R"({"type":"response.completed","response":{"output":"none"}})",
      R"({"type":"response.incomplete","response":{"output":[null]}})",
  };
  for (const std::string& data : cases) {
    SCOPED_TRACE(data);
    EXPECT_FALSE(parse_responses_event(data));
  }
  auto error = parse_responses_event(R"({"type":"error","message":"overloaded"})");
  EXPECT_NE(error.error().message.find("overloaded"), std::string::npos);
}

}  // namespace
}  // namespace tandem::upstream
