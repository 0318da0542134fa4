// `tandem serve`'s gateway end to end on loopback: the real edge model, llama.cpp's
// llama-server as a real cloud tier, and the fault-injecting upstream for every failure.

#include <array>

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include "server/responses.h"
#include "test_harness.h"

namespace tandem::test {
namespace {

const std::string kStory = ", there was a little girl named Lily";

// Timeouts that only a fault reaches: an upstream that answers at once must not time out
// because the machine is slow or the build sanitised (10x slower), since the tests below judge
// what the gateway does with answers.
const std::string kPatientTimeouts =
    "{connect_ms: 5000, first_byte_ms: 30000, idle_ms: 30000, total_ms: 60000}";
// For an upstream that never answers: its first-byte timeout is what ends each attempt. A timer,
// so slowness cannot stop it firing; it only has to be short for the test to be quick.
const std::string kQuickFirstByte =
    "{connect_ms: 5000, first_byte_ms: 1500, idle_ms: 30000, total_ms: 60000}";

// One upstream serving `public_model` as `upstream_model`, retried once after a short backoff.
std::string upstream_yaml(const std::string& name, const std::string& base_url,
                          const std::string& public_model, const std::string& upstream_model,
                          const std::string& extra = "",
                          const std::string& timeouts = kPatientTimeouts) {
  return "    - name: " + name + "\n      base_url: " + base_url + "\n      models: {" +
         public_model + ": " + upstream_model + "}\n" + "      timeouts: " + timeouts + "\n" +
         "      retry: {max_retries: 1, base_backoff_ms: 10, max_backoff_ms: 50}\n" +
         "      health: {interval_ms: 0}\n" + extra;
}

std::string with_upstreams(const std::string& upstreams, const std::string& more = "") {
  return "cloud:\n  upstreams:\n" + upstreams + more;
}

// ---- Edge tier -------------------------------------------------------------------------

TEST(GatewayEdgeTest, ChatCompletionFromTheEdgeCarriesItsDecision) {
  GatewayUnderTest gateway("");
  auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once upon a time", 16));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["X-Tandem-Tier"], "edge");
  const json body = r.json_body();
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["model"], "tandem");
  EXPECT_EQ(body["choices"][0]["message"]["content"].get<std::string>().rfind(kStory, 0), 0U);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["completion_tokens"], 16);
  const json& t = body["tandem"];
  EXPECT_EQ(t["tier"], "edge");
  EXPECT_EQ(t["models"]["edge"]["sha256"],
            "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
  EXPECT_TRUE(t["degraded"].is_null());
  EXPECT_EQ(t["usage"]["edge"]["completion_tokens"], 16);
  EXPECT_GE(t["latency_ms"].get<double>(), t["ttft_ms"].get<double>());
}

TEST(GatewayEdgeTest, TheNextTurnOfAChatReportsItsCachedPromptTokens) {
  GatewayUnderTest gateway("");
  // Two turns already, so that both requests are rendered as a transcript (the shipped model's
  // plain template writes a lone user message as it is).
  json req = chat("tandem", "Once upon a time", 16);
  req["messages"].push_back({{"role", "assistant"}, {"content", "there was a girl."}});
  req["messages"].push_back({{"role", "user"}, {"content", "What was her name?"}});
  auto first = post(gateway.port(), "/v1/chat/completions", req);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json_body()["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  req["messages"].push_back(first.json_body()["choices"][0]["message"]);
  req["messages"].push_back({{"role", "user"}, {"content", "What did she do next?"}});
  auto second = post(gateway.port(), "/v1/chat/completions", req);
  ASSERT_EQ(second.status, 200) << second.body;
  const json body = second.json_body();
  const int cached = body["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>();
  EXPECT_GT(cached, 0);
  EXPECT_LT(cached, body["usage"]["prompt_tokens"].get<int>());
  EXPECT_EQ(body["tandem"]["usage"]["edge"]["cached_prompt_tokens"], cached);
}

TEST(GatewayEdgeTest, StreamingEndsWithUsageDecisionAndDone) {
  GatewayUnderTest gateway("");
  json req = chat("tandem", "Once upon a time", 12, true);
  req["stream_options"] = {{"include_usage", true}};
  auto r = post(gateway.port(), "/v1/chat/completions", req);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["Content-Type"], "text/event-stream");
  EXPECT_EQ(r.headers["X-Tandem-Tier"], "edge");
  const auto events = r.events();
  ASSERT_GE(events.size(), 4U);
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const json chunk = json::parse(events[i]);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    if (!chunk["choices"].empty() && chunk["choices"][0]["delta"].contains("content")) {
      text += chunk["choices"][0]["delta"]["content"].get<std::string>();
    }
  }
  EXPECT_EQ(text.rfind(kStory, 0), 0U) << text;
  const json last = json::parse(events[events.size() - 2]);
  EXPECT_TRUE(last["choices"].empty());
  EXPECT_EQ(last["usage"]["completion_tokens"], 12);
  EXPECT_EQ(last["tandem"]["tier"], "edge");
}

TEST(GatewayEdgeTest, CompletionsWithLogprobs) {
  GatewayUnderTest gateway("");
  auto r = post(gateway.port(), "/v1/completions",
                {{"model", "tandem"},
                 {"prompt", "Once upon a time"},
                 {"max_tokens", 4},
                 {"temperature", 0},
                 {"logprobs", 2}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json choice = r.json_body()["choices"][0];
  EXPECT_EQ(choice["text"].get<std::string>().rfind(", there", 0), 0U);
  ASSERT_EQ(choice["logprobs"]["tokens"].size(), 4U);
  EXPECT_EQ(choice["logprobs"]["tokens"][0], ",");
  EXPECT_LE(choice["logprobs"]["token_logprobs"][0].get<double>(), 0.0);
  EXPECT_EQ(choice["logprobs"]["top_logprobs"][0].size(), 2U);
}

TEST(GatewayEdgeTest, ModelsAndHealth) {
  GatewayUnderTest gateway("");
  auto models = request(gateway.port(), "GET", "/v1/models").json_body();
  ASSERT_EQ(models["data"].size(), 2U);
  EXPECT_EQ(models["data"][0]["id"], "tandem");
  EXPECT_EQ(models["data"][1]["owned_by"], "edge");
  auto health = gateway.health();
  EXPECT_EQ(health["status"], "ok");
  EXPECT_TRUE(health["edge"]["loaded"].get<bool>());
}

TEST(GatewayEdgeTest, BadRequestsGetOpenAiErrors) {
  GatewayUnderTest gateway("server:\n  max_body_bytes: 2048\n");
  auto bad_json = request(gateway.port(), "POST", "/v1/chat/completions", "{nope");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_EQ(bad_json.json_body()["error"]["type"], "invalid_request_error");
  auto bad_field = post(gateway.port(), "/v1/chat/completions",
                        {{"model", "tandem"}, {"messages", json::array()}});
  EXPECT_EQ(bad_field.status, 400);
  EXPECT_EQ(bad_field.json_body()["error"]["param"], "messages");
  auto unknown = post(gateway.port(), "/v1/chat/completions", chat("gpt-9", "hi"));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.json_body()["error"]["code"], "model_not_found");
  auto too_big =
      post(gateway.port(), "/v1/chat/completions", chat("tandem", std::string(4096, 'a')));
  EXPECT_EQ(too_big.status, 413);
  EXPECT_EQ(request(gateway.port(), "GET", "/v2/nothing").status, 404);
  EXPECT_EQ(request(gateway.port(), "GET", "/v1/chat/completions").status, 405);
  // The server is still fine.
  EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once", 2)).status, 200);
}

TEST(GatewayEdgeTest, ApiKeysAreCheckedAndScoped) {
  ::setenv("TANDEM_TEST_KEY_A", "key-a", 1);
  ::setenv("TANDEM_TEST_KEY_B", "key-b", 1);
  GatewayUnderTest gateway(
      "server:\n  api_keys:\n    - {name: a, key_env: TANDEM_TEST_KEY_A}\n"
      "    - {name: b, key_env: TANDEM_TEST_KEY_B, models: [llama]}\n");
  const json req = chat("tandem", "Once", 2);
  EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", req).status, 401);
  EXPECT_EQ(
      post(gateway.port(), "/v1/chat/completions", req, {{"Authorization", "Bearer nope"}}).status,
      401);
  EXPECT_EQ(
      post(gateway.port(), "/v1/chat/completions", req, {{"Authorization", "Bearer key-a"}}).status,
      200);
  auto scoped =
      post(gateway.port(), "/v1/chat/completions", req, {{"Authorization", "Bearer key-b"}});
  EXPECT_EQ(scoped.status, 403);
  EXPECT_EQ(scoped.json_body()["error"]["code"], "model_not_allowed");
  EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", chat("llama", "Once", 2),
                 {{"Authorization", "Bearer key-b"}})
                .status,
            200);
  EXPECT_EQ(request(gateway.port(), "GET", "/v1/models").status, 401);
  EXPECT_EQ(request(gateway.port(), "GET", "/health").status, 200);  // no key needed
}

