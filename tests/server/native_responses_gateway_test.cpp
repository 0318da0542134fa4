// POST /v1/responses against an upstream that speaks the Responses API (`api: responses`), end
// to end on loopback (tests/support/fault_upstream serves POST /v1/responses): the client's body
// goes out as it came — built-in tools included, the model renamed, store false, a Tandem
// previous_response_id expanded into input items — through the egress guard and its audit; the
// upstream's output items come back under Tandem's response id with the decision record, whole
// or as the upstream's own events renumbered; malformed replies (cases in
// cases/native_responses_malformed.jsonl) end in the documented errors.

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_harness.h"

namespace tandem::test {
namespace {

constexpr const char* kSettings =
    "      timeouts: {connect_ms: 5000, first_byte_ms: 30000, idle_ms: 30000, total_ms: 60000}\n"
    "      retry: {max_retries: 1, base_backoff_ms: 1, max_backoff_ms: 2}\n"
    "      circuit: {failure_threshold: 100}\n"
    "      health: {interval_ms: 0}\n"
    "      prices: {input_per_million: 100, output_per_million: 200}\n";

// An upstream entry; `api` "responses" or "chat"; `models` the YAML map's inside.
std::string upstream(const std::string& name, const FaultUpstream& fault, const std::string& api,
                     const std::string& models) {
  return "    - name: " + name + "\n      base_url: " + fault.base_url() + "\n      api: " + api +
         "\n      models: {" + models + "}\n" + kSettings;
}

// A native upstream `n` serving `gpt` as `upstream_model`, a chat upstream `c` serving `chat`.
std::string yaml(const FaultUpstream& fault, const std::string& upstream_model = "fault-ok") {
  return "cloud:\n  upstreams:\n" + upstream("n", fault, "responses", "gpt: " + upstream_model) +
         upstream("c", fault, "chat", "chat: fault-ok");
}

// The bodies the upstream received on `path`, oldest first.
std::vector<json> received(const FaultUpstream& fault, const std::string& path) {
  const json recorded = request(fault.port(), "GET", "/control/bodies").json_body();
  std::vector<json> bodies;
  for (const auto& b : recorded["bodies"]) {
    if (b["path"] == path) {
      bodies.push_back(json::parse(b["body"].get<std::string>()));
    }
  }
  return bodies;
}

json web_search_request(const std::string& model, const json& input, bool stream = false) {
  return {{"model", model},
          {"input", input},
          {"tools", json::array({{{"type", "web_search"}}})},
          {"metadata", {{"ticket", "T-1"}}},
          {"stream", stream}};
}

// The events of a Responses stream, each checked to name its type on its `event:` line.
std::vector<json> stream_events(const HttpResult& r) {
  std::vector<json> events;
  size_t at = 0;
  while ((at = r.body.find("event: ", at)) != std::string::npos) {
    const size_t line_end = r.body.find('\n', at);
    const std::string type = r.body.substr(at + 7, line_end - at - 7);
    const size_t data = r.body.find("data: ", line_end);
    const size_t end = r.body.find("\n\n", data);
    json event = json::parse(r.body.substr(data + 6, end - data - 6), nullptr, false);
    EXPECT_EQ(event.value("type", ""), type) << r.body;
    events.push_back(std::move(event));
    at = end;
  }
  return events;
}

TEST(NativeResponsesTest, TheClientsBodyGoesOutAsItCameAndTheOutputItemsComeBack) {
  FaultUpstream fault;
  GatewayUnderTest gateway(yaml(fault), /*with_edge=*/false);
  auto r = post(gateway.port(), "/v1/responses", web_search_request("gpt", "Find the news", false));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["X-Tandem-Tier"], "cloud");
  const json body = r.json_body();
  const std::string id = body["id"].get<std::string>();
  EXPECT_EQ(id.rfind("resp_", 0), 0U);
  EXPECT_EQ(id.find("fault"), std::string::npos) << "Tandem's id, not the upstream's";
  EXPECT_EQ(body["model"], "gpt");  // as the client named it
  EXPECT_EQ(body["status"], "completed");
  EXPECT_EQ(body["store"], true);  // Tandem keeps it
  ASSERT_EQ(body["output"].size(), 2U) << body;
  EXPECT_EQ(body["output"][0]["type"], "web_search_call");
  EXPECT_EQ(body["output"][0]["action"]["query"], "Find the news");
  EXPECT_EQ(body["output"][1]["type"], "message");
  EXPECT_EQ(body["output"][1]["content"][0]["text"], "Hello from the fault upstream . Hello from");
  EXPECT_EQ(body["output"][1]["content"][0]["annotations"][0]["type"], "url_citation");
  EXPECT_EQ(body["usage"]["input_tokens"], 3);
  EXPECT_EQ(body["usage"]["output_tokens"], 8);
  EXPECT_EQ(body["metadata"]["ticket"], "T-1");
  const json& tandem = body["tandem"];
  EXPECT_EQ(tandem["tier"], "cloud");
  EXPECT_EQ(tandem["models"]["cloud"]["upstream"], "n");
  EXPECT_EQ(tandem["usage"]["cloud"]["prompt_tokens"], 3);
  EXPECT_EQ(tandem["usage"]["cloud"]["completion_tokens"], 8);
  EXPECT_NEAR(tandem["cost_usd"]["cloud"].get<double>(), (3 * 100 + 8 * 200) / 1e6, 1e-12);
  EXPECT_EQ(tandem["data_left_device"], true);

