#include "upstream/http_client.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "upstream/upstream.h"

namespace tandem::upstream {
namespace {

TEST(BaseUrlTest, ParsesSchemesHostsPortsAndPaths) {
  auto a = parse_base_url("https://api.openai.com/v1");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->tls);
  EXPECT_EQ(a->host, "api.openai.com");
  EXPECT_EQ(a->port, "443");
  EXPECT_EQ(a->base_path, "/v1");
  auto b = parse_base_url("http://127.0.0.1:8081/");
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->tls);
  EXPECT_EQ(b->port, "8081");
  EXPECT_EQ(b->base_path, "");
  auto c = parse_base_url("http://[::1]:9000/v1");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, "9000");
  EXPECT_FALSE(parse_base_url("ftp://x").ok());
  EXPECT_FALSE(parse_base_url("http://:80").ok());
  EXPECT_FALSE(parse_base_url("http://host:port/").ok());
}

TEST(RetryAfterTest, SecondsAndHttpDates) {
  EXPECT_EQ(parse_retry_after("3")->count(), 3000);
  EXPECT_EQ(parse_retry_after("0")->count(), 0);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")->count(), 0);  // in the past
  EXPECT_FALSE(parse_retry_after("soon").has_value());
  EXPECT_FALSE(parse_retry_after("").has_value());
}

// A one-shot upstream on loopback: reads one request, answers 200 with `{}`, then waits for
// the client to close.
net::awaitable<void> answer_once(net::tcp::acceptor& acceptor) {
  auto socket = co_await acceptor.async_accept(net::use_awaitable);
  net::beast::flat_buffer buffer;
  net::http::request<net::http::string_body> req;
  co_await net::http::async_read(socket, buffer, req, net::use_awaitable);
  const std::string response =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
  co_await net::asio::async_write(socket, net::asio::buffer(response), net::use_awaitable);
  char byte = 0;
  boost::system::error_code ec;
  co_await socket.async_read_some(net::asio::buffer(&byte, 1),
                                  net::asio::redirect_error(net::use_awaitable, ec));
}

// This test is about the connection, not about what may leave: every body goes.
class AdmitEverything final : public EgressGuard {
 protected:
  net::awaitable<std::optional<EgressRefusal>> inspect(const std::string& /*bytes*/,
                                                       const EgressSend& /*send*/) override {
    co_return std::nullopt;
  }
};

// cancel() posts the socket's close; a caller may cancel and destroy the exchange at once
// (Upstream::attempt does when the client went away). The close must then do nothing. Found
// by bench/soak.sh as a crash; scripts/sanitize.sh asan reports the use-after-free without
// the fix.
TEST(HttpExchangeTest, CancelThenDestroyAtOnceIsSafe) {
  net::asio::io_context ioc;
  net::tcp::acceptor acceptor(ioc, {net::asio::ip::make_address("127.0.0.1"), 0});
  const Endpoint at{false, "127.0.0.1", std::to_string(acceptor.local_endpoint().port()), ""};
  auto tls = make_tls_context(false, "");
  bool opened = false;
  net::asio::co_spawn(ioc, answer_once(acceptor), net::asio::detached);
  net::asio::co_spawn(
      ioc,
      [&]() -> net::awaitable<void> {
        AdmitEverything guard;
        const EgressSend send;
        std::string body = "{}";
        auto admitted = co_await guard.admit(std::move(body), send);
        HttpRequest request("POST", "/chat/completions", std::get<GuardedBody>(admitted));
        auto result = co_await open_exchange(*tls, at, request, config::Timeouts{}, 1024);
        auto* exchange = std::get_if<std::unique_ptr<HttpExchange>>(&result);
        if (exchange == nullptr) {
          co_return;
        }
        opened = (*exchange)->status() == 200;
        (*exchange)->cancel();  // posts the close...
        exchange->reset();      // ...and the exchange is gone before it runs
      },
      net::asio::detached);
  ioc.run();
  EXPECT_TRUE(opened);
}

// ---- parse_cloud_chunk: tool calls and reasoning ------------------------------------------

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

}  // namespace
}  // namespace tandem::upstream