// ---- A real cloud tier: llama-server ----------------------------------------------------

TEST(GatewayCloudTest, LlamaServerAsTheCloudTier) {
  LlamaServer llama;
  ASSERT_TRUE(llama.ready());
  GatewayUnderTest gateway(
      with_upstreams(upstream_yaml("llama", llama.base_url(), "cloud-stories", "stories")));
  // The same model, greedy, through llama-server: the same story as the edge tells.
  auto r = post(gateway.port(), "/v1/completions",
                {{"model", "cloud-stories"},
                 {"prompt", "Once upon a time"},
                 {"max_tokens", 16},
                 {"temperature", 0}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["X-Tandem-Tier"], "cloud");
  const json body = r.json_body();
  EXPECT_EQ(body["choices"][0]["text"].get<std::string>().rfind(kStory, 0), 0U) << r.body;
  EXPECT_EQ(body["model"], "cloud-stories");
  EXPECT_EQ(body["tandem"]["tier"], "cloud");
  EXPECT_EQ(body["tandem"]["models"]["cloud"]["upstream"], "llama");
  EXPECT_EQ(body["tandem"]["models"]["cloud"]["model"], "stories");
  EXPECT_EQ(body["tandem"]["usage"]["cloud"]["completion_tokens"], 16);
  EXPECT_EQ(body["usage"]["completion_tokens"], 16);

  // Chat goes through llama-server's own chat template: other text, same plumbing.
  auto c =
      post(gateway.port(), "/v1/chat/completions", chat("cloud-stories", "Once upon a time", 8));
  ASSERT_EQ(c.status, 200) << c.body;
  EXPECT_FALSE(c.json_body()["choices"][0]["message"]["content"].get<std::string>().empty());
  EXPECT_EQ(c.json_body()["tandem"]["tier"], "cloud");

  json streamed = chat("cloud-stories", "Once upon a time", 8, true);
  streamed["logprobs"] = true;
  streamed["top_logprobs"] = 2;
  auto s = post(gateway.port(), "/v1/chat/completions", streamed);
  ASSERT_EQ(s.status, 200);
  const auto events = s.events();
  ASSERT_GE(events.size(), 3U);
  const json first = json::parse(events[0]);
  const json& lp = first["choices"][0]["logprobs"]["content"];
  ASSERT_FALSE(lp.empty()) << events[0];
  EXPECT_TRUE(lp[0].contains("logprob"));
  EXPECT_EQ(lp[0]["top_logprobs"].size(), 2U);
  EXPECT_EQ(events.back(), "[DONE]");
}

// ---- Tool calls and reasoning ------------------------------------------------------------
// Rendered as OpenAI renders them.

server::ResponseIds fixed_ids() {
  return {"chatcmpl-x", 1, "m"};
}

server::ToolCallDelta call_delta(size_t index, std::string id, std::string name,
                                 std::string arguments) {
  return {index, std::move(id), std::move(name), std::move(arguments)};
}

TEST(ResponsesTest, APlainTextChunkIsRenderedAsItAlwaysWas) {
  server::Piece piece;
  piece.text = "Hi";
  EXPECT_EQ(server::dump(server::content_chunk(upstream::ApiKind::kChat, fixed_ids(), piece, true)),
            R"({"choices":[{"delta":{"content":"Hi","role":"assistant"},"finish_reason":null,)"
            R"("index":0,"logprobs":null}],"created":1,"id":"chatcmpl-x","model":"m",)"
            R"("object":"chat.completion.chunk"})");
  piece.text.clear();  // an empty piece still says content ""
  EXPECT_EQ(server::content_chunk(upstream::ApiKind::kChat, fixed_ids(), piece,
                                  false)["choices"][0]["delta"],
            json({{"content", ""}}));
}

TEST(ResponsesTest, ChunksCarryReasoningAndToolCallDeltasAsOpenAiStreamsThem) {
  server::Piece reasoning;
  reasoning.reasoning = "Think.";
  EXPECT_EQ(server::content_chunk(upstream::ApiKind::kChat, fixed_ids(), reasoning,
                                  true)["choices"][0]["delta"],
            json({{"role", "assistant"}, {"reasoning_content", "Think."}}));

  server::Piece first;
  first.tool_calls = {call_delta(0, "call_1", "get_weather", "")};
  EXPECT_EQ(server::content_chunk(upstream::ApiKind::kChat, fixed_ids(), first,
                                  false)["choices"][0]["delta"],
            json::parse(R"({"tool_calls":[{"index":0,"id":"call_1","type":"function",)"
                        R"("function":{"name":"get_weather","arguments":""}}]})"));
  server::Piece later;
  later.tool_calls = {call_delta(0, "", "", "{\"city\":"), call_delta(1, "call_2", "f", "{}")};
  EXPECT_EQ(server::content_chunk(upstream::ApiKind::kChat, fixed_ids(), later,
                                  false)["choices"][0]["delta"],
            json::parse(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}},)"
                        R"({"index":1,"id":"call_2","type":"function",)"
                        R"("function":{"name":"f","arguments":"{}"}}]})"));
  // Text with them is content as usual; completions render the text only.
  later.text = "Sure.";
  EXPECT_EQ(server::content_chunk(upstream::ApiKind::kChat, fixed_ids(), later,
                                  false)["choices"][0]["delta"]["content"],
            "Sure.");
  const json completion =
      server::content_chunk(upstream::ApiKind::kCompletion, fixed_ids(), later, false);
  EXPECT_EQ(completion["choices"][0]["text"], "Sure.");
  EXPECT_FALSE(completion["choices"][0].contains("delta"));
}

