// Upstream replies of the wrong shape, end to end on loopback (tests/support/fault_upstream):
// usage counts that are null, text, fractions or negative; answers without choices; choices of
// the wrong type, before and after content reached the client. On the cloud path and on the
// cascade's escalation and the speculative verification: the client always gets a well-formed
// answer or a documented error, the gateway stays up, and every request leaves its trace.

#include <optional>
#include <stdexcept>
#include <variant>

#include <gtest/gtest.h>

#include "server/openai_request.h"
#include "test_harness.h"

namespace tandem::test {
namespace {

// Upstream `f` at `fault` serving `public_model` as `upstream_model` (retried once), and a
// healthy one serving `ok` (a circuit of its own); traces in `db`; `routing` goes into the
// routing section.
std::string yaml(const FaultUpstream& fault, const std::string& db, const std::string& public_model,
                 const std::string& upstream_model, const std::string& routing = "") {
  const std::string settings =
      "      timeouts: {connect_ms: 5000, first_byte_ms: 30000, idle_ms: 30000, "
      "total_ms: 60000}\n      retry: {max_retries: 1, base_backoff_ms: 10, "
      "max_backoff_ms: 50}\n      health: {interval_ms: 0}\n";
  return "cloud:\n  upstreams:\n    - name: f\n      base_url: " + fault.base_url() +
         "\n      models: {" + public_model + ": " + upstream_model + "}\n" + settings +
         "    - name: healthy\n      base_url: " + fault.base_url() +
         "\n      models: {ok: fault-ok}\n" + settings + "routing:\n  database: " + db + "\n" +
         routing;
}

// The `tandem` object of a response: the body's, or a stream's last chunk's.
json record_of(const HttpResult& r) {
  const auto events = r.events();
  if (events.size() >= 2 && events.back() == "[DONE]") {
    return json::parse(events[events.size() - 2], nullptr, false)["tandem"];
  }
  return r.json_body()["tandem"];
}

// A stream is well formed: every event JSON but the last, which is [DONE].
void expect_well_formed_stream(const HttpResult& s) {
  const auto events = s.events();
  ASSERT_GE(events.size(), 2U) << s.body;
  EXPECT_EQ(events.back(), "[DONE]") << s.body;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_FALSE(json::parse(events[i], nullptr, false).is_discarded()) << events[i];
  }
}

// The gateway still answers: its health, and a request to a healthy upstream model.
void expect_still_up(GatewayUnderTest& gateway) {
  EXPECT_EQ(request(gateway.port(), "GET", "/health").status, 200);
  auto ok = post(gateway.port(), "/v1/chat/completions", chat("ok", "hi", 2));
  EXPECT_EQ(ok.status, 200) << ok.body;
}

TEST(MalformedUpstreamTest, MalformedUsageCountsAsUnknownAndTheAnswerIsRelayed) {
  FaultUpstream fault;
  TraceDir dir("malformed-usage");
  {
    GatewayUnderTest gateway(yaml(fault, dir.db(), "u", "fault-malformed-usage"),
                             /*with_edge=*/false);
    auto r = post(gateway.port(), "/v1/chat/completions", chat("u", "hi", 4));
    ASSERT_EQ(r.status, 200) << r.body;
    const json body = r.json_body();
    EXPECT_EQ(body["choices"][0]["message"]["content"], "Hello from the fault");
    EXPECT_EQ(body["usage"]["prompt_tokens"], 0);      // null upstream: unknown
    EXPECT_EQ(body["usage"]["completion_tokens"], 0);  // "4" upstream: unknown
    EXPECT_EQ(body["usage"]["prompt_tokens_details"]["cached_tokens"], 0);  // -3 upstream
    EXPECT_EQ(body["tandem"]["tier"], "cloud");

    json streamed = chat("u", "hi", 4, true);
    streamed["stream_options"] = {{"include_usage", true}};
    auto s = post(gateway.port(), "/v1/chat/completions", streamed);
    ASSERT_EQ(s.status, 200) << s.body;
    expect_well_formed_stream(s);
    const auto events = s.events();
    const json last = json::parse(events[events.size() - 2]);
    EXPECT_EQ(last["usage"]["prompt_tokens"], 0) << s.body;
    EXPECT_EQ(last["tandem"]["tier"], "cloud");
    expect_still_up(gateway);
    EXPECT_EQ(fault.requests_for("fault-malformed-usage"), 2);  // neither was retried
  }
  const auto rows = dir.traces();
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].tier, "cloud");
  EXPECT_EQ(rows[0].cloud_tokens, 0);
  EXPECT_EQ(rows[1].tier, "cloud");
}

