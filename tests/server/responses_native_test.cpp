// The Responses API with a native upstream (responses_native.h), without a network: which
// requests may name built-in tools, the body such an upstream receives (previous_response_id
// expanded, store false), the conversation kept from its output items, and its Response
// relabelled as Tandem's.

#include "server/responses_native.h"

#include <string>

#include <gtest/gtest.h>

namespace tandem::server {
namespace {

using nlohmann::json;

const ServedNatively kNative = [](const std::string& model) { return model == "gpt"; };

ResponsesRequest parsed(const json& body, const ServedNatively& native = kNative) {
  auto result = parse_responses_request(body.dump(), true, native);
  if (auto* error = std::get_if<ApiError>(&result)) {
    ADD_FAILURE() << error->message;
    return {};
  }
  return std::get<ResponsesRequest>(result);
}

TEST(ResponsesNativeTest, BuiltInToolsAreAcceptedOnlyForAModelServedNatively) {
  const json body = {{"model", "gpt"},
                     {"input", "news?"},
                     {"tools", json::parse(R"([{"type": "function", "name": "f"},
                                               {"type": "web_search"}])")}};
  const ResponsesRequest request = parsed(body);
  EXPECT_EQ(request.native_only, std::vector<std::string>{"tools[1].type"});
  // The chat translation keeps the function tool only.
  const json chat = json::parse(chat_completions_body(request));
  ASSERT_EQ(chat["tools"].size(), 1U);
  EXPECT_EQ(chat["tools"][0]["function"]["name"], "f");
  EXPECT_EQ(request.echo["tools"], body["tools"]);

  json other = body;
  other["model"] = "tandem";
  for (const ServedNatively& native : {kNative, ServedNatively()}) {
    auto refused = parse_responses_request(other.dump(), true, native);
    const auto* error = std::get_if<ApiError>(&refused);
    ASSERT_NE(error, nullptr);
    EXPECT_EQ(error->param, "tools[1].type");
  }
}

TEST(ResponsesNativeTest, ABuiltInToolsItemIsKeptForANativeModelAndLeftOutOfChat) {
  const json item = {{"type", "web_search_call"}, {"id", "ws_1"}, {"status", "completed"}};
  const ResponsesRequest request = parsed(
      {{"model", "gpt"}, {"input", json::array({item, {{"role", "user"}, {"content", "more"}}})}});
  ASSERT_EQ(request.input.size(), 2U);
  EXPECT_EQ(request.input[0], item);
  const json chat = json::parse(chat_completions_body(request));
  EXPECT_EQ(chat["messages"], json::parse(R"([{"role": "user", "content": "more"}])"));
  auto refused = parse_responses_request(
      json{{"model", "gpt"}, {"input", json::array({{{"type", "item_reference"}, {"id", "x"}}})}}
          .dump(),
      true, kNative);
  ASSERT_TRUE(std::holds_alternative<ApiError>(refused));
  EXPECT_EQ(std::get<ApiError>(refused).param, "input[0].type");
}

TEST(ResponsesNativeTest, TheBodyIsTheClientsWithTheConversationExpandedAndStoreFalse) {
  ResponsesRequest request = parsed({{"model", "gpt"},
                                     {"input", "And then?"},
                                     {"previous_response_id", "resp_1"},
                                     {"store", true},
                                     {"include", json::array({"web_search_call.action.sources"})}});
  request.history = json::parse(R"([
    {"role": "user", "content": [{"type": "text", "text": "Hi"},
                                 {"type": "image_url", "image_url": {"url": "https://x/a.png"}}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "42"},
    {"role": "assistant", "content": "It is 42."}])");
  const json body = native_responses_body(request);
  EXPECT_FALSE(body.contains("previous_response_id"));
  EXPECT_EQ(body["store"], false);
  EXPECT_EQ(body["include"], request.body["include"]);
  EXPECT_EQ(body["input"], json::parse(R"([
    {"type": "message", "role": "user", "content": [
      {"type": "input_text", "text": "Hi"},
      {"type": "input_image", "image_url": "https://x/a.png"}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "42"},
    {"type": "message", "role": "assistant", "content": "It is 42."},
    {"role": "user", "content": "And then?"}])"));

  // Without a previous response, the input is the client's own.
  const ResponsesRequest first = parsed({{"model", "gpt"}, {"input", "Hi"}, {"store", false}});
  const json plain = native_responses_body(first);
  EXPECT_EQ(plain["input"], "Hi");
  EXPECT_EQ(plain["store"], false);
}

TEST(ResponsesNativeTest, TheConversationKeepsMessagesCallsAndBuiltInItemsButNoReasoning) {
  const ResponsesRequest request = parsed({{"model", "gpt"}, {"input", "news?"}});
  const json output = json::parse(R"([
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"type": "message", "id": "msg_1", "role": "assistant", "content": [
      {"type": "output_text", "text": "Rain.", "annotations": [{"type": "url_citation"}]}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"},
    {"type": "message", "role": "assistant", "content": 42}])");
  const json conversation = conversation_after_native(request, output);
  EXPECT_EQ(conversation, json::parse(R"([
    {"role": "user", "content": "news?"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"role": "assistant", "content": "Rain."},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}])"));
}

TEST(ResponsesNativeTest, TheUpstreamsResponseIsRelabelledAsTandemsWithUsableCounts) {
  const ResponsesRequest request =
      parsed({{"model", "gpt"}, {"input", "x"}, {"previous_response_id", "resp_prev"}});
  const json upstream = json::parse(R"({"id": "resp_up", "model": "gpt-4.1-2025", "store": false,
    "previous_response_id": null, "output": [], "usage": {"input_tokens": null,
    "output_tokens": 5, "total_tokens": 1.5, "input_tokens_details": {"cached_tokens": -3}}})");
  DecisionRecord record;
  record.tier = "cloud";
  const json r = relabelled_response({"resp_tandem", 7, "gpt"}, request, upstream, &record);
  EXPECT_EQ(r["id"], "resp_tandem");
  EXPECT_EQ(r["model"], "gpt");
  EXPECT_EQ(r["store"], true);
  EXPECT_EQ(r["previous_response_id"], "resp_prev");
  EXPECT_EQ(r["tandem"]["tier"], "cloud");
  EXPECT_EQ(r["usage"], json::parse(R"({"input_tokens": 0, "output_tokens": 5,
    "total_tokens": 0, "input_tokens_details": {"cached_tokens": 0}})"));
  EXPECT_FALSE(
      relabelled_response({"resp_t", 7, "gpt"}, request, upstream, nullptr).contains("tandem"));
}

}  // namespace
}  // namespace tandem::server