TEST(ResponsesTest, ToolCallDeltasAddUpToWholeCallsInIndexOrder) {
  std::vector<server::ToolCallDelta> calls;
  server::append_tool_calls(calls, {call_delta(1, "call_b", "second", "{\"x\"")});
  server::append_tool_calls(calls, {call_delta(0, "call_a", "first", "")});
  // A repeated id or name is kept from the first delta; arguments append.
  server::append_tool_calls(
      calls, {call_delta(1, "call_other", "other", ":1}"), call_delta(0, "", "", "{}")});
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].index, 0u);
  EXPECT_EQ(calls[0].id, "call_a");
  EXPECT_EQ(calls[0].name, "first");
  EXPECT_EQ(calls[0].arguments, "{}");
  EXPECT_EQ(calls[1].id, "call_b");
  EXPECT_EQ(calls[1].name, "second");
  EXPECT_EQ(calls[1].arguments, "{\"x\":1}");
}

TEST(ResponsesTest, AWholeAnswerWithToolCallsHasANullContent) {
  server::WholeAnswer answer;
  server::Piece piece;
  piece.reasoning = "Think";
  answer.add(upstream::ApiKind::kChat, piece);
  piece.reasoning = ".";
  piece.tool_calls = {call_delta(0, "call_1", "get_weather", "{\"city\":")};
  answer.add(upstream::ApiKind::kChat, piece);
  piece.reasoning.clear();
  piece.tool_calls = {call_delta(0, "", "", "\"Paris\"}")};
  answer.add(upstream::ApiKind::kChat, piece);
  const server::Outcome outcome{"tool_calls", {}};
  const json body = server::completion_response(upstream::ApiKind::kChat, fixed_ids(), answer,
                                                outcome, server::DecisionRecord{});
  const json& choice = body["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_EQ(choice["message"],
            json::parse(R"({"role":"assistant","content":null,"reasoning_content":"Think.",)"
                        R"("tool_calls":[{"id":"call_1","type":"function","function":)"
                        R"({"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]})"));
  // With text too, the text stays; without reasoning or calls the message is as it always was.
  answer.text = "Let me check.";
  EXPECT_EQ(
      server::completion_response(upstream::ApiKind::kChat, fixed_ids(), answer, outcome,
                                  server::DecisionRecord{})["choices"][0]["message"]["content"],
      "Let me check.");
  EXPECT_EQ(server::completion_response(upstream::ApiKind::kChat, fixed_ids(), "Hi", nullptr,
                                        outcome, server::DecisionRecord{})["choices"][0]["message"],
            json({{"role", "assistant"}, {"content", "Hi"}}));
}