  // The upstream got the client's Responses body, the model renamed and store false.
  const auto bodies = received(fault, "/v1/responses");
  ASSERT_EQ(bodies.size(), 1U);
  EXPECT_EQ(bodies[0]["model"], "fault-ok");
  EXPECT_EQ(bodies[0]["input"], "Find the news");
  EXPECT_EQ(bodies[0]["tools"], json::parse(R"([{"type": "web_search"}])"));
  EXPECT_EQ(bodies[0]["metadata"]["ticket"], "T-1");
  EXPECT_EQ(bodies[0]["store"], false);
  EXPECT_EQ(bodies[0]["stream"], false);
  EXPECT_TRUE(received(fault, "/v1/chat/completions").empty());

  // Through the egress guard: its audit row, as an answer sent to `n`.
  const json audit = request(gateway.port(), "GET", "/v1/tandem/audit").json_body();
  ASSERT_EQ(audit["data"].size(), 1U) << audit;
  EXPECT_EQ(audit["data"][0]["purpose"], "answer");
  EXPECT_EQ(audit["data"][0]["upstream"], "n");
  EXPECT_EQ(audit["data"][0]["model"], "fault-ok");
  const auto& registry = gateway.gateway().stats().registry();
  EXPECT_NEAR(registry.value("tandem_cost_usd_total", {{"tier", "cloud"}}).value_or(0.0),
              (3 * 100 + 8 * 200) / 1e6, 1e-12);
}

TEST(NativeResponsesTest, AStreamIsTheUpstreamsEventsUnderTandemsIdNumberedInOrder) {
  FaultUpstream fault;
  GatewayUnderTest gateway(yaml(fault), /*with_edge=*/false);
  auto r = post(gateway.port(), "/v1/responses", web_search_request("gpt", "Find it", true));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["X-Tandem-Tier"], "cloud");
  const std::vector<json> events = stream_events(r);
  ASSERT_GE(events.size(), 10U) << r.body;
  std::vector<std::string> types;
  std::set<std::string> ids;
  std::string text;
  for (size_t i = 0; i < events.size(); ++i) {
    types.push_back(events[i]["type"].get<std::string>());
    EXPECT_EQ(events[i]["sequence_number"], i);
    if (events[i].contains("response")) {
      ids.insert(events[i]["response"]["id"].get<std::string>());
      EXPECT_EQ(events[i]["response"]["model"], "gpt");
    }
    if (types.back() == "response.output_text.delta") {
      text += events[i]["delta"].get<std::string>();
    }
  }
  EXPECT_EQ(types.front(), "response.created");
  EXPECT_EQ(types[1], "response.in_progress");
  EXPECT_EQ(types[3], "response.web_search_call.in_progress");  // relayed as the upstream sent
  EXPECT_EQ(types.back(), "response.completed");
  ASSERT_EQ(ids.size(), 1U) << "one response id throughout";
  EXPECT_EQ(ids.begin()->find("fault"), std::string::npos);
  EXPECT_EQ(events[0]["response"]["tandem"]["tier"], "cloud");
  const json& final_response = events.back()["response"];
  EXPECT_EQ(final_response["output"][1]["content"][0]["text"], text);
  EXPECT_EQ(final_response["output"][0]["id"].get<std::string>().rfind("ws_", 0), 0U);
  EXPECT_EQ(final_response["tandem"]["usage"]["cloud"]["completion_tokens"], 8);
  EXPECT_EQ(received(fault, "/v1/responses").at(0)["stream"], true);

