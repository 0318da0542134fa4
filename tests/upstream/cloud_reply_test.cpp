#include "upstream/cloud_reply.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::upstream {
namespace {

CloudEvent parsed(const std::string& data, bool whole = false) {
  auto event = parse_cloud_chunk(data, ApiKind::kChat, whole);
  EXPECT_TRUE(event.ok()) << data;
  return event.ok() ? std::move(event).value() : CloudEvent{};
}

TEST(CloudChunkTest, StreamedToolCallDeltasKeepWhatEachCarries) {
  const CloudEvent first =
      parsed(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[)"
             R"({"index":0,"id":"call_1","type":"function","function":{"name":"get_weather",)"
             R"("arguments":""}}]},"finish_reason":null}]})");
  EXPECT_EQ(first.text, "");
  ASSERT_EQ(first.tool_calls.size(), 1u);
  EXPECT_EQ(first.tool_calls[0].index, 0u);
  EXPECT_EQ(first.tool_calls[0].id, "call_1");
  EXPECT_EQ(first.tool_calls[0].name, "get_weather");
  EXPECT_EQ(first.tool_calls[0].arguments, "");
  EXPECT_TRUE(first.has_output());

  const CloudEvent later = parsed(
      R"({"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"ci"}}]}}]})");
  ASSERT_EQ(later.tool_calls.size(), 1u);
  EXPECT_EQ(later.tool_calls[0].index, 1u);
  EXPECT_EQ(later.tool_calls[0].id, "");
  EXPECT_EQ(later.tool_calls[0].name, "");
  EXPECT_EQ(later.tool_calls[0].arguments, "{\"ci");

  const CloudEvent finish = parsed(R"({"choices":[{"delta":{},"finish_reason":"tool_calls"}]})");
  EXPECT_EQ(finish.finish_reason, "tool_calls");
  EXPECT_FALSE(finish.has_output());
}

TEST(CloudChunkTest, AWholeMessagesToolCallsAreNumberedByPosition) {
  const CloudEvent whole =
      parsed(R"({"choices":[{"index":0,"message":{"role":"assistant","content":null,)"
             R"("reasoning_content":"Two cities.","tool_calls":[)"
             R"({"id":"call_a","type":"function","function":{"name":"w","arguments":"{\"c\":1}"}},)"
             R"("not a call",)"
             R"({"id":"call_b","type":"function","function":{"name":"w","arguments":{"c":2}}}]},)"
             R"("finish_reason":"tool_calls"}]})",
             /*whole=*/true);
  EXPECT_EQ(whole.reasoning, "Two cities.");
  ASSERT_EQ(whole.tool_calls.size(), 2u);
  EXPECT_EQ(whole.tool_calls[0].index, 0u);
  EXPECT_EQ(whole.tool_calls[0].arguments, "{\"c\":1}");
  EXPECT_EQ(whole.tool_calls[1].index, 1u);  // no gap where the malformed item was
  EXPECT_EQ(whole.tool_calls[1].id, "call_b");
  EXPECT_EQ(whole.tool_calls[1].arguments, "{\"c\":2}");  // an object, relayed as its text
  EXPECT_EQ(whole.finish_reason, "tool_calls");
}

TEST(CloudChunkTest, ReasoningComesAsReasoningContentOrReasoning) {
  EXPECT_EQ(parsed(R"({"choices":[{"delta":{"reasoning_content":"Hm."}}]})").reasoning, "Hm.");
  EXPECT_EQ(parsed(R"({"choices":[{"delta":{"reasoning":"Hm."}}]})").reasoning, "Hm.");
  EXPECT_EQ(parsed(R"({"choices":[{"delta":{"reasoning":7}}]})").reasoning, "");
  const CloudEvent reasoning_only = parsed(R"({"choices":[{"delta":{"reasoning":"Hm."}}]})");
  EXPECT_TRUE(reasoning_only.has_output());
  // The legacy completions API has neither.
  auto completion = parse_cloud_chunk(
      R"({"choices":[{"text":"x","reasoning_content":"Hm.","tool_calls":[{"id":"c"}]}]})",
      ApiKind::kCompletion);
  ASSERT_TRUE(completion.ok());
  EXPECT_EQ(completion->reasoning, "");
  EXPECT_TRUE(completion->tool_calls.empty());
}