// The fault upstream's `fault-tool-calls` answers with reasoning and two calls, and
// `fault-malformed-tool-calls` with malformed items around one good call (tests/support/README.md).

// The calls of a streamed chat answer, put together as a client does.
struct StreamedCalls {
  std::string reasoning;
  std::string content;
  json calls = json::array();  // [{id, type, function: {name, arguments}}] by index
  std::string finish_reason;
  int first_deltas = 0;  // deltas that named a call (id, type and name together)
};

StreamedCalls streamed_calls(const HttpResult& r) {
  StreamedCalls out;
  for (const auto& event : r.events()) {
    if (event == "[DONE]") {
      break;
    }
    const json chunk = json::parse(event);
    if (chunk.contains("error")) {
      ADD_FAILURE() << event;
      continue;
    }
    for (const auto& choice : chunk["choices"]) {
      if (choice["finish_reason"].is_string()) {
        out.finish_reason = choice["finish_reason"];
      }
      const json& delta = choice["delta"];
      out.reasoning += delta.value("reasoning_content", "");
      out.content += delta.value("content", "");
      for (const auto& call : delta.value("tool_calls", json::array())) {
        const size_t index = call["index"].get<size_t>();
        while (out.calls.size() <= index) {
          out.calls.push_back({{"function", {{"name", ""}, {"arguments", ""}}}});
        }
        json& whole = out.calls[index];
        if (call.contains("id")) {
          EXPECT_EQ(call["type"], "function");
          EXPECT_TRUE(call["function"].contains("name"));
          ++out.first_deltas;
          whole["id"] = call["id"];
          whole["type"] = call["type"];
          whole["function"]["name"] = call["function"]["name"];
        }
        whole["function"]["arguments"] = whole["function"]["arguments"].get<std::string>() +
                                         call["function"]["arguments"].get<std::string>();
      }
    }
  }
  return out;
}

const json kFaultToolCalls =
    json::parse(R"([{"id":"call_fault_0","type":"function","function":{"name":"get_weather",)"
                R"("arguments":"{\"city\": \"Paris\"}"}},)"
                R"({"id":"call_fault_1","type":"function","function":{"name":"get_time",)"
                R"("arguments":"{\"zone\":\"CET\"}"}}])");

TEST(GatewayToolCallTest, TheCloudsToolCallsAndReasoningReachTheClient) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      with_upstreams(upstream_yaml("tools", fault.base_url(), "agent", "fault-tool-calls")),
      /*with_edge=*/false);
  json request = chat("agent", "What is the weather in Paris?", 64, true);
  request["stream_options"] = {{"include_usage", true}};
  auto s = post(gateway.port(), "/v1/chat/completions", request);
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_EQ(s.headers["X-Tandem-Tier"], "cloud");
  const StreamedCalls streamed = streamed_calls(s);
  EXPECT_EQ(streamed.reasoning, "The user wants the weather. Two calls.");
  EXPECT_EQ(streamed.content, "");
  EXPECT_EQ(streamed.calls, kFaultToolCalls) << s.body;
  EXPECT_EQ(streamed.first_deltas, 2);
  EXPECT_EQ(streamed.finish_reason, "tool_calls");

  auto r = post(gateway.port(), "/v1/chat/completions",
                chat("agent", "What is the weather in Paris?", 64, false));
  ASSERT_EQ(r.status, 200) << r.body;
  const json choice = r.json_body()["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_TRUE(choice["message"]["content"].is_null()) << r.body;
  EXPECT_EQ(choice["message"]["reasoning_content"], "The user wants the weather. Two calls.");
  EXPECT_EQ(choice["message"]["tool_calls"], kFaultToolCalls);
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "cloud");
}

