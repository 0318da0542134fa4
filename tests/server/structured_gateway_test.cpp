// Tool calls and structured output answered by the edge, end to end on loopback with the
// shipped model (no chat template: the generic tool format and schema grammars) and with a
// cloud configured (a private request with tools stays on the device).

#include <gtest/gtest.h>

#include "../support/test_models.h"
#include "engine/engine.h"
#include "test_harness.h"

namespace tandem::test {
namespace {

const json kWeatherTool = json::parse(R"({"type":"function","function":{"name":"get_weather",
  "description":"Current weather of a city","parameters":{"type":"object","properties":
  {"city":{"type":"string","maxLength":20}},"required":["city"],"additionalProperties":false}}})");

json tool_request(const std::string& content, bool stream = false) {
  json req = chat("tandem", content, 120, stream);
  req["tools"] = json::array({kWeatherTool});
  req["tool_choice"] = "required";
  req["temperature"] = 0;
  return req;
}

void expect_weather_arguments(const std::string& arguments) {
  const json parsed = json::parse(arguments, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << arguments;
  EXPECT_TRUE(parsed["city"].is_string()) << arguments;
  EXPECT_EQ(parsed.size(), 1U) << arguments;
}

TEST(StructuredGatewayTest, TheEdgeAnswersARequiredToolCall) {
  GatewayUnderTest gateway("");
  auto r = post(gateway.port(), "/v1/chat/completions", tool_request("Weather in Paris?"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.json_body();
  const json& choice = body["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_TRUE(choice["message"]["content"].is_null()) << choice;
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1U) << choice;
  const json& call = choice["message"]["tool_calls"][0];
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["id"].get<std::string>().rfind("call_", 0), 0U);
  EXPECT_EQ(call["function"]["name"], "get_weather");
  expect_weather_arguments(call["function"]["arguments"].get<std::string>());
  EXPECT_EQ(body["tandem"]["tier"], "edge");
}

TEST(StructuredGatewayTest, AStreamedToolCallArrivesAsToolCallDeltas) {
  GatewayUnderTest gateway("");
  auto r = post(gateway.port(), "/v1/chat/completions", tool_request("Weather in Oslo?", true));
  ASSERT_EQ(r.status, 200) << r.body;
  std::string id;
  std::string name;
  std::string arguments;
  std::string finish;
  for (const auto& event : r.events()) {
    if (event == "[DONE]") {
      continue;
    }
    const json chunk = json::parse(event);
    if (!chunk.contains("choices") || chunk["choices"].empty()) {
      continue;
    }
    const json& choice = chunk["choices"][0];
    if (choice["finish_reason"].is_string()) {
      finish = choice["finish_reason"];
    }
    for (const auto& delta : choice["delta"].value("tool_calls", json::array())) {
      EXPECT_EQ(delta["index"], 0);
      if (delta.contains("id")) {
        EXPECT_TRUE(id.empty()) << "the id is sent once";
        id = delta["id"];
        EXPECT_EQ(delta["type"], "function");
        name = delta["function"]["name"];
      }
      arguments += delta["function"].value("arguments", "");
    }
  }
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(id.rfind("call_", 0), 0U);
  EXPECT_EQ(name, "get_weather");
  expect_weather_arguments(arguments);
}

TEST(StructuredGatewayTest, AToolResultInTheHistoryIsAnswered) {
  GatewayUnderTest gateway("");
  json req = chat("tandem", "Weather in Paris?", 24);
  req["tools"] = json::array({kWeatherTool});
  req["messages"].push_back(
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        {{{"id", "call_1"},
          {"type", "function"},
          {"function", {{"name", "get_weather"}, {"arguments", R"({"city":"Paris"})"}}}}}}});
  req["messages"].push_back(
      {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "18 C and sunny"}});
  auto r = post(gateway.port(), "/v1/chat/completions", req);
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.json_body();
  const json& message = body["choices"][0]["message"];
  EXPECT_TRUE(message["content"].is_string() || message.contains("tool_calls")) << message;
}