// An answer without choices is the upstream's failure: retried, then the next tier answers;
// with none allowed, the documented 502.
TEST(MalformedUpstreamTest, AnAnswerWithoutChoicesFailsTheUpstreamAndFallsBack) {
  FaultUpstream fault;
  TraceDir dir("no-choices");
  {
    GatewayUnderTest gateway(yaml(fault, dir.db(), "n", "fault-no-choices"));
    for (const bool stream : {false, true}) {
      auto r =
          post(gateway.port(), "/v1/chat/completions", chat("n", "Once upon a time", 8, stream));
      ASSERT_EQ(r.status, 200) << r.body;
      EXPECT_EQ(r.headers["X-Tandem-Tier"], "edge");
      if (stream) {
        expect_well_formed_stream(r);
      }
      const json t = record_of(r);
      EXPECT_EQ(t["tier"], "edge") << t.dump();
      ASSERT_FALSE(t["degraded"].is_null());
      ASSERT_EQ(t["fallbacks"].size(), 1U) << t.dump();
      EXPECT_NE(t["fallbacks"][0]["reason"].get<std::string>().find("malformed"), std::string::npos)
          << t.dump();
    }
    EXPECT_EQ(fault.requests_for("fault-no-choices"), 4);  // each tried twice
    expect_still_up(gateway);
  }
  EXPECT_EQ(dir.traces().size(), 3U);

  TraceDir none("no-choices-no-fallback");
  {
    GatewayUnderTest gateway(
        yaml(fault, none.db(), "n", "fault-no-choices", "  cloud_to_edge: false\n"));
    for (const bool stream : {false, true}) {
      auto r = post(gateway.port(), "/v1/chat/completions", chat("n", "hi", 4, stream));
      ASSERT_EQ(r.status, 502) << r.body;
      const json body = r.json_body();
      EXPECT_EQ(body["error"]["type"], "server_error");
      EXPECT_EQ(body["error"]["code"], "cloud_unavailable");
      // Whole: "it has no choices"; streamed: "no event carried choices".
      EXPECT_NE(body["error"]["message"].get<std::string>().find("malformed"), std::string::npos)
          << r.body;
      EXPECT_TRUE(body.contains("tandem"));
    }
    expect_still_up(gateway);
  }
  const auto rows = none.traces();
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].tier, "none");
  EXPECT_EQ(rows[1].tier, "none");
}

// Choices of the wrong type: before anything reached the client the edge answers instead;
// after content was streamed, the stream ends with an error event and [DONE].
TEST(MalformedUpstreamTest, MalformedChoicesFailBeforeOrEndTheStreamAfterContent) {
  FaultUpstream fault;
  TraceDir dir("malformed-choices");
  {
    GatewayUnderTest gateway(yaml(fault, dir.db(), "m", "fault-malformed-choices"));
    auto r = post(gateway.port(), "/v1/chat/completions", chat("m", "Once upon a time", 8));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json_body()["tandem"]["tier"], "edge");
    EXPECT_NE(r.body.find("choices is a string"), std::string::npos) << r.body;

    auto s = post(gateway.port(), "/v1/chat/completions", chat("m", "hi", 8, true));
    ASSERT_EQ(s.status, 200) << s.body;
    EXPECT_EQ(s.headers["X-Tandem-Tier"], "cloud");
    expect_well_formed_stream(s);
    const auto events = s.events();
    EXPECT_EQ(json::parse(events[0])["choices"][0]["delta"]["content"], "Hello");
    const json error = json::parse(events[events.size() - 2]);
    ASSERT_TRUE(error.contains("error")) << s.body;
    EXPECT_EQ(error["error"]["code"], "upstream_error");
    EXPECT_NE(error["error"]["message"].get<std::string>().find("choices[0] is a number"),
              std::string::npos)
        << s.body;
    EXPECT_EQ(error["tandem"]["tier"], "cloud");
    expect_still_up(gateway);
  }
  const auto rows = dir.traces();
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].tier, "edge");
  EXPECT_EQ(rows[1].tier, "none");  // the client got an error
}