// Each malformed item is left out; the chunk is still an event, and the good item stays.
TEST(CloudChunkTest, MalformedToolCallItemsAreLeftOut) {
  const std::vector<std::string> malformed = {
      R"(17)",
      R"(null)",
      R"("call")",
      R"([{"index":0,"id":"nested"}])",
      R"({"index":"0","id":"call_string_index"})",
      R"({"index":-1,"id":"call_negative"})",
      R"({"index":1.5,"id":"call_fraction"})",
      R"({"index":1024,"id":"call_too_far"})",
      R"({"index":18446744073709551615,"id":"call_huge"})",
      R"({"index":0,"type":"custom","id":"call_custom","custom":{"name":"x"}})",
      R"({"index":0})",
      R"({"index":0,"function":"get_weather"})",
      R"({"index":0,"id":7,"function":{"name":[],"arguments":null}})",
  };
  const std::string good = R"({"index":2,"id":"call_ok","function":{"name":"ok"}})";
  for (const auto& item : malformed) {
    const CloudEvent event =
        parsed(R"({"choices":[{"delta":{"tool_calls":[)" + item + "," + good + "]}}]}");
    ASSERT_EQ(event.tool_calls.size(), 1u) << item;
    EXPECT_EQ(event.tool_calls[0].id, "call_ok") << item;
    EXPECT_EQ(event.tool_calls[0].index, 2u) << item;
  }
  for (const char* calls : {R"("not a list")", "{}", "null", "3"}) {
    EXPECT_TRUE(parsed(std::string(R"({"choices":[{"delta":{"tool_calls":)") + calls + "}}]}")
                    .tool_calls.empty())
        << calls;
  }
}

// Usage counts that are not counts read as 0 (unknown) and are named for the log; nothing
// throws, and the rest of the chunk is read.
TEST(CloudChunkTest, MalformedUsageCountsReadAsZeroAndAreNamed) {
  const CloudEvent event =
      parsed(R"({"choices":[{"delta":{"content":"hi"}}],"usage":{"prompt_tokens":null,)"
             R"("completion_tokens":"7","total_tokens":1.5,)"
             R"("prompt_tokens_details":{"cached_tokens":-3}}})");
  EXPECT_EQ(event.text, "hi");
  ASSERT_TRUE(event.usage.has_value());
  EXPECT_EQ(event.usage->prompt_tokens, 0);
  EXPECT_EQ(event.usage->completion_tokens, 0);
  EXPECT_EQ(event.usage->cached_prompt_tokens, 0);
  EXPECT_NE(event.usage_problem.find("usage.prompt_tokens is null"), std::string::npos)
      << event.usage_problem;
  EXPECT_NE(event.usage_problem.find("usage.completion_tokens is a string"), std::string::npos);
  EXPECT_NE(event.usage_problem.find("cached_tokens is -3"), std::string::npos);

  for (const char* count : {"1.5", "true", "[]", "{}", "-1", "2147483648", "1e400"}) {
    const std::string chunk = std::string(R"({"choices":[],"usage":{"prompt_tokens":)") + count +
                              R"(,"completion_tokens":4}})";
    auto parsed_chunk = parse_cloud_chunk(chunk, ApiKind::kChat);
    if (!parsed_chunk.ok()) {  // 1e400 is not JSON nlohmann reads: a malformed event
      continue;
    }
    ASSERT_TRUE(parsed_chunk->usage) << count;
    EXPECT_EQ(parsed_chunk->usage->prompt_tokens, 0) << count;
    EXPECT_EQ(parsed_chunk->usage->completion_tokens, 4) << count;
    EXPECT_FALSE(parsed_chunk->usage_problem.empty()) << count;
  }
  // A usage that is not an object is no usage; null is OpenAI's "not in this chunk".
  EXPECT_FALSE(parsed(R"({"choices":[],"usage":null})").usage);
  EXPECT_TRUE(parsed(R"({"choices":[],"usage":null})").usage_problem.empty());
  EXPECT_FALSE(parsed(R"({"choices":[],"usage":"lots"})").usage);
  EXPECT_EQ(parsed(R"({"choices":[],"usage":"lots"})").usage_problem, "usage is a string");
}