TEST(StructuredGatewayTest, AJsonSchemaAnswerIsSchemaShaped) {
  GatewayUnderTest gateway("");
  json req = chat("tandem", "A person, please.", 200);
  req["response_format"] = {
      {"type", "json_schema"},
      {"json_schema",
       {{"name", "person"},
        {"strict", true},
        {"schema",
         {{"type", "object"},
          {"properties",
           {{"name", {{"type", "string"}, {"maxLength", 16}}}, {"age", {{"type", "integer"}}}}},
          {"required", {"name", "age"}},
          {"additionalProperties", false}}}}}};
  auto r = post(gateway.port(), "/v1/chat/completions", req);
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.json_body();
  const json& choice = body["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "stop") << choice;
  const json value = json::parse(choice["message"]["content"].get<std::string>(), nullptr, false);
  ASSERT_TRUE(value.is_object()) << choice;
  EXPECT_TRUE(value["name"].is_string());
  EXPECT_TRUE(value["age"].is_number_integer());
}

TEST(StructuredGatewayTest, ASchemaTheEdgeCannotConvertIsA400NamingResponseFormat) {
  GatewayUnderTest gateway("");
  json req = chat("tandem", "x", 8);
  req["response_format"] = {
      {"type", "json_schema"},
      {"json_schema", {{"name", "bad"}, {"schema", {{"$ref", "#/definitions/missing"}}}}}};
  auto r = post(gateway.port(), "/v1/chat/completions", req);
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json_body()["error"]["param"], "response_format") << r.body;
}

// Before, tools were cloud-only: a private request with tools was refused (it could not leave
// the device, and the edge could not serve tools). Now the edge serves it.
TEST(StructuredGatewayTest, APrivateRequestWithToolsIsAnsweredOnTheEdge) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      "cloud:\n  upstreams:\n    - name: cloud\n      base_url: " + fault.base_url() +
      "\n      models: {big: fault-ok}\n      retry: {max_retries: 0}\n"
      "      health: {interval_ms: 0}\n");
  auto r = post(gateway.port(), "/v1/chat/completions",
                tool_request("Email jane.doe@example.com the weather in Paris"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.json_body();
  EXPECT_EQ(body["tandem"]["tier"], "edge");
  EXPECT_EQ(body["tandem"]["data_left_device"], false);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(body["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_weather");
}

// The edge renders a chat exactly as llama-server does for the same model and messages: both
// run llama.cpp's Jinja engine on the model's own template (Qwen 3 and Hermes 3 with tools,
// Llama 3.2 without: llama.cpp has no tool format for it and the edge uses its generic one).
TEST(StructuredGatewayTest, TheEdgeRendersChatsAsLlamaServerDoes) {
  const json history = json::parse(R"([
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "18 C"},
    {"role": "user", "content": "And in Oslo?"}])");
  for (const auto& [file, with_tools] : std::vector<std::pair<std::string, bool>>{
           {"qwen3-tiny.gguf", true}, {"hermes3-tiny.gguf", true}, {"llama3-tiny.gguf", false}}) {
    const std::string model = derived_model(file);
    ASSERT_FALSE(model.empty());
    json body = {{"messages", with_tools ? history : json::array({history[0], history[1]})}};
    if (with_tools) {
      body["tools"] = json::array({kWeatherTool});
    }
    std::string theirs;
    {
      LlamaServer server(model, {"--jinja"});
      ASSERT_TRUE(server.ready()) << file;
      auto r = post(server.port(), "/apply-template", body);
      ASSERT_EQ(r.status, 200) << file << ": " << r.body;
      theirs = r.json_body()["prompt"].get<std::string>();
    }
    engine::EngineOptions options;
    options.model_path = model;
    options.max_sequences = 1;
    options.context_per_sequence = 1024;
    options.threads = 1;
    auto engine = engine::Engine::open(options);
    ASSERT_TRUE(engine.ok()) << engine.error().message;
    auto parsed =
        server::parse_completion_request(json{{"model", "tandem"},
                                              {"messages", body["messages"]},
                                              {"tools", body.value("tools", json::array())}}
                                             .dump(),
                                         upstream::ApiKind::kChat, 16);
    ASSERT_TRUE(std::holds_alternative<server::CompletionRequest>(parsed)) << file;
    auto ours =
        engine.value()->format_chat(std::get<server::CompletionRequest>(parsed).chat_request());
    ASSERT_TRUE(ours.ok()) << file << ": " << ours.error().message;
    EXPECT_NE(theirs.find("Weather in Paris?"), std::string::npos) << file << ": " << theirs;
    EXPECT_EQ(ours->prompt, theirs) << file;
  }
}

}  // namespace
}  // namespace tandem::test