// `model: tandem` escalating from the edge to a cloud whose answer is malformed: the edge's
// own answer stands, marked degraded, unless the cloud had already streamed content (then the
// stream ends with an error event, never with the edge's text after the cloud's); with a
// malformed usage the cloud's answer is used.
TEST(MalformedUpstreamTest, AnEscalationToAMalformedCloudKeepsTheEdgeAnswer) {
  FaultUpstream fault;
  const std::string cascade =
      "  cloud_model: big\n  pattern: cascade\n"
      "  cascade: {early_stop: false, streaming: hold, weights: {bias: -10}}\n";
  for (const char* upstream : {"fault-no-choices", "fault-malformed-choices"}) {
    TraceDir dir(std::string("escalation-") + upstream);
    {
      GatewayUnderTest gateway(yaml(fault, dir.db(), "big", upstream, cascade));
      for (const bool stream : {false, true}) {
        auto r = post(gateway.port(), "/v1/chat/completions",
                      chat("tandem", "Once upon a time", 8, stream));
        ASSERT_EQ(r.status, 200) << upstream << ": " << r.body;
        if (stream) {
          expect_well_formed_stream(r);
        }
        const auto events = r.events();
        if (stream && std::string(upstream) == "fault-malformed-choices") {
          // The cloud's first piece was out: the stream ends in the cloud's error.
          const json error = json::parse(events[events.size() - 2]);
          ASSERT_TRUE(error.contains("error")) << r.body;
          EXPECT_EQ(error["error"]["code"], "upstream_error");
          EXPECT_EQ(error["tandem"]["tier"], "cloud") << r.body;
          continue;
        }
        const json t = record_of(r);
        EXPECT_EQ(t["tier"], "edge") << upstream << ": " << t.dump();
        EXPECT_EQ(t["pattern"], "cascade");
        ASSERT_FALSE(t["degraded"].is_null()) << t.dump();
        EXPECT_NE(t["degraded"]["reason"].get<std::string>().find("malformed"), std::string::npos)
            << t.dump();
      }
      expect_still_up(gateway);
    }
    const auto rows = dir.traces();
    ASSERT_EQ(rows.size(), 3U) << upstream;
    EXPECT_EQ(rows[0].tier, "edge");
    EXPECT_EQ(rows[0].pattern, "cascade");
    ASSERT_TRUE(rows[0].confidence.has_value());  // the edge's draft was judged, then kept
  }

  TraceDir dir("escalation-usage");
  {
    GatewayUnderTest gateway(yaml(fault, dir.db(), "big", "fault-malformed-usage", cascade));
    auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once upon a time", 8));
    ASSERT_EQ(r.status, 200) << r.body;
    const json t = r.json_body()["tandem"];
    EXPECT_EQ(t["tier"], "cloud") << t.dump();
    EXPECT_EQ(t["usage"]["cloud"]["prompt_tokens"], 0);
    EXPECT_EQ(
        r.json_body()["choices"][0]["message"]["content"].get<std::string>().rfind("Hello", 0), 0U);
  }
  EXPECT_EQ(dir.traces().size(), 1U);
}