TEST(GatewayToolCallTest, MalformedToolCallItemsAreLeftOutAndTheRestRelayed) {
  FaultUpstream fault;
  GatewayUnderTest gateway(with_upstreams(upstream_yaml("tools", fault.base_url(), "agent",
                                                        "fault-malformed-tool-calls")),
                           /*with_edge=*/false);
  const json ok = json::parse(R"([{"id":"call_fault_ok","type":"function","function":{"name":"ok",)"
                              R"("arguments":"{\"valid\":true}"}}])");
  auto s = post(gateway.port(), "/v1/chat/completions", chat("agent", "hi", 16, true));
  ASSERT_EQ(s.status, 200) << s.body;
  const StreamedCalls streamed = streamed_calls(s);
  EXPECT_EQ(streamed.calls, ok) << s.body;
  EXPECT_EQ(streamed.reasoning, "");
  EXPECT_EQ(streamed.finish_reason, "tool_calls");

  auto r = post(gateway.port(), "/v1/chat/completions", chat("agent", "hi", 16, false));
  ASSERT_EQ(r.status, 200) << r.body;
  const json message = r.json_body()["choices"][0]["message"];
  EXPECT_EQ(message["tool_calls"], ok) << r.body;
  EXPECT_FALSE(message.contains("reasoning_content"));
  EXPECT_TRUE(gateway.health()["ready"].get<bool>());
}

// ---- Faults -------------------------------------------------------------------------------

TEST(GatewayFaultTest, RateLimitIsRetriedAfterRetryAfter) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      with_upstreams(upstream_yaml("f", fault.base_url(), "c", "fault-429-x1")));
  const auto start = std::chrono::steady_clock::now();
  auto r = post(gateway.port(), "/v1/chat/completions", chat("c", "hi", 4));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "cloud");
  EXPECT_EQ(fault.requests_for("fault-429-x1"), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(900));  // Retry-After: 1
}

TEST(GatewayFaultTest, ServerErrorAndResetAreRetried) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      with_upstreams(upstream_yaml("a", fault.base_url(), "c5", "fault-500-x1") +
                     upstream_yaml("b", fault.base_url(), "cr", "fault-reset-x1")));
  EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", chat("c5", "hi", 4)).status, 200);
  EXPECT_EQ(fault.requests_for("fault-500-x1"), 2);
  EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", chat("cr", "hi", 4)).status, 200);
  EXPECT_EQ(fault.requests_for("fault-reset-x1"), 2);
}

TEST(GatewayFaultTest, OrderedFallbackAcrossUpstreams) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      with_upstreams(upstream_yaml("broken", fault.base_url(), "c", "fault-500") +
                     upstream_yaml("healthy", fault.base_url(), "c", "fault-ok")));
  auto r = post(gateway.port(), "/v1/chat/completions", chat("c", "hi", 4));
  ASSERT_EQ(r.status, 200) << r.body;
  const json t = r.json_body()["tandem"];
  EXPECT_EQ(t["models"]["cloud"]["upstream"], "healthy");
  ASSERT_EQ(t["fallbacks"].size(), 1U);
  EXPECT_EQ(t["fallbacks"][0]["from"], "cloud:broken");
  EXPECT_EQ(t["fallbacks"][0]["to"], "cloud:healthy");
  EXPECT_EQ(fault.requests_for("fault-500"), 2);  // one retry, then the next upstream
}

TEST(GatewayFaultTest, CloudFailureFallsBackToTheEdgeAndSaysSo) {
  FaultUpstream fault;
  GatewayUnderTest gateway(with_upstreams(
      upstream_yaml("hang", fault.base_url(), "h", "fault-hang", "", kQuickFirstByte) +
      upstream_yaml("html", fault.base_url(), "w", "fault-wrong-content-type")));
  for (const char* model : {"h", "w"}) {
    auto r = post(gateway.port(), "/v1/chat/completions", chat(model, "Once upon a time", 8));
    ASSERT_EQ(r.status, 200) << model << ": " << r.body;
    EXPECT_EQ(r.headers["X-Tandem-Tier"], "edge");
    const json t = r.json_body()["tandem"];
    EXPECT_EQ(t["tier"], "edge");
    ASSERT_FALSE(t["degraded"].is_null()) << model;
    EXPECT_NE(t["degraded"]["reason"].get<std::string>().find("cloud tier is unavailable"),
              std::string::npos);
    EXPECT_EQ(t["fallbacks"][0]["to"], "edge");
  }
}

TEST(GatewayFaultTest, NoFallbackToEdgeWhenPolicyForbidsIt) {
  FaultUpstream fault;
  GatewayUnderTest gateway(with_upstreams(upstream_yaml("f", fault.base_url(), "c", "fault-503"),
                                          "routing:\n  cloud_to_edge: false\n"));
  auto r = post(gateway.port(), "/v1/chat/completions", chat("c", "hi", 4));
  EXPECT_EQ(r.status, 502);
  EXPECT_NE(r.json_body()["error"]["message"].get<std::string>().find("503"), std::string::npos);
}

