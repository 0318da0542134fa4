#include "server/openai_request.h"

#include <gtest/gtest.h>

namespace tandem::server {
namespace {

using upstream::ApiKind;

CompletionRequest parse_ok(const std::string& body, ApiKind kind = ApiKind::kChat) {
  auto parsed = parse_completion_request(body, kind, 256);
  if (auto* error = std::get_if<ApiError>(&parsed)) {
    ADD_FAILURE() << error->message;
    return {};
  }
  return std::get<CompletionRequest>(parsed);
}

ApiError parse_error(const std::string& body, ApiKind kind = ApiKind::kChat) {
  auto parsed = parse_completion_request(body, kind, 256);
  if (auto* error = std::get_if<ApiError>(&parsed)) {
    return *error;
  }
  ADD_FAILURE() << "accepted: " << body;
  return {};
}

TEST(OpenAiRequestTest, ChatWithEveryField) {
  auto r = parse_ok(R"({"model":"tandem","messages":[{"role":"system","content":"Be brief."},
    {"role":"user","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]}],
    "max_completion_tokens":12,"temperature":0.5,"top_p":0.9,"stop":["\n\n"],"seed":7,
    "stream":true,"stream_options":{"include_usage":true},"logprobs":true,"top_logprobs":3,
    "user":"u1","frequency_penalty":0.5,"presence_penalty":-1})");
  EXPECT_EQ(r.model, "tandem");
  ASSERT_EQ(r.messages.size(), 2U);
  EXPECT_EQ(r.messages[1].content, "Hi there");
  EXPECT_EQ(r.sampling.max_tokens, 12);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.5F);
  EXPECT_FLOAT_EQ(r.sampling.frequency_penalty, 0.5F);
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, -1.0F);
  EXPECT_EQ(r.sampling.stop, std::vector<std::string>{"\n\n"});
  EXPECT_EQ(r.sampling.seed, 7U);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.sampling.top_logprobs, 3);
  EXPECT_EQ(r.user, "u1");
  EXPECT_TRUE(r.cloud_only_fields.empty());
  EXPECT_FALSE(r.cloud_body.contains("stream_options"));
}

TEST(OpenAiRequestTest, DefaultsFollowOpenAi) {
  auto r = parse_ok(R"({"model":"m","messages":[{"role":"user","content":"x"}]})");
  EXPECT_FLOAT_EQ(r.sampling.temperature, 1.0F);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 1.0F);
  EXPECT_FLOAT_EQ(r.sampling.frequency_penalty, 0.0F);
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, 0.0F);
  EXPECT_EQ(r.sampling.max_tokens, 256);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.sampling.top_logprobs, 0);
}

TEST(OpenAiRequestTest, CompletionsPromptAndIntegerLogprobs) {
  auto r = parse_ok(R"({"model":"m","prompt":"Once","logprobs":2,"max_tokens":3})",
                    ApiKind::kCompletion);
  EXPECT_EQ(r.prompt, "Once");
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.sampling.top_logprobs, 2);
}

TEST(OpenAiRequestTest, CloudOnlyFieldsAreNoted) {
  auto r = parse_ok(R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url",
    "image_url":{"url":"x"}}]}],"functions":[{"name":"f"}]})");
  ASSERT_EQ(r.cloud_only_fields.size(), 2U);
}

const std::string kWeatherTool = R"({"type":"function","function":{"name":"get_weather",
  "description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":
  "string"}},"required":["city"]}}})";

TEST(OpenAiRequestTest, ToolsAndToolMessagesAreTheEdgesToo) {
  auto r = parse_ok(R"({"model":"m","messages":[{"role":"user","content":"Paris?"},
    {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
    "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
    {"role":"tool","tool_call_id":"call_1","content":"18C"}],"tools":[)" +
                    kWeatherTool + R"(],"tool_choice":"required","parallel_tool_calls":true})");
  EXPECT_TRUE(r.cloud_only_fields.empty());
  EXPECT_TRUE(r.structured());
  ASSERT_EQ(r.tools.size(), 1U);
  EXPECT_EQ(r.tools[0].name, "get_weather");
  EXPECT_EQ(r.tools[0].description, "Weather of a city");
  EXPECT_NE(r.tools[0].parameters.find("\"city\""), std::string::npos);
  EXPECT_EQ(r.tool_choice, engine::ToolChoice::kRequired);
  EXPECT_TRUE(r.parallel_tool_calls);
  ASSERT_EQ(r.messages.size(), 3U);
  ASSERT_EQ(r.messages[1].tool_calls.size(), 1U);
  EXPECT_EQ(r.messages[1].tool_calls[0].id, "call_1");
  EXPECT_EQ(r.messages[1].tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(r.messages[2].tool_call_id, "call_1");
}

// Found by fuzz_openai_body: an assistant's tool call without an id threw while parsing.
TEST(OpenAiRequestTest, AToolCallWithoutAnIdIsAccepted) {
  auto r = parse_ok(R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"type":
    "function","function":{"name":"f"}}]},{"role":"user","content":"x"}]})");
  ASSERT_EQ(r.messages[0].tool_calls.size(), 1U);
  EXPECT_EQ(r.messages[0].tool_calls[0].id, "");
  EXPECT_EQ(r.messages[0].tool_calls[0].arguments, "{}");
}