  // Kept like any other (once the stream has ended): GET returns the final Response.
  HttpResult stored;
  EXPECT_TRUE(eventually([&] {
    stored = request(gateway.port(), "GET", "/v1/responses/" + *ids.begin());
    return stored.status == 200;
  })) << stored.body;
  EXPECT_EQ(stored.json_body()["output"], final_response["output"]);
  EXPECT_FALSE(stored.json_body().contains("tandem"));
}

TEST(NativeResponsesTest, PreviousResponseIdIsExpandedIntoInputItemsNotForwarded) {
  FaultUpstream fault;
  GatewayUnderTest gateway(yaml(fault), /*with_edge=*/false);
  auto first = post(gateway.port(), "/v1/responses", web_search_request("gpt", "Find the news"));
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string first_id = first.json_body()["id"].get<std::string>();
  json next = web_search_request("gpt", "And then?");
  next["previous_response_id"] = first_id;
  auto second = post(gateway.port(), "/v1/responses", next);
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(second.json_body()["previous_response_id"], first_id);

  const auto bodies = received(fault, "/v1/responses");
  ASSERT_EQ(bodies.size(), 2U);
  const json& sent = bodies[1];
  EXPECT_FALSE(sent.contains("previous_response_id")) << sent;
  EXPECT_EQ(sent["store"], false);
  const json& input = sent["input"];
  ASSERT_EQ(input.size(), 4U) << input;
  EXPECT_EQ(input[0], json::parse(R"({"type": "message", "role": "user",
                                      "content": "Find the news"})"));
  EXPECT_EQ(input[1]["type"], "web_search_call");  // kept as the upstream sent it
  EXPECT_EQ(input[1]["id"], first.json_body()["output"][0]["id"]);
  EXPECT_EQ(input[2], json::parse(R"({"type": "message", "role": "assistant",
                                      "content": "Hello from the fault upstream . Hello from"})"));
  EXPECT_EQ(input[3], json::parse(R"({"role": "user", "content": "And then?"})"));

  // The same conversation continued by a chat upstream leaves the built-in tool's items out.
  json in_chat = {{"model", "chat"}, {"input", "Go on."}, {"previous_response_id", first_id}};
  auto third = post(gateway.port(), "/v1/responses", in_chat);
  ASSERT_EQ(third.status, 200) << third.body;
  const auto chats = received(fault, "/v1/chat/completions");
  ASSERT_EQ(chats.size(), 1U);
  EXPECT_EQ(chats[0]["messages"].size(), 3U) << chats[0];
  EXPECT_EQ(chats[0]["messages"][1]["role"], "assistant");
}

