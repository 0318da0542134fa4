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
    "user":"u1"})");
  EXPECT_EQ(r.model, "tandem");
  ASSERT_EQ(r.messages.size(), 2U);
  EXPECT_EQ(r.messages[1].content, "Hi there");
  EXPECT_EQ(r.sampling.max_tokens, 12);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.5F);
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
    "image_url":{"url":"x"}}]}],"tools":[{"type":"function"}]})");
  ASSERT_EQ(r.cloud_only_fields.size(), 2U);
}

TEST(OpenAiRequestTest, ErrorsNameTheField) {
  EXPECT_EQ(parse_error("not json").message, "the request body is not valid JSON");
  EXPECT_EQ(parse_error("[]").message, "the request body must be a JSON object");
  EXPECT_EQ(parse_error(R"({"messages":[]})").param, "model");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[]})").param, "messages");
  EXPECT_EQ(parse_error(R"({"model":"m","messages":[{"content":"x"}]})").param, "messages[0].role");
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
  EXPECT_EQ(parse_error(R"({"model":"m","prompt":["a","b"]})", ApiKind::kCompletion).param,
            "prompt");
  EXPECT_EQ(
      parse_error(R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":"yes"})")
          .status,
      400);
}

}  // namespace
}  // namespace tandem::server