TEST(OpenAiRequestTest, ANamedToolChoiceKeepsOnlyThatToolAndRequiresIt) {
  auto r = parse_ok(
      R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":[)" + kWeatherTool +
      R"(,{"type":"function","function":{"name":"other"}}],"tool_choice":{"type":"function",
      "function":{"name":"get_weather"}}})");
  ASSERT_EQ(r.tools.size(), 1U);
  EXPECT_EQ(r.tools[0].name, "get_weather");
  EXPECT_EQ(r.tool_choice, engine::ToolChoice::kRequired);
}

TEST(OpenAiRequestTest, ResponseFormatsBecomeASchema) {
  const std::string chat = R"({"model":"m","messages":[{"role":"user","content":"x"}],)";
  EXPECT_FALSE(parse_ok(chat + R"("response_format":{"type":"text"}})").json_schema);
  EXPECT_EQ(parse_ok(chat + R"("response_format":{"type":"json_object"}})").json_schema,
            R"({"type":"object"})");
  auto r = parse_ok(chat + R"("response_format":{"type":"json_schema","json_schema":{"name":"p",
    "strict":true,"schema":{"type":"object","properties":{"a":{"type":"integer"}}}}}})");
  ASSERT_TRUE(r.json_schema);
  EXPECT_NE(r.json_schema->find("integer"), std::string::npos);
  EXPECT_TRUE(r.cloud_only_fields.empty());
}

TEST(OpenAiRequestTest, BadToolsAndFormatsNameTheField) {
  const std::string chat = R"({"model":"m","messages":[{"role":"user","content":"x"}],)";
  EXPECT_EQ(parse_error(chat + R"("tools":{}})").param, "tools");
  EXPECT_EQ(parse_error(chat + R"("tools":[{"type":"function"}]})").param, "tools[0]");
  EXPECT_EQ(parse_error(chat + R"("tools":[{"type":5,"function":{}}]})").param, "tools[0]");
  EXPECT_EQ(parse_error(chat + R"("tools":[{"type":"function","function":{"name":3}}]})").param,
            "tools[0].function.name");
  EXPECT_EQ(parse_error(chat + R"("tools":[)" + kWeatherTool + "," + kWeatherTool + "]}").param,
            "tools[1].function.name");
  EXPECT_EQ(parse_error(chat + R"("tools":[{"type":"function","function":{"name":"f",
    "parameters":[]}}]})")
                .param,
            "tools[0].function.parameters");
  EXPECT_EQ(parse_error(chat + R"("tool_choice":"sometimes"})").param, "tool_choice");
  EXPECT_EQ(parse_error(chat + R"("tool_choice":"required"})").param, "tool_choice");
  EXPECT_EQ(parse_error(chat + R"("tools":[)" + kWeatherTool +
                        R"(],"tool_choice":{"type":"function","function":{"name":"nope"}}})")
                .param,
            "tool_choice.function.name");
  EXPECT_EQ(parse_error(chat + R"("response_format":{"type":"xml"}})").param,
            "response_format.type");
  EXPECT_EQ(parse_error(chat + R"("response_format":{"type":"json_schema"}})").param,
            "response_format.json_schema");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a",
    "function":{"name":"f","arguments":{}}}]}]})")
                .param,
            "messages[0].tool_calls[0].function.arguments");
}

