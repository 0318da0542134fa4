// POST /v1/embeddings for cloud models, end to end on loopback: names an upstream maps in
// `embeddings_models` are answered by that upstream (tests/support/fault_upstream), in OpenAI's
// shapes; input that may not leave the device never reaches it; upstream errors and malformed
// answers become the documented errors; the next upstream serving the model takes over.

#include <cstring>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "test_harness.h"

namespace tandem::test {
namespace {

// One upstream entry: `models` maps public embeddings names to fault_upstream model names.
std::string upstream_yaml(const std::string& name, const FaultUpstream& fault,
                          const std::string& models) {
  return "    - name: " + name + "\n      base_url: " + fault.base_url() +
         "\n      embeddings_models: {" + models +
         "}\n      prices: {embeddings_per_million: 100}\n"
         "      timeouts: {connect_ms: 2000, first_byte_ms: 20000, idle_ms: 20000, "
         "total_ms: 60000}\n      retry: {max_retries: 1, base_backoff_ms: 1, "
         "max_backoff_ms: 2}\n      circuit: {failure_threshold: 100}\n"
         "      health: {interval_ms: 0}\n";
}

std::string yaml(const FaultUpstream& fault, const std::string& models) {
  return "cloud:\n  upstreams:\n" + upstream_yaml("f", fault, models);
}

json embeddings(const std::string& model, const json& input) {
  return {{"model", model}, {"input", input}};
}

std::vector<float> decode_base64_floats(const std::string& text) {
  std::string bytes(text.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  std::vector<float> out(static_cast<size_t>(n) / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

// What the upstream received: each embeddings body as it arrived.
std::vector<json> received(const FaultUpstream& fault) {
  const json recorded = request(fault.port(), "GET", "/control/bodies").json_body();
  std::vector<json> bodies;
  for (const auto& b : recorded["bodies"]) {
    if (b["path"] == "/v1/embeddings") {
      bodies.push_back(json::parse(b["body"].get<std::string>()));
    }
  }
  return bodies;
}

TEST(CloudEmbeddingsGatewayTest, ACloudModelIsAnsweredByItsUpstreamAsFloatsOrBase64) {
  FaultUpstream fault;
  GatewayUnderTest gateway(yaml(fault, "emb: fault-ok"), false);
  auto floats =
      post(gateway.port(), "/v1/embeddings", embeddings("emb", {"The cat sat.", "A dog ran."}));
  ASSERT_EQ(floats.status, 200) << floats.body;
  EXPECT_EQ(floats.headers["X-Tandem-Tier"], "cloud");
  const json body = floats.json_body();
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["model"], "emb");  // the name the client asked for
  ASSERT_EQ(body["data"].size(), 2U);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(body["data"][i]["object"], "embedding");
    EXPECT_EQ(body["data"][i]["index"], i);
    EXPECT_EQ(body["data"][i]["embedding"].size(), 8U);
  }
  EXPECT_NE(body["data"][0]["embedding"], body["data"][1]["embedding"]);
  EXPECT_EQ(body["usage"]["prompt_tokens"], 6);
  EXPECT_EQ(body["usage"]["total_tokens"], 6);
  const json& tandem = body["tandem"];
  EXPECT_EQ(tandem["tier"], "cloud");
  // The name is listed like any model, owned by its upstream.
  const json models = request(gateway.port(), "GET", "/v1/models").json_body();
  ASSERT_TRUE(models["data"].is_array()) << models.dump();
  bool listed = false;
  for (const auto& m : models["data"]) {
    listed = listed || (m["id"] == "emb" && m["owned_by"] == "f");
  }
  EXPECT_TRUE(listed) << models.dump();
  EXPECT_EQ(tandem["data_left_device"], true);
  EXPECT_EQ(tandem["models"]["cloud"], (json{{"upstream", "f"}, {"model", "fault-ok"}}));
  EXPECT_EQ(tandem["usage"]["cloud"]["prompt_tokens"], 6);
  EXPECT_NEAR(tandem["cost_usd"]["cloud"].get<double>(), 6 * 100 / 1e6, 1e-12);

  json packed_request = embeddings("emb", {"The cat sat.", "A dog ran."});
  packed_request["encoding_format"] = "base64";
  auto packed = post(gateway.port(), "/v1/embeddings", packed_request);
  ASSERT_EQ(packed.status, 200) << packed.body;
  for (size_t i = 0; i < 2; ++i) {
    const auto expected = body["data"][i]["embedding"].get<std::vector<float>>();
    EXPECT_EQ(decode_base64_floats(packed.json_body()["data"][i]["embedding"].get<std::string>()),
              expected);
  }

  // The client's body goes out with the upstream's model name; its other fields as sent.
  json shortened = embeddings("emb", "Lily had a red ball.");
  shortened["dimensions"] = 4;
  shortened["user"] = "u-1";
  auto short_vectors = post(gateway.port(), "/v1/embeddings", shortened);
  ASSERT_EQ(short_vectors.status, 200) << short_vectors.body;
  EXPECT_EQ(short_vectors.json_body()["data"][0]["embedding"].size(), 4U);
  const auto bodies = received(fault);
  ASSERT_EQ(bodies.size(), 3U);
  EXPECT_EQ(bodies[0]["model"], "fault-ok");
  EXPECT_EQ(bodies[1]["encoding_format"], "base64");
  EXPECT_EQ(bodies[2]["dimensions"], 4);
  EXPECT_EQ(bodies[2]["user"], "u-1");

  // Each send is in the audit, as an embeddings request.
  const json audit = request(gateway.port(), "GET", "/v1/tandem/audit").json_body();
  ASSERT_EQ(audit["data"].size(), 3U) << audit;
  for (const auto& row : audit["data"]) {
    EXPECT_EQ(row["purpose"], "embeddings");
    EXPECT_EQ(row["upstream"], "f");
    EXPECT_EQ(row["model"], "fault-ok");
  }

  // Counted where cloud spend is: the cost and the requests by pattern.
  const auto& registry = gateway.gateway().stats().registry();
  EXPECT_NEAR(registry.value("tandem_cost_usd_total", {{"tier", "cloud"}}).value_or(0.0),
              (6 + 6 + 5) * 100 / 1e6, 1e-12);
  EXPECT_EQ(registry.sum("tandem_requests_total", {{"pattern", "embeddings"}, {"tier", "cloud"}}),
            3.0);
}

TEST(CloudEmbeddingsGatewayTest, InputThatMayNotLeaveTheDeviceNeverReachesTheUpstream) {
  FaultUpstream fault;
  GatewayUnderTest gateway(yaml(fault, "emb: fault-ok"));
  auto secret = post(gateway.port(), "/v1/embeddings",
                     embeddings("emb", {"fine", "mail jane.doe@example.org"}));
  EXPECT_EQ(secret.status, 400) << secret.body;
  const json error = secret.json_body()["error"];
  EXPECT_EQ(error["code"], "private_data_needs_cloud");
  EXPECT_EQ(error["param"], "model");
  EXPECT_NE(error["message"].get<std::string>().find("input[1]"), std::string::npos)
      << error["message"];
  EXPECT_EQ(error["message"].get<std::string>().find("jane.doe"), std::string::npos);
  EXPECT_EQ(secret.json_body()["tandem"]["data_left_device"], false);

  auto header = post(gateway.port(), "/v1/embeddings", embeddings("emb", "nothing private"),
                     {{"X-Tandem-Privacy", "local-only"}});
  EXPECT_EQ(header.status, 400) << header.body;
  EXPECT_EQ(header.json_body()["error"]["code"], "private_data_needs_cloud");

  // The edge model's embeddings stay on the device, private or not.
  auto edge =
      post(gateway.port(), "/v1/embeddings", embeddings("tandem", "mail jane.doe@example.org"));
  ASSERT_EQ(edge.status, 200) << edge.body;
  EXPECT_EQ(edge.headers["X-Tandem-Tier"], "edge");
  EXPECT_EQ(edge.json_body()["tandem"]["data_left_device"], false);

  EXPECT_EQ(fault.requests_for("fault-ok"), 0);
  EXPECT_TRUE(received(fault).empty());
  EXPECT_EQ(gateway.gateway().stats().registry().sum("tandem_privacy_pinned_requests_total"), 2.0);
}

TEST(CloudEmbeddingsGatewayTest, UpstreamErrorsAreMappedAsForChat) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      yaml(fault, "broken: fault-500, flaky: fault-503-x1, gone: fault-nope, ok: fault-ok"), false);
  auto broken = post(gateway.port(), "/v1/embeddings", embeddings("broken", "x"));
  EXPECT_EQ(broken.status, 502) << broken.body;
  EXPECT_EQ(broken.json_body()["error"]["code"], "cloud_unavailable");
  EXPECT_EQ(broken.json_body()["tandem"]["tier"], nullptr);
  EXPECT_EQ(fault.requests_for("fault-500"), 2);  // retried once