TEST(GatewayFaultTest, FailuresAfterTheFirstByteEndTheStreamWithAnError) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      with_upstreams(upstream_yaml("reset", fault.base_url(), "r", "fault-reset-mid-stream") +
                     upstream_yaml("garbled", fault.base_url(), "g", "fault-malformed-sse")));
  for (const char* model : {"r", "g"}) {
    auto s = post(gateway.port(), "/v1/chat/completions", chat(model, "hi", 8, true));
    ASSERT_EQ(s.status, 200) << model;
    EXPECT_EQ(s.headers["X-Tandem-Tier"], "cloud");
    const auto events = s.events();
    ASSERT_GE(events.size(), 3U) << s.body;
    EXPECT_TRUE(json::parse(events[0]).contains("choices"));  // content reached the client
    const json error = json::parse(events[events.size() - 2]);
    ASSERT_TRUE(error.contains("error")) << s.body;
    EXPECT_EQ(error["tandem"]["tier"], "cloud");
    EXPECT_EQ(events.back(), "[DONE]");
  }
}

TEST(GatewayFaultTest, OversizedResponsesAreCut) {
  FaultUpstream fault;
  GatewayUnderTest gateway(with_upstreams(upstream_yaml(
      "big", fault.base_url(), "b", "fault-oversized", "      max_response_bytes: 1048576\n")));
  // Streaming: content reached the client before the limit, so the stream ends in an error.
  auto s = post(gateway.port(), "/v1/chat/completions", chat("b", "hi", 4, true));
  ASSERT_EQ(s.status, 200);
  EXPECT_NE(s.body.find("exceeds 1048576 bytes"), std::string::npos) << s.body.substr(0, 300);
  // Not streaming: nothing was sent yet, so the edge answers instead, and says why.
  auto r = post(gateway.port(), "/v1/chat/completions", chat("b", "Once upon a time", 4));
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "edge");
  EXPECT_NE(r.body.find("exceeds 1048576 bytes"), std::string::npos) << r.body.substr(0, 300);
}

TEST(GatewayFaultTest, CircuitOpensAfterRepeatedFailuresAndShowsInHealth) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      with_upstreams(upstream_yaml("flaky", fault.base_url(), "c", "fault-500",
                                   "      circuit: {failure_threshold: 2, cooldown_ms: 60000}\n")));
  post(gateway.port(), "/v1/chat/completions", chat("c", "hi", 2));  // 2 attempts: opens
  const json health = gateway.health();
  EXPECT_EQ(health["cloud"]["upstreams"][0]["circuit"], "open");
  const int before = fault.requests_for("fault-500");
  auto r = post(gateway.port(), "/v1/chat/completions", chat("c", "Once upon a time", 4));
  ASSERT_EQ(r.status, 200);  // answered by the edge without touching the upstream
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "edge");
  EXPECT_NE(r.body.find("cooling down"), std::string::npos);
  EXPECT_EQ(fault.requests_for("fault-500"), before);
  EXPECT_EQ(r.json_body()["tandem"]["data_left_device"], false) << "the open circuit sent nothing";
}

TEST(GatewayFaultTest, OfflineUpstreamIsProbedAndSkipped) {
  const uint16_t dead = free_port();  // nothing listens here
  GatewayUnderTest gateway(
      with_upstreams("    - name: gone\n      base_url: http://127.0.0.1:" + std::to_string(dead) +
                     "/v1\n      models: {c: c}\n      health: {interval_ms: 50, timeout_ms: 200}\n"
                     "      retry: {max_retries: 0}\n"));
  ASSERT_TRUE(
      eventually([&] { return !gateway.health()["cloud"]["upstreams"][0]["online"].get<bool>(); }));
  auto r = post(gateway.port(), "/v1/chat/completions", chat("c", "Once upon a time", 4));
  ASSERT_EQ(r.status, 200);
  const json t = r.json_body()["tandem"];
  EXPECT_EQ(t["tier"], "edge");
  EXPECT_FALSE(t["degraded"].is_null());
  EXPECT_FALSE(gateway.health()["cloud"]["online"].get<bool>());
}

TEST(GatewayFaultTest, EdgeFailureGoesToTheCloud) {
  FaultUpstream fault;
  // A context of 64 tokens: a long prompt overflows the edge and goes to the cloud.
  GatewayUnderTest gateway("edge:\n  context: 64\n" +
                           with_upstreams(upstream_yaml("f", fault.base_url(), "c", "fault-ok")));
  std::string long_prompt;
  for (int i = 0; i < 60; ++i) {
    long_prompt += "the big dog ran ";
  }
  auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", long_prompt, 4));
  ASSERT_EQ(r.status, 200) << r.body;
  const json t = r.json_body()["tandem"];
  EXPECT_EQ(t["tier"], "cloud");
  EXPECT_EQ(t["fallbacks"][0]["from"], "edge");
  EXPECT_NE(
      t["fallbacks"][0]["reason"].get<std::string>().find("tokens but a sequence holds at most"),
      std::string::npos)
      << t.dump();
}