TEST(NativeResponsesTest, FunctionCallsOfANativeAnswerAreKeptForTheNextTurn) {
  FaultUpstream fault;
  GatewayUnderTest gateway(yaml(fault, "fault-tool-calls"), /*with_edge=*/false);
  json ask = {{"model", "gpt"},
              {"input", "Weather in Paris?"},
              {"tools", json::parse(R"([{"type": "function", "name": "get_weather",
                                         "parameters": {"type": "object"}}])")}};
  auto first = post(gateway.port(), "/v1/responses", ask);
  ASSERT_EQ(first.status, 200) << first.body;
  const json call = first.json_body()["output"][0];
  EXPECT_EQ(call["type"], "function_call");
  EXPECT_EQ(call["call_id"], "call_fault_0");
  json answer = ask;
  answer["previous_response_id"] = first.json_body()["id"];
  answer["input"] = json::array(
      {{{"type", "function_call_output"}, {"call_id", "call_fault_0"}, {"output", "21 C"}}});
  auto second = post(gateway.port(), "/v1/responses", answer);
  ASSERT_EQ(second.status, 200) << second.body;
  const json input = received(fault, "/v1/responses").at(1)["input"];
  ASSERT_EQ(input.size(), 3U) << input;
  EXPECT_EQ(input[1], json::parse(R"({"type": "function_call", "call_id": "call_fault_0",
                                      "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"})"));
  EXPECT_EQ(input[2]["type"], "function_call_output");
}

TEST(NativeResponsesTest, BuiltInToolsNeedAModelOfANativeUpstream) {
  FaultUpstream fault;
  GatewayUnderTest gateway(yaml(fault), /*with_edge=*/false);
  for (const char* model : {"tandem", "chat"}) {
    auto r = post(gateway.port(), "/v1/responses", web_search_request(model, "Find it"));
    ASSERT_EQ(r.status, 400) << model << ": " << r.body;
    EXPECT_EQ(r.json_body()["error"]["param"], "tools[0].type") << r.body;
  }
  // A built-in tool's item in the input is refused as well where only chat could answer.
  json replayed = {{"model", "chat"},
                   {"input", json::array({{{"type", "web_search_call"}, {"id", "ws_1"}}})}};
  auto r = post(gateway.port(), "/v1/responses", replayed);
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json_body()["error"]["param"], "input[0].type");
  EXPECT_TRUE(received(fault, "/v1/responses").empty());
}

TEST(NativeResponsesTest, AFailingNativeUpstreamFallsBackToAChatUpstreamUnlessABuiltInToolIsAsked) {
  FaultUpstream fault;
  GatewayUnderTest gateway("cloud:\n  upstreams:\n" +
                               upstream("n", fault, "responses", "gpt: fault-500") +
                               upstream("c", fault, "chat", "gpt: fault-ok"),
                           /*with_edge=*/false);
  auto plain = post(gateway.port(), "/v1/responses", {{"model", "gpt"}, {"input", "Hi"}});
  ASSERT_EQ(plain.status, 200) << plain.body;
  const json body = plain.json_body();
  EXPECT_EQ(body["output"][0]["content"][0]["text"], "Hello from the fault upstream . Hello from");
  EXPECT_EQ(body["tandem"]["models"]["cloud"]["upstream"], "c");
  ASSERT_EQ(body["tandem"]["fallbacks"].size(), 1U) << body["tandem"];
  EXPECT_EQ(body["tandem"]["fallbacks"][0]["from"], "cloud:n");

  auto searching = post(gateway.port(), "/v1/responses", web_search_request("gpt", "Find it"));
  ASSERT_EQ(searching.status, 502) << searching.body;
  const json error = searching.json_body()["error"];
  EXPECT_EQ(error["code"], "cloud_unavailable");
  EXPECT_NE(error["message"].get<std::string>().find("c speaks chat completions"),
            std::string::npos)
      << error;
}

struct MalformedCase {
  std::string name;
  std::string model;
  bool stream = false;
  int status = 0;
  std::string code;        // the error's code (a plain error response)
  std::string last_event;  // a stream that began: its last event's type
  int output_tokens = -1;  // an answer that is relayed: its usage
};