// Without its structure there is no answer to read: a malformed reply, which the upstream call
// turns into a protocol failure (retried, then the next upstream or tier).
TEST(CloudChunkTest, AnAnswerWithoutItsStructureIsMalformed) {
  const std::vector<std::pair<std::string, bool>> malformed = {
      {R"({"id":"x","object":"chat.completion","usage":{"prompt_tokens":1}})", true},
      {R"({"choices":null})", true},
      {R"({"choices":[]})", true},
      {R"({"choices":"none"})", true},
      {R"({"choices":{"0":{"message":{"content":"x"}}}})", true},
      {R"({"choices":[42]})", true},
      {R"({"choices":[null]})", true},
      {R"({"choices":[{"finish_reason":"stop"}]})", true},
      {R"({"choices":[{"message":null}]})", true},
      {R"({"choices":[{"message":"hello"}]})", true},
      {R"({"choices":"none"})", false},
      {R"({"choices":[42]})", false},
      {R"({"choices":[{"delta":"hello"}]})", false},
      {R"({"choices":[{"delta":[1]}]})", false},
  };
  for (const auto& [data, whole] : malformed) {
    auto event = parse_cloud_chunk(data, ApiKind::kChat, whole);
    ASSERT_FALSE(event.ok()) << data;
    EXPECT_NE(event.error().message.find("malformed"), std::string::npos) << data;
  }
  // A stream's chunks may lack choices (usage), a delta (a bare finish), or have null ones.
  for (const char* chunk :
       {R"({"usage":{"prompt_tokens":1}})", R"({"choices":null})", R"({"choices":[]})",
        R"({"choices":[{"finish_reason":"stop"}]})", R"({"choices":[{"delta":null}]})"}) {
    auto event = parse_cloud_chunk(chunk, ApiKind::kChat);
    EXPECT_TRUE(event.ok()) << chunk;
  }
  EXPECT_TRUE(parsed(R"({"choices":[{"finish_reason":"stop"}]})").has_choice);
  EXPECT_FALSE(parsed(R"({"choices":[]})").has_choice);
  // Completions: choices[0] must be an object; its text is read if it is one.
  EXPECT_FALSE(parse_cloud_chunk(R"({"choices":["x"]})", ApiKind::kCompletion, true).ok());
  EXPECT_FALSE(
      parse_cloud_chunk(R"({"object":"text_completion"})", ApiKind::kCompletion, true).ok());
  auto text = parse_cloud_chunk(R"({"choices":[{"text":7,"finish_reason":"length"}]})",
                                ApiKind::kCompletion, true);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->text, "");
}

// Inside the structure, a field of the wrong type is as good as absent.
TEST(CloudChunkTest, FieldsOfTheWrongTypeAreIgnored) {
  const CloudEvent whole =
      parsed(R"({"model":{"name":"m"},"choices":[{"message":{"content":42,"reasoning_content":[],)"
             R"("tool_calls":"none"},"finish_reason":7,"logprobs":"many"}]})",
             /*whole=*/true);
  EXPECT_EQ(whole.text, "");
  EXPECT_EQ(whole.reasoning, "");
  EXPECT_TRUE(whole.tool_calls.empty());
  EXPECT_FALSE(whole.finish_reason.has_value());
  EXPECT_EQ(whole.model, "");
  EXPECT_TRUE(whole.has_choice);
}

// The last value of a repeated key counts, as for every JSON reader Tandem used before.
TEST(CloudChunkTest, ARepeatedKeyCountsWithItsLastValue) {
  const CloudEvent event =
      parsed(R"({"choices":"none","choices":[{"message":{"content":"a","content":"b"}}]})", true);
  EXPECT_EQ(event.text, "b");
  EXPECT_FALSE(
      parse_cloud_chunk(R"({"choices":[{"message":{}}],"choices":7})", ApiKind::kChat, true).ok());
}

