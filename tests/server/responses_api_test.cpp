// The Responses API's translation (responses_api.h): requests into chat completions bodies
// (cases in tests/server/cases/responses_requests.jsonl), answers into Response objects, the
// event sequence of a stream, and the conversation a stored response keeps.

#include "server/responses_api.h"

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::server {
namespace {

using nlohmann::json;

std::vector<json> request_cases() {
  std::ifstream in(std::string(TANDEM_SERVER_CASES) + "/responses_requests.jsonl");
  std::vector<json> cases;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') {
      cases.push_back(json::parse(line));
    }
  }
  return cases;
}

ResponsesRequest parsed(const json& body) {
  auto result = parse_responses_request(body.dump(), true);
  if (auto* error = std::get_if<ApiError>(&result)) {
    ADD_FAILURE() << error->message;
    return {};
  }
  return std::get<ResponsesRequest>(result);
}

TEST(ResponsesApiTest, EveryRequestCaseBecomesItsChatBodyOrNamesTheFieldAtFault) {
  const std::vector<json> cases = request_cases();
  ASSERT_GE(cases.size(), 20u);
  for (const json& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    auto result = parse_responses_request(c["body"].dump(), true);
    if (c.contains("error_param")) {
      const auto* error = std::get_if<ApiError>(&result);
      ASSERT_NE(error, nullptr) << "expected a 400 naming " << c["error_param"];
      EXPECT_EQ(http_status(*error), 400);
      EXPECT_EQ(error->param, c["error_param"].get<std::string>()) << error->message;
      continue;
    }
    const auto* request = std::get_if<ResponsesRequest>(&result);
    ASSERT_NE(request, nullptr) << std::get<ApiError>(result).message;
    EXPECT_EQ(json::parse(chat_completions_body(*request)), c["chat"]);
  }
}

TEST(ResponsesApiTest, StoreDefaultsToTheConfigurationAndTheEchoHasOpenAIsDefaults) {
  auto kept = parse_responses_request(R"({"model":"m","input":"x"})", false);
  const auto& request = std::get<ResponsesRequest>(kept);
  EXPECT_FALSE(request.store);
  const json object =
      response_object({"resp_1", 7, "m"}, request, json::array(), nullptr, nullptr, nullptr);
  EXPECT_EQ(object["status"], "in_progress");
  EXPECT_EQ(object["store"], false);
  EXPECT_EQ(object["tool_choice"], "auto");
  EXPECT_EQ(object["text"], json::parse(R"({"format":{"type":"text"}})"));
  EXPECT_EQ(object["parallel_tool_calls"], true);
  EXPECT_TRUE(object["previous_response_id"].is_null());
  EXPECT_FALSE(object.contains("tandem"));
}