TEST(GatewayFaultTest, EdgeThatFailedToLoadLeavesTheCloudServing) {
  FaultUpstream fault;
  GatewayUnderTest gateway(with_upstreams(upstream_yaml("f", fault.base_url(), "c", "fault-ok")),
                           /*with_edge=*/false);
  auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", "hi", 4));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "cloud");
  EXPECT_FALSE(gateway.health()["edge"]["loaded"].get<bool>());
}

TEST(GatewayFaultTest, ClientDisconnectCancelsTheUpstreamRequest) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      with_upstreams(upstream_yaml("slow", fault.base_url(), "s", "fault-slow-100")));
  {
    asio::io_context ioc;
    net::tcp::socket socket(ioc);
    socket.connect(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), gateway.port()));
    // 2,000 pieces at 100 ms: left alone the stream would run until total_ms (60 s), far past
    // the waits below, so only a cancel can end it in time.
    const std::string req = raw_chat_request(chat("s", "hi", 2000, true));
    asio::write(socket, asio::buffer(req));
    char buf[512];
    socket.read_some(asio::buffer(buf));  // the stream has started
    ASSERT_TRUE(eventually([&] { return fault.stats()["active_streams"].get<int>() == 1; }));
  }  // the client goes away mid-stream
  // A cancel takes well under a second; the default 20 s wait is reached only if none came.
  EXPECT_TRUE(eventually([&] { return fault.stats()["active_streams"].get<int>() == 0; }));
  EXPECT_TRUE(eventually([&] { return fault.stats()["open_connections"].get<int>() == 0; }));
}

// Found by bench/soak.sh: a client that left while the upstream had not answered yet held the
// upstream connection (and, on a real cloud, a billed generation) until first_byte_ms.
TEST(GatewayFaultTest, ClientDisconnectBeforeTheFirstByteCancelsTheUpstreamRequest) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      with_upstreams("    - name: hang\n      base_url: " + fault.base_url() +
                     "\n      models: {h: fault-hang}\n"
                     // Without a cancel the connection would be held this long: far past the
                     // 20 s wait below, which a cancel (well under a second) never uses up.
                     "      timeouts: {first_byte_ms: 120000, total_ms: 240000}\n"
                     "      retry: {max_retries: 0}\n      health: {interval_ms: 0}\n"));
  for (const bool stream : {false, true}) {
    {
      asio::io_context ioc;
      net::tcp::socket socket(ioc);
      socket.connect(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), gateway.port()));
      const std::string req = raw_chat_request(chat("h", "hi", 8, stream));
      asio::write(socket, asio::buffer(req));
      ASSERT_TRUE(eventually([&] { return fault.stats()["open_connections"].get<int>() == 1; }));
    }  // the client goes away while the upstream hangs
    EXPECT_TRUE(eventually([&] { return fault.stats()["open_connections"].get<int>() == 0; }))
        << (stream ? "streaming" : "non-streaming");
  }
}

// Found by review: nothing bounded the write of an answer, so a client that sent a request and
// then stopped reading held its connection, and the answer's memory, for as long as it stayed.
TEST(GatewayFaultTest, AClientThatStopsReadingIsDroppedAfterTheWriteTimeout) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      "server:\n  write_timeout_ms: 300\n" +
          with_upstreams(upstream_yaml("f", fault.base_url(), "c", "fault-oversized",
                                       "      max_response_bytes: 104857600\n")),
      /*with_edge=*/false);
  for (const bool stream : {false, true}) {
    const std::string mode = stream ? "streaming" : "non-streaming";
    asio::io_context ioc;
    net::tcp::socket socket(ioc);
    socket.open(net::tcp::v4());
    // A small window; the answer (64 MiB) is far larger than what the kernel buffers on both
    // sides hold (the gateway's send buffer grows to 4 MiB by default).
    socket.set_option(asio::socket_base::receive_buffer_size(4096));
    socket.connect(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), gateway.port()));
    const std::string req = raw_chat_request(chat("c", "hi", 4, stream));
    asio::write(socket, asio::buffer(req));
    // The answer has begun to arrive; then the client reads nothing for far past 300 ms.
    ASSERT_TRUE(eventually([&] { return socket.available() > 0; })) << mode;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    // What is left in the buffers comes, then the end, well before the 30 s idle timeout. A
    // gateway still waiting to write would send the whole answer now and keep the connection.
    const int fd = socket.native_handle();
    std::string head;
    size_t received = 0;
    bool closed = false;
    std::array<char, 65536> buffer{};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!closed && std::chrono::steady_clock::now() < deadline) {
      pollfd readable{fd, POLLIN, 0};
      if (::poll(&readable, 1, 100) <= 0) {
        continue;
      }
      const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
      closed = n <= 0;
      if (n > 0) {
        received += static_cast<size_t>(n);
        head.append(buffer.data(), std::min<size_t>(static_cast<size_t>(n), 64 - head.size()));
      }
    }
    EXPECT_TRUE(head.starts_with("HTTP/1.1 200")) << mode << ": " << head;
    EXPECT_TRUE(closed) << mode << ": still open after " << received << " bytes";
    EXPECT_LT(received, size_t{16} << 20) << mode;
  }
  // The gateway still serves.
  EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", chat("c", "hi", 4)).status, 200);
}