// An integer beyond 64 bits is not a number simdjson reads: the reply is malformed, and says so.
TEST(CloudChunkTest, AnIntegerBeyondSixtyFourBitsIsMalformed) {
  auto event = parse_cloud_chunk(
      R"({"choices":[],"usage":{"prompt_tokens":123456789012345678901234567890}})", ApiKind::kChat);
  ASSERT_FALSE(event.ok());
  EXPECT_NE(event.error().message.find("malformed"), std::string::npos);
  // Within 64 bits but beyond int: read as 0 and named.
  const CloudEvent big = parsed(R"({"choices":[],"usage":{"prompt_tokens":18446744073709551615}})");
  ASSERT_TRUE(big.usage);
  EXPECT_EQ(big.usage->prompt_tokens, 0);
  EXPECT_EQ(big.usage_problem, "usage.prompt_tokens is 18446744073709551615");
}

// A leading byte order mark is ignored (RFC 8259 allows it); a NUL byte is JSON nowhere, and
// what follows one is not ignored (as nlohmann::json would, taking it for the end of input).
TEST(CloudChunkTest, AByteOrderMarkIsIgnoredAndANulByteIsMalformed) {
  const CloudEvent marked =
      parsed("\xEF\xBB\xBF{\"choices\":[{\"message\":{\"content\":\"a\"}}]}", true);
  EXPECT_EQ(marked.text, "a");
  const std::string nul_then_junk("{\"choices\":[]}\0{\"logpr[bs\":null", 31);
  auto event = parse_cloud_chunk(nul_then_junk, ApiKind::kChat);
  ASSERT_FALSE(event.ok());
  EXPECT_NE(event.error().message.find("malformed"), std::string::npos);
}

TEST(CloudErrorTest, TheMessageOfAnErrorBodyOrTheBodyItself) {
  EXPECT_EQ(error_message_of(R"({"error":{"message":"slow down","type":"rate_limit"}})"),
            "slow down");
  EXPECT_EQ(error_message_of(R"({"error":"overloaded"})"), "overloaded");
  EXPECT_EQ(error_message_of(R"({"error":{"code":7}})"), R"({"error":{"code":7}})");
  EXPECT_EQ(error_message_of("<html>Bad Gateway</html>"), "<html>Bad Gateway</html>");
  EXPECT_EQ(error_message_of(std::string(300, 'x')), std::string(200, 'x'));
}

// The per-thread parser keeps its buffers only for answers up to 1 MiB; a larger one is read
// with a parser of its own, and a small one after it still reads.
TEST(CloudChunkTest, ALargeAnswerReadsAsWellAsASmallOne) {
  const std::string text(3 << 20, 'a');
  const CloudEvent large =
      parsed(R"({"choices":[{"message":{"content":")" + text + R"("}}]})", true);
  EXPECT_EQ(large.text.size(), text.size());
  EXPECT_EQ(parsed(R"({"choices":[{"message":{"content":"b"}}]})", true).text, "b");
}

// The parse is the depth check: logprobs nested 64 levels deep are kept, one level more is
// refused with the depth named, before anything is copied into a recursive document. A large
// answer, read by a parser of its own, is held to the same depth.
TEST(CloudChunkTest, ALogprobsFieldNestedPastTheLimitIsRefusedByName) {
  const auto event_nesting = [](size_t levels, size_t padding) {
    // The event itself and its choices array and choice object take three levels.
    return R"({"choices":[{"text":")" + std::string(padding, 'p') + R"(","logprobs":)" +
           std::string(levels - 3, '[') + std::string(levels - 3, ']') + "}]}";
  };
  for (size_t padding : {size_t{0}, size_t{2} << 20}) {
    const auto deepest = parse_cloud_chunk(event_nesting(64, padding), ApiKind::kCompletion, true);
    ASSERT_TRUE(deepest.ok()) << deepest.error().message;
    EXPECT_TRUE(deepest.value().logprobs.is_array());
    const auto deeper = parse_cloud_chunk(event_nesting(65, padding), ApiKind::kCompletion, true);
    ASSERT_FALSE(deeper.ok());
    EXPECT_NE(deeper.error().message.find("nested deeper than 64 levels"), std::string::npos)
        << deeper.error().message;
  }
  EXPECT_EQ(parsed(R"({"choices":[{"message":{"content":"b"}}]})", true).text, "b");
}

}  // namespace
}  // namespace tandem::upstream