TEST(OpenAiRequestTest, ErrorsNameTheField) {
  EXPECT_EQ(parse_error("not json").message,
            "the request body is not valid JSON: line 1, column 1: expected a value (an object, "
            "array, string, number, true, false or null), found 'n'");
  EXPECT_EQ(parse_error(" \n").message, "the request body is empty: it must be a JSON object");
  EXPECT_EQ(parse_error("[]").message, "the request body must be a JSON object");
  EXPECT_EQ(parse_error(R"({"messages":[]})").param, "model");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[]})").param, "messages");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[{"content":"x"}]})").param, "messages[0].role");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[{"role":"user","content":null}]})").message,
            "messages[0].content: is required for a user message: a string or an array of content "
            "parts");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[{"role":"user","content":"x"},
    {"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function",
    "function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c"}]})")
                .param,
            "messages[2].content");
  EXPECT_EQ(
      parse_error(R"({"model":"m","messages":[{"role":"user","content":"x"}],"temperature":3})")
          .param,
      "temperature");
  EXPECT_EQ(
      parse_error(R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":0})")
          .param,
      "max_tokens");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[{"role":"user","content":"x"}],"n":2})").param,
            "n");
  EXPECT_EQ(
      parse_error(R"({"model":"m","messages":[{"role":"user","content":"x"}],"stop":5})").param,
      "stop");
  EXPECT_EQ(
      parse_error(R"({"model":"m","messages":[{"role":"user","content":"x"}],"top_logprobs":2})")
          .param,
      "top_logprobs");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[{"role":"user","content":"x"}],
    "frequency_penalty":3})")
                .message,
            "frequency_penalty: must be between -2.0 and 2.0");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[{"role":"user","content":"x"}],
    "presence_penalty":"high"})")
                .param,
            "presence_penalty");
  EXPECT_EQ(parse_error(R"({"model":"m","prompt":["a","b"]})", ApiKind::kCompletion).param,
            "prompt");
  EXPECT_EQ(http_status(parse_error(
                R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":"yes"})")),
            400);
}

// Every endpoint's body is read the same way: a broken one is answered with where and why.
TEST(OpenAiRequestTest, ABrokenBodySaysWhereAndWhy) {
  const std::string broken = "{\n  \"model\": \"m\",\n  \"messages\": [{\"role\": \"user\",}]\n}";
  const std::string where = "line 3, column 32: expected a member name in double quotes, found '}'";
  EXPECT_EQ(parse_error(broken).message, "the request body is not valid JSON: " + where);
  const auto route = parse_route_request(broken, "tandem");
  ASSERT_TRUE(std::holds_alternative<ApiError>(route));
  EXPECT_EQ(std::get<ApiError>(route).message, "the request body is not valid JSON: " + where);
}

// Found by the openai_body fuzz target: 18446744073709551615 read as -1, inside seed's range.
TEST(OpenAiRequestTest, IntegersBeyondInt64AreOutOfRange) {
  const std::string chat = R"({"model":"m","messages":[{"role":"user","content":"x"}],)";
  EXPECT_EQ(parse_error(chat + R"("seed":18446744073709551615})").param, "seed");
  EXPECT_EQ(parse_error(chat + R"("max_tokens":18446744073709551615})").param, "max_tokens");
  EXPECT_EQ(parse_ok(chat + R"("seed":4611686018427387903})").sampling.seed, 0xFFFFFFFFU);
}

// Found while writing the fuzz targets (fuzz/regressions/openai_body/): a 200 KB body of brackets,
// well under server.max_body_bytes, overflowed the stack when the parser copied the content.
TEST(OpenAiRequestTest, RefusesJsonNestedDeeperThanTheLimit) {
  const auto nested = [](size_t depth) {
    return R"({"model":"tandem","messages":[{"role":"user","content":"hi"}],"functions":)" +
           std::string(depth, '[') + std::string(depth, ']') + "}";
  };
  EXPECT_EQ(parse_ok(nested(62)).cloud_only_fields, std::vector<std::string>{"functions"});
  parse_ok(nested(63));  // 64 levels with the body's own object: the deepest allowed
  EXPECT_NE(parse_error(nested(64)).message.find("deeper than 64 levels"), std::string::npos);
  const ApiError error = parse_error(nested(100000));
  EXPECT_EQ(http_status(error), 400);
  EXPECT_NE(error.message.find("deeper than 64 levels"), std::string::npos) << error.message;
  // Brackets inside strings are text, not nesting.
  parse_ok(R"({"model":"tandem","messages":[{"role":"user","content":")" + std::string(1000, '[') +
           R"("}]})");
  EXPECT_TRUE(std::holds_alternative<ApiError>(parse_route_request(nested(100000), "tandem")));
}

}  // namespace
}  // namespace tandem::server