TEST(GatewayFaultTest, GracefulShutdownFinishesInFlightStreams) {
  FaultUpstream fault;
  auto gateway = std::make_unique<GatewayUnderTest>(
      with_upstreams(upstream_yaml("slow", fault.base_url(), "s", "fault-slow-50")));
  const uint16_t port = gateway->port();
  std::thread client([&] {
    auto r = post(port, "/v1/chat/completions", chat("s", "hi", 20, true));
    EXPECT_EQ(r.status, 200);
    const auto events = r.events();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back(), "[DONE]");  // completed, not cut
    EXPECT_EQ(events.size(), 20U + 2U);  // the pieces, the finish chunk (with tandem), [DONE]
  });
  ASSERT_TRUE(eventually([&] { return fault.stats()["active_streams"].get<int>() == 1; }));
  gateway->server().shutdown();
  // New connections are refused while the stream finishes.
  EXPECT_TRUE(eventually([&] { return request(port, "GET", "/health").status == 0; }));
  client.join();
  gateway.reset();
}

// HTTP clients keep connections open between requests. One still idle at shutdown must not keep
// the server's state alive, nor with it the gateway (whose trace writer writes what is queued
// when it goes): it once did, in a cycle that LeakSanitizer found.
TEST(GatewayShutdownTest, AnIdleKeepAliveConnectionDoesNotKeepTheGatewayAlive) {
  auto config = config::parse_config("", "test.yaml");
  ASSERT_TRUE(config) << config.error().message;
  config->server.port = 0;
  auto made =
      server::Gateway::create(std::move(config).value(), nullptr, "not loaded in this test");
  ASSERT_TRUE(made) << made.error().message;
  const std::weak_ptr<server::Gateway> watched = *made;
  auto server = server::HttpServer::create(std::move(made).value()).value();
  std::thread thread([&] { server->run(); });

  asio::io_context ioc;
  net::beast::tcp_stream stream(ioc);
  stream.connect(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), server->port()));
  http::request<http::string_body> req{http::verb::get, "/v1/models", 11};
  req.set(http::field::host, "127.0.0.1");
  req.keep_alive(true);
  http::write(stream, req);
  net::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  ASSERT_TRUE(res.keep_alive()) << res.result_int() << " " << res.body();

  server->shutdown();
  thread.join();
  server.reset();
  EXPECT_TRUE(watched.expired()) << "the gateway outlived its HTTP server";
}

}  // namespace
}  // namespace tandem::test

namespace tandem::test {
namespace {

// TLS to an upstream: a certificate the configured CA signed is accepted, one nobody vouches
// for is refused, and the refusal names the cause.
TEST(GatewayTlsTest, UpstreamCertificatesAreVerified) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tandem-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cert = (dir / "cert.pem").string();
  const std::string key = (dir / "key.pem").string();
  const std::string make_cert =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext "
      "subjectAltName=IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " 2>/dev/null";
  ASSERT_EQ(std::system(make_cert.c_str()), 0);
  const uint16_t port = free_port();
  ChildProcess tls_server({"/usr/bin/openssl", "s_server", "-cert", cert, "-key", key, "-accept",
                           std::to_string(port), "-www", "-quiet"});
  ASSERT_TRUE(eventually([&] {
    asio::io_context ioc;
    net::tcp::socket socket(ioc);
    boost::system::error_code ec;
    socket.connect(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
    return !ec;
  }));
  const std::string upstream =
      "    - name: tls\n      base_url: https://127.0.0.1:" + std::to_string(port) +
      "/v1\n      models: {c: c}\n      health: {interval_ms: 100, "
      "timeout_ms: 2000}\n";
  {
    GatewayUnderTest trusting(with_upstreams(upstream + "      tls: {ca_file: " + cert + "}\n"));
    EXPECT_TRUE(eventually([&] {
      const json u = trusting.health()["cloud"]["upstreams"][0];
      return u["online"].get<bool>() && u["last_error"].is_null();
    })) << trusting.health().dump();
  }
  {
    GatewayUnderTest suspicious(with_upstreams(upstream));  // system trust store only
    EXPECT_TRUE(eventually([&] {
      const json u = suspicious.health()["cloud"]["upstreams"][0];
      return !u["online"].get<bool>() && u["last_error"].is_string() &&
             u["last_error"].get<std::string>().find("certificate verify failed") !=
                 std::string::npos;
    })) << suspicious.health().dump();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tandem::test

namespace tandem::test {
namespace {

TEST(GatewayPoolTest, UpstreamConnectionsAreReused) {
  FaultUpstream fault;
  GatewayUnderTest gateway(with_upstreams(upstream_yaml("f", fault.base_url(), "c", "fault-ok")));
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(post(gateway.port(), "/v1/chat/completions", chat("c", "hi", 4, i % 2 == 0)).status,
              200);
  }
  // Sequential requests, streaming or not, share one kept-alive connection per I/O thread
  // (server.threads: 2 by default; each new client connection goes to the next thread, so
  // both threads served some of the five).
  EXPECT_TRUE(eventually([&] { return fault.stats()["open_connections"].get<int>() == 2; }))
      << fault.stats().dump();
}

}  // namespace
}  // namespace tandem::test