  auto flaky = post(gateway.port(), "/v1/embeddings", embeddings("flaky", "x"));
  EXPECT_EQ(flaky.status, 200) << flaky.body;  // the retry succeeded

  auto gone = post(gateway.port(), "/v1/embeddings", embeddings("gone", "x"));
  EXPECT_EQ(gone.status, 502) << gone.body;  // the model map is wrong for the upstream: not retried
  EXPECT_EQ(fault.requests_for("fault-nope"), 1);

  // The upstream refused the request itself: the client's to fix, with the upstream's words.
  json too_long = embeddings("ok", "x");
  too_long["dimensions"] = 5000;
  auto refused = post(gateway.port(), "/v1/embeddings", too_long);
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.json_body()["error"]["type"], "invalid_request_error");
  EXPECT_NE(refused.json_body()["error"]["message"].get<std::string>().find("dimensions"),
            std::string::npos);
}

TEST(CloudEmbeddingsGatewayTest, MalformedAnswersAreUpstreamErrorsNeverCrashes) {
  FaultUpstream fault;
  GatewayUnderTest gateway(yaml(fault,
                                "not-json: fault-malformed-sse, no-data: fault-no-choices, "
                                "bad-vectors: fault-malformed-choices, html: "
                                "fault-wrong-content-type, cut: fault-reset-mid-stream, "
                                "bad-usage: fault-malformed-usage"),
                           false);
  for (const char* model : {"not-json", "no-data", "bad-vectors", "html", "cut"}) {
    auto r = post(gateway.port(), "/v1/embeddings", embeddings(model, {"a", "b"}));
    EXPECT_EQ(r.status, 502) << model << ": " << r.body;
    EXPECT_EQ(r.json_body()["error"]["code"], "cloud_unavailable") << model;
    EXPECT_EQ(r.json_body()["error"]["type"], "server_error") << model;
  }
  // A usage of the wrong type costs the vectors nothing: its counts read as 0.
  auto bad_usage = post(gateway.port(), "/v1/embeddings", embeddings("bad-usage", {"a", "b"}));
  ASSERT_EQ(bad_usage.status, 200) << bad_usage.body;
  EXPECT_EQ(bad_usage.json_body()["data"].size(), 2U);
  EXPECT_EQ(bad_usage.json_body()["usage"]["prompt_tokens"], 0);
  EXPECT_EQ(gateway.health()["status"], "ok");
}

