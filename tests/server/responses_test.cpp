#include "server/responses.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::server {
namespace {

using nlohmann::json;
using upstream::ApiKind;

ResponseIds ids() {
  ResponseIds out;
  out.id = "chatcmpl-x";
  out.created = 1700000000;
  out.model = "tandem";
  return out;
}

std::vector<Piece> pieces() {
  Piece text;
  text.text = "Hel\"lo\n";
  Piece reasoning;
  reasoning.reasoning = "Think.";
  Piece call;
  call.tool_calls = {{0, "call_1", "get_weather", "{\"city\":"}, {1, "", "", "\"Paris\"}"}};
  Piece with_logprobs;
  with_logprobs.text = "a";
  with_logprobs.logprobs = json::array({{{"token", "a"}, {"logprob", -0.5}}});
  return {text, reasoning, call, with_logprobs, Piece{}};
}

// Chunks are written straight to text, one per token: the bytes are what nlohmann::json wrote
// before (members in name order), for every shape a piece can have, in both APIs.
TEST(StreamChunksTest, TheTextIsWhatNlohmannWouldWrite) {
  DecisionRecord record;
  record.tier = "edge";
  record.reasons = {"ingress.simple"};
  for (const ApiKind kind : {ApiKind::kChat, ApiKind::kCompletion}) {
    for (const Piece& piece : pieces()) {
      for (const bool first : {true, false}) {
        const std::string text = content_chunk_text(kind, ids(), piece, first);
        EXPECT_EQ(text, dump(json::parse(text)));
      }
    }
    for (const DecisionRecord* with : std::vector<const DecisionRecord*>{nullptr, &record}) {
      const std::string finish = finish_chunk_text(kind, ids(), "stop", with);
      EXPECT_EQ(finish, dump(json::parse(finish)));
      const std::string usage = usage_chunk_text(kind, ids(), TierUsage{5, 7, 2}, with);
      EXPECT_EQ(usage, dump(json::parse(usage)));
      EXPECT_EQ(json::parse(usage).contains("tandem"), with != nullptr);
    }
    const std::string revision =
        revision_chunk_text(kind, ids(), Revision{"rev_1", "edge", "cloud", "low confidence"});
    EXPECT_EQ(revision, dump(json::parse(revision)));
  }
}

TEST(StreamChunksTest, WhatEachChunkCarries) {
  const json first = content_chunk(ApiKind::kChat, ids(), pieces()[0], true);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"], json({{"content", "Hel\"lo\n"}, {"role", "assistant"}}));
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  const json call = content_chunk(ApiKind::kChat, ids(), pieces()[2], false);
  EXPECT_FALSE(call["choices"][0]["delta"].contains("content"));
  EXPECT_EQ(call["choices"][0]["delta"]["tool_calls"][0],
            json::parse(R"({"index":0,"id":"call_1","type":"function",)"
                        R"("function":{"name":"get_weather","arguments":"{\"city\":"}})"));
  EXPECT_EQ(call["choices"][0]["delta"]["tool_calls"][1],
            json::parse(R"({"index":1,"function":{"arguments":"\"Paris\"}"}})"));
  const json logprobs = content_chunk(ApiKind::kChat, ids(), pieces()[3], false);
  EXPECT_EQ(logprobs["choices"][0]["logprobs"]["content"][0]["token"], "a");
  const json completion = content_chunk(ApiKind::kCompletion, ids(), pieces()[0], true);
  EXPECT_EQ(completion["object"], "text_completion");
  EXPECT_EQ(completion["choices"][0]["text"], "Hel\"lo\n");
  EXPECT_FALSE(completion["choices"][0].contains("delta"));
  const json usage = usage_chunk(ApiKind::kChat, ids(), TierUsage{5, 7, 2});
  EXPECT_EQ(usage["choices"], json::array());
  EXPECT_EQ(usage["usage"]["total_tokens"], 12);
  EXPECT_EQ(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 2);
}

}  // namespace
}  // namespace tandem::server