TEST(ResponsesApiTest, AWholeAnswerIsAMessageThenItsCallsWithUsageAndStatus) {
  const ResponsesRequest request = parsed({{"model", "m"}, {"input", "x"}});
  WholeAnswer answer;
  answer.text = "Looking it up.";
  answer.tool_calls = {{0, "call_a", "get_weather", R"({"city":"Paris"})"}};
  const ResponseHead head{"resp_abc", 7, "m"};
  Outcome outcome{"tool_calls", {12, 5, 4}};
  DecisionRecord record;
  record.tier = "edge";
  const json object =
      response_object(head, request, output_items(head, answer), &outcome, &record, nullptr);
  EXPECT_EQ(object["status"], "completed");
  ASSERT_EQ(object["output"].size(), 2u);
  EXPECT_EQ(object["output"][0]["id"], "msg_abc");
  EXPECT_EQ(object["output"][0]["content"][0]["text"], "Looking it up.");
  EXPECT_EQ(object["output"][1]["type"], "function_call");
  EXPECT_EQ(object["output"][1]["id"], "fc_abc_0");
  EXPECT_EQ(object["output"][1]["call_id"], "call_a");
  EXPECT_EQ(object["usage"]["input_tokens"], 12);
  EXPECT_EQ(object["usage"]["input_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(object["usage"]["total_tokens"], 17);
  EXPECT_EQ(object["tandem"]["tier"], "edge");

  Outcome cut{"length", {}};
  const json incomplete =
      response_object(head, request, output_items(head, answer), &cut, nullptr, nullptr);
  EXPECT_EQ(incomplete["status"], "incomplete");
  EXPECT_EQ(incomplete["incomplete_details"]["reason"], "max_output_tokens");

  ApiError error = invalid_request("no");
  const json failed = response_object(head, request, json::array(), nullptr, nullptr, &error);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["error"]["message"], "no");
}

std::vector<std::string> types_of(const std::vector<json>& events) {
  std::vector<std::string> types;
  for (const json& e : events) {
    types.push_back(e["type"]);
  }
  return types;
}

TEST(ResponsesApiTest, AStreamOfTextThenACallIsTheResponsesEventSequence) {
  const ResponsesRequest request = parsed({{"model", "m"}, {"input", "x"}});
  ResponsesEvents events({"resp_abc", 7, "m"}, request);
  DecisionRecord record;
  record.tier = "edge";
  std::vector<json> all = events.begin(record);
  auto add = [&](std::vector<json> more) { all.insert(all.end(), more.begin(), more.end()); };
  add(events.piece({"Hel", nullptr, "", {}}));
  add(events.piece({"lo", nullptr, "", {}}));
  add(events.piece({"", nullptr, "", {{0, "call_a", "f", ""}}}));
  add(events.piece({"", nullptr, "", {{0, "", "", R"({"a":)"}}}));
  add(events.piece({"", nullptr, "", {{0, "", "", "1}"}}}));
  add(events.finish({"tool_calls", {3, 4, 0}}, record));
  EXPECT_EQ(types_of(all),
            (std::vector<std::string>{
                "response.created", "response.in_progress", "response.output_item.added",
                "response.content_part.added", "response.output_text.delta",
                "response.output_text.delta", "response.output_item.added",
                "response.function_call_arguments.delta", "response.function_call_arguments.delta",
                "response.output_text.done", "response.content_part.done",
                "response.output_item.done", "response.function_call_arguments.done",
                "response.output_item.done", "response.completed"}));
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i]["sequence_number"], static_cast<int64_t>(i));
  }
  EXPECT_EQ(all[6]["item"]["name"], "f");
  EXPECT_EQ(all[6]["item"]["arguments"], "");
  EXPECT_EQ(all[12]["arguments"], R"({"a":1})");
  const json& final = all.back()["response"];
  ASSERT_EQ(final["output"].size(), 2u);
  EXPECT_EQ(final["output"][0]["content"][0]["text"], "Hello");
  EXPECT_EQ(final["output"][1]["arguments"], R"({"a":1})");
  EXPECT_EQ(final["output"][1]["id"], all[6]["item"]["id"]);
}

TEST(ResponsesApiTest, ARevisionWithdrawsTheTextAndAnEmptyAnswerIsStillAMessage) {
  const ResponsesRequest request = parsed({{"model", "m"}, {"input", "x"}});
  ResponsesEvents events({"resp_abc", 7, "m"}, request);
  DecisionRecord record;
  events.begin(record);
  events.piece({"draft", nullptr, "", {}});
  const auto revised = events.revise({{"id", "rev_1"}});
  ASSERT_EQ(revised.size(), 1u);
  EXPECT_EQ(revised[0]["type"], "tandem.revision");
  events.piece({"final", nullptr, "", {}});
  const auto done = events.finish({"stop", {}}, record);
  EXPECT_EQ(done.back()["response"]["output"][0]["content"][0]["text"], "final");

  ResponsesEvents empty({"resp_e", 7, "m"}, request);
  empty.begin(record);
  const auto finished = empty.finish({"stop", {}}, record);
  EXPECT_EQ(finished.back()["response"]["output"].size(), 1u);
  EXPECT_EQ(finished.back()["response"]["output"][0]["content"][0]["text"], "");
}

TEST(ResponsesApiTest, TheKeptConversationIsHistoryInputAndAnswerWithoutInstructions) {
  ResponsesRequest request =
      parsed({{"model", "m"}, {"instructions", "Be brief."}, {"input", "second"}});
  request.history = json::parse(R"([{"role":"user","content":"first"},
                                    {"role":"assistant","content":"one"}])");
  WholeAnswer answer;
  answer.tool_calls = {{0, "call_a", "f", "{}"}};
  const json conversation = conversation_after(request, answer);
  ASSERT_EQ(conversation.size(), 4u);
  EXPECT_EQ(conversation[2], json::parse(R"({"role":"user","content":"second"})"));
  EXPECT_TRUE(conversation[3]["content"].is_null());
  EXPECT_EQ(conversation[3]["tool_calls"][0]["id"], "call_a");
  const json body = json::parse(chat_completions_body(request));
  EXPECT_EQ(body["messages"][0]["content"], "Be brief.");
  EXPECT_EQ(body["messages"].size(), 4u);
}

}  // namespace
}  // namespace tandem::server