// The speculative pattern's verification reads a whole cloud answer: a malformed one leaves the
// edge's answer unverified, never a dropped connection.
TEST(MalformedUpstreamTest, AMalformedVerificationLeavesTheEdgeAnswerUnverified) {
  FaultUpstream fault;
  TraceDir dir("verification");
  {
    GatewayUnderTest gateway(yaml(fault, dir.db(), "big", "fault-no-choices",
                                  "  cloud_model: big\n  pattern: speculative\n"
                                  "  speculative: {judge: match}\n"));
    auto r = post(gateway.port(), "/v1/completions", completion("Once upon a time", 8));
    ASSERT_EQ(r.status, 200) << r.body;
    const json t = r.json_body()["tandem"];
    EXPECT_EQ(t["tier"], "edge");
    EXPECT_EQ(t["verification"]["status"], "unverified") << t.dump();
    EXPECT_NE(t["verification"]["error"].get<std::string>().find("malformed"), std::string::npos);
    expect_still_up(gateway);
  }
  EXPECT_EQ(dir.traces().size(), 2U);
}

// A sink whose piece() throws, as a bug in relaying would: the tier fails with the exception,
// the response ends with a 500 `internal_error` (nothing else can answer: no edge), and the
// request still leaves its trace. Run on Gateway::execute directly, in this thread.
class ThrowingSink final : public server::ResponseSink {
 public:
  net::awaitable<bool> begin(const server::DecisionRecord&) override {
    began = true;
    co_return true;
  }
  net::awaitable<bool> piece(const server::Piece&) override {
    throw std::runtime_error("a bug while relaying");
    co_return true;
  }
  net::awaitable<bool> revise(const server::Revision&) override { co_return true; }
  net::awaitable<void> finish(const server::Outcome&, const server::DecisionRecord&) override {
    ++ends;
    co_return;
  }
  net::awaitable<void> fail(const server::ApiError& e, const server::DecisionRecord&) override {
    ++ends;
    error = e;
    co_return;
  }

  bool began = false;
  int ends = 0;
  std::optional<server::ApiError> error;
};

TEST(GatewayExceptionTest, AnExceptionInATierIsAnswered500AndTraced) {
  FaultUpstream fault;
  TraceDir dir("exception");
  auto config = config::parse_config(yaml(fault, dir.db(), "c", "fault-ok"), "test.yaml");
  ASSERT_TRUE(config) << config.error().message;
  auto gateway = server::Gateway::create(std::move(config).value(), nullptr, "no edge here");
  ASSERT_TRUE(gateway) << gateway.error().message;
  for (const bool stream : {false, true}) {
    auto parsed = server::parse_completion_request(chat("c", "hi", 4, stream).dump(),
                                                   upstream::ApiKind::kChat, 16);
    ASSERT_TRUE(std::holds_alternative<server::CompletionRequest>(parsed));
    server::RequestContext context;
    context.request_id = stream ? "chatcmpl-stream" : "chatcmpl-whole";
    ThrowingSink sink;
    CancelSignal cancel;
    asio::io_context ioc;
    bool threw = false;
    asio::co_spawn(ioc,
                   (*gateway)->execute(std::get<server::CompletionRequest>(std::move(parsed)),
                                       context, sink, cancel),
                   [&](std::exception_ptr e) { threw = e != nullptr; });
    ioc.run();
    EXPECT_FALSE(threw);
    EXPECT_TRUE(sink.began);  // the exception came after the response began
    EXPECT_EQ(sink.ends, 1);
    ASSERT_TRUE(sink.error.has_value());
    EXPECT_EQ(http_status(*sink.error), 500);
    EXPECT_EQ(sink.error->code, "internal_error");
    EXPECT_NE(sink.error->message.find(context.request_id), std::string::npos);
    EXPECT_EQ(sink.error->message.find("a bug while relaying"), std::string::npos);
  }
  (*gateway)->flush_traces();
  const auto rows = dir.traces();
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].tier, "none");
  EXPECT_EQ(rows[1].request_id, "chatcmpl-stream");
}

}  // namespace
}  // namespace tandem::test