TEST(CloudEmbeddingsGatewayTest, TheNextUpstreamServingTheModelTakesOver) {
  FaultUpstream first;
  FaultUpstream second;
  GatewayUnderTest gateway("cloud:\n  upstreams:\n" + upstream_yaml("a", first, "emb: fault-503") +
                               upstream_yaml("b", second, "emb: fault-ok"),
                           false);
  auto r = post(gateway.port(), "/v1/embeddings", embeddings("emb", "x"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json tandem = r.json_body()["tandem"];
  EXPECT_EQ(tandem["models"]["cloud"]["upstream"], "b");
  ASSERT_EQ(tandem["fallbacks"].size(), 1U);
  EXPECT_EQ(tandem["fallbacks"][0]["from"], "cloud:a");
  EXPECT_EQ(tandem["fallbacks"][0]["to"], "cloud:b");
  EXPECT_EQ(first.requests_for("fault-503"), 2);
  EXPECT_EQ(second.requests_for("fault-ok"), 1);
}

TEST(CloudEmbeddingsGatewayTest, AnUnknownModelListsTheEmbeddingsModels) {
  FaultUpstream fault;
  GatewayUnderTest gateway(yaml(fault, "emb: fault-ok"), false);
  auto r = post(gateway.port(), "/v1/embeddings", embeddings("gpt-4o", "x"));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json_body()["error"]["param"], "model");
  EXPECT_NE(r.json_body()["error"]["message"].get<std::string>().find("emb"), std::string::npos);
  // The edge model's name without an edge: the edge is unavailable, nothing is sent out.
  auto edge = post(gateway.port(), "/v1/embeddings", embeddings("tandem", "x"));
  EXPECT_EQ(edge.status, 503) << edge.body;
  EXPECT_EQ(edge.json_body()["error"]["code"], "edge_unavailable");
  EXPECT_TRUE(received(fault).empty());
}

}  // namespace
}  // namespace tandem::test