std::vector<MalformedCase> malformed_cases() {
  std::ifstream in(std::string(TANDEM_SOURCE_DIR) +
                   "/tests/server/cases/native_responses_malformed.jsonl");
  std::vector<MalformedCase> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const json c = json::parse(line);
    cases.push_back({c["name"].get<std::string>(), c["model"].get<std::string>(),
                     c["stream"].get<bool>(), c["status"].get<int>(), c.value("code", ""),
                     c.value("last_event", ""), c.value("output_tokens", -1)});
  }
  return cases;
}

TEST(NativeResponsesTest, MalformedRepliesEndInTheDocumentedErrorAndTheGatewayStaysUp) {
  const std::vector<MalformedCase> cases = malformed_cases();
  ASSERT_GE(cases.size(), 10U);
  FaultUpstream fault;
  std::string models;
  for (const MalformedCase& c : cases) {
    if (models.find(c.model + ":") == std::string::npos) {
      models += (models.empty() ? "" : ", ") + c.model + ": " + c.model;
    }
  }
  GatewayUnderTest gateway(
      "cloud:\n  upstreams:\n" + upstream("n", fault, "responses", models + ", gpt: fault-ok"),
      /*with_edge=*/false);
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    const json ask = {{"model", c.model}, {"input", "Hi"}, {"stream", c.stream}};
    auto r = post(gateway.port(), "/v1/responses", ask);
    ASSERT_EQ(r.status, c.status) << r.body;
    if (!c.code.empty()) {
      EXPECT_EQ(r.json_body()["error"]["code"], c.code) << r.body;
      EXPECT_EQ(r.json_body()["tandem"]["tier"], nullptr) << r.body;
    }
    if (!c.last_event.empty()) {
      const std::vector<json> events = stream_events(r);
      ASSERT_FALSE(events.empty()) << r.body;
      for (size_t i = 0; i < events.size(); ++i) {
        EXPECT_EQ(events[i]["sequence_number"], i) << r.body;
      }
      EXPECT_EQ(events.back()["type"], c.last_event) << r.body;
      if (c.last_event == "response.failed") {
        EXPECT_EQ(events.back()["response"]["status"], "failed");
        EXPECT_EQ(events.back()["response"]["error"]["code"], "upstream_error") << r.body;
        EXPECT_EQ(events.back()["response"]["tandem"]["tier"], "cloud");
      }
    }
    if (c.output_tokens >= 0) {
      const json response = c.stream ? stream_events(r).back()["response"] : r.json_body();
      EXPECT_EQ(response["tandem"]["usage"]["cloud"]["prompt_tokens"], 0) << response;
      EXPECT_EQ(response["tandem"]["usage"]["cloud"]["completion_tokens"], c.output_tokens);
    }
    auto ok = post(gateway.port(), "/v1/responses", {{"model", "gpt"}, {"input", "Hi"}});
    EXPECT_EQ(ok.status, 200) << ok.body;
  }
}

TEST(NativeResponsesTest, AChatUpstreamsStreamThatBreaksAfterItBeganEndsWithResponseFailed) {
  // The translated path's failure event, after the text began: once a crash of the gateway.
  FaultUpstream fault;
  GatewayUnderTest gateway(
      "cloud:\n  upstreams:\n" + upstream("c", fault, "chat", "bad: fault-malformed-sse"),
      /*with_edge=*/false);
  auto r =
      post(gateway.port(), "/v1/responses", {{"model", "bad"}, {"input", "Hi"}, {"stream", true}});
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<json> events = stream_events(r);
  ASSERT_FALSE(events.empty()) << r.body;
  EXPECT_EQ(events.back()["type"], "response.failed") << r.body;
  EXPECT_EQ(events.back()["sequence_number"], events.size() - 1);
  EXPECT_EQ(request(gateway.port(), "GET", "/health").status, 200);
}

}  // namespace
}  // namespace tandem::test
