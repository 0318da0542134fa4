// The egress guard end to end on loopback (server/egress_guard.h): the fault upstream records
// every body it receives, and the tests plant secrets in every field a client can fill, for
// every purpose of egress, and compare what the recorder got with what the audit says left.

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "config/config.h"
#include "store/database.h"
#include "test_harness.h"

namespace tandem::test {
namespace {

// One secret of each built-in kind a client is likely to paste.
const std::vector<std::pair<std::string, std::string>> kSecrets = {
    {"payment_card", "4111 1111 1111 1111"},
    {"email", "jane.doe@example.org"},
    {"us_ssn", "078-05-1120"},
    {"iban", "DE89 3704 0044 0532 0130 00"},
    {"phone", "+1 415 555 2671"}};

std::string upstream_yaml(const std::string& name, const std::string& base_url,
                          const std::string& model, int retries) {
  return "    - name: " + name + "\n      base_url: " + base_url +
         "\n      models: {big: " + model +
         "}\n      timeouts: {connect_ms: 1000, first_byte_ms: 20000, idle_ms: 20000, "
         "total_ms: 60000}\n      retry: {max_retries: " +
         std::to_string(retries) +
         ", base_backoff_ms: 1, max_backoff_ms: 2}\n      health: {interval_ms: 0}\n";
}

std::string egress_yaml(const std::string& base_url, const std::string& routing,
                        const std::string& extra = "") {
  return "cloud:\n  upstreams:\n" + upstream_yaml("cloud", base_url, "fault-ok", 0) + "routing:\n" +
         routing + extra;
}

// What the recording upstream received: each body exactly as it arrived.
std::vector<std::string> recorded(const FaultUpstream& fault) {
  const json got = request(fault.port(), "GET", "/control/bodies").json_body();
  EXPECT_EQ(got["dropped"], 0);
  std::vector<std::string> bodies;
  for (const auto& b : got["bodies"]) {
    bodies.push_back(b["body"].get<std::string>());
  }
  return bodies;
}

double metric(GatewayUnderTest& gateway, const std::string& name, const telemetry::Labels& labels) {
  return gateway.gateway().stats().registry().value(name, labels).value_or(0.0);
}

struct PlantedCase {
  std::string name;
  std::string api;
  std::string body;  // with {{SECRET}}
  std::string field;
  std::string outcome;
};

std::vector<PlantedCase> planted_cases() {
  std::ifstream in(std::string(TANDEM_SOURCE_DIR) +
                   "/tests/server/egress_cases/planted_secrets.jsonl");
  EXPECT_TRUE(in.good());
  std::vector<PlantedCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const json c = json::parse(line);
    cases.push_back({c["name"], c["api"], c["body"].dump(), c["field"], c["outcome"]});
  }
  return cases;
}

std::string planted(const PlantedCase& c, const std::string& secret, bool stream) {
  std::string text = c.body;
  const std::string slot = "{{SECRET}}";
  text.replace(text.find(slot), slot.size(), secret);
  json body = json::parse(text);
  body["model"] = "tandem";
  body["max_tokens"] = 2;
  body["temperature"] = 0;
  body["stream"] = stream;
  return body.dump();
}

// The `tandem` record of a JSON answer or of a stream's last chunk.
json decision_of(const HttpResult& r, bool stream) {
  if (!stream) {
    return r.json_body()["tandem"];
  }
  json last;
  for (const auto& event : r.events()) {
    if (event != "[DONE]") {
      const json chunk = json::parse(event);
      if (chunk.contains("tandem") && chunk["tandem"].contains("tier")) {
        last = chunk["tandem"];
      }
    }
  }
  return last;
}

TEST(EgressGatewayTest, ASecretPlantedInAnyFieldNeverReachesTheCloud) {
  FaultUpstream fault;
  // Everything would go to the cloud: the ingress threshold sends every query there.
  GatewayUnderTest gateway(egress_yaml(fault.base_url(),
                                       "  pattern: ingress\n"
                                       "  ingress: {threshold: 0}\n"));
  const auto cases = planted_cases();
  ASSERT_GE(cases.size(), 16u);
  int n = 0;
  for (const auto& c : cases) {
    for (const auto& [detector, secret] : kSecrets) {
      const bool stream = ++n % 2 == 0;
      const std::string path = c.api == "chat" ? "/v1/chat/completions" : "/v1/completions";
      const std::string where = c.name + " with " + detector + (stream ? ", streamed" : "");
      auto r = request(gateway.port(), "POST", path, planted(c, secret, stream));
      // (The `user` field is the client's own name for itself, shown back as signals.client.)
      if (c.name != "user_field") {
        EXPECT_EQ(r.body.find(secret), std::string::npos) << where << ": the value is echoed";
      }
      if (c.outcome == "needs_cloud") {
        ASSERT_EQ(r.status, 400) << where << ": " << r.body;
        const json error = r.json_body()["error"];
        EXPECT_EQ(error["code"], "private_data_needs_cloud") << where;
        const std::string message = error["message"].get<std::string>();
        EXPECT_NE(message.find(detector), std::string::npos) << where << ": " << message;
        EXPECT_NE(message.find(c.field), std::string::npos) << where << ": " << message;
        EXPECT_NE(message.find("only the cloud"), std::string::npos) << where << ": " << message;
        continue;
      }
      ASSERT_EQ(r.status, 200) << where << ": " << r.body;
      const json t = decision_of(r, stream);
      EXPECT_EQ(t["tier"], "edge") << where;
      EXPECT_FALSE(t["data_left_device"].get<bool>()) << where;
      const json findings = t["routing"]["signals"]["privacy"]["findings"];
      ASSERT_FALSE(findings.empty()) << where;
      EXPECT_EQ(findings[0]["detector"], detector) << where;
      EXPECT_EQ(findings[0]["field"], c.field) << where;
    }
  }
  EXPECT_TRUE(recorded(fault).empty());
  // The router kept them home: the guard never had to refuse a body.
  EXPECT_EQ(gateway.gateway().stats().registry().sum("tandem_egress_refusals_total"), 0.0);
}

TEST(EgressGatewayTest, ASecretNeverLeavesForAnyPurposeOfEgress) {
  FaultUpstream fault;
  // Every pattern that sends something out, each asked for by header; shadow mode and the
  // canary beside them.
  GatewayUnderTest gateway(egress_yaml(
      fault.base_url(),
      "  pattern: cascade\n  cascade: {threshold: 1}\n  collaborate: {entropy_threshold: 0}\n"));
  const std::string secret_prompt = "Write to jane.doe@example.org about the invoice";
  for (const char* pattern : {"ingress", "cascade", "speculative", "collaborate", "cloud"}) {
    for (const bool stream : {false, true}) {
      json body = chat("tandem", secret_prompt, 4, stream);
      auto r = post(gateway.port(), "/v1/chat/completions", body, {{"X-Tandem-Pattern", pattern}});
      ASSERT_EQ(r.status, 200) << pattern << ": " << r.body;
      EXPECT_EQ(decision_of(r, stream)["tier"], "edge") << pattern;
    }
  }
  auto named = post(gateway.port(), "/v1/chat/completions", chat("big", secret_prompt, 4));
  ASSERT_EQ(named.status, 200) << named.body;
  EXPECT_EQ(named.json_body()["tandem"]["tier"], "edge");
  // Naming the cloud model with a tool: the edge serves tools, so it answers on the device.
  json with_tool = chat("big", secret_prompt, 40);
  with_tool["tools"] = {{{"type", "function"}, {"function", {{"name", "send_mail"}}}}};
  auto answered = post(gateway.port(), "/v1/chat/completions", with_tool);
  ASSERT_EQ(answered.status, 200) << answered.body;
  EXPECT_EQ(answered.json_body()["tandem"]["tier"], "edge");
  // With an image part the edge cannot read: a 400 naming both, not the cloud.
  json with_image = chat("big", "", 4);
  with_image["messages"][0]["content"] = {
      {{"type", "text"}, {"text", secret_prompt}},
      {{"type", "image_url"}, {"image_url", {{"url", "https://example.com/a.png"}}}}};
  auto refused = post(gateway.port(), "/v1/chat/completions", with_image);
  ASSERT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.json_body()["error"]["code"], "private_data_needs_cloud");
  EXPECT_EQ(refused.json_body()["error"]["param"], "messages[0].content[1].type");
  EXPECT_TRUE(recorded(fault).empty());
}

TEST(EgressGatewayTest, WhatTandemAddsIsScannedLikeWhatTheClientSent) {
  FaultUpstream fault;
  // A rule that matches the verification question Tandem writes, never the client's text.
  GatewayUnderTest gateway(egress_yaml(
      fault.base_url(),
      "  pattern: speculative\n  speculative: {judge: prompt}\n"
      "  privacy:\n    patterns: [{name: verify_question, regex: '(?i)correct and complete'}]\n",
      "operations:\n  canary: {prompts: ['Mail the draft to jane.doe@example.org']}\n"));
  auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once upon a time", 4));
  ASSERT_EQ(r.status, 200) << r.body;
  const json t = r.json_body()["tandem"];
  EXPECT_EQ(t["tier"], "edge");
  EXPECT_FALSE(t["data_left_device"].get<bool>()) << t.dump();
  EXPECT_EQ(metric(gateway, "tandem_egress_refusals_total",
                   {{"purpose", "verify"}, {"reason", "private_data"}}),
            1.0);
  // The operator's own canary prompt is held to the same rule.
  auto canary = post(gateway.port(), "/v1/tandem/canary", json::object());
  ASSERT_EQ(canary.status, 200) << canary.body;
  EXPECT_EQ(metric(gateway, "tandem_egress_refusals_total",
                   {{"purpose", "canary"}, {"reason", "private_data"}}),
            1.0);
  EXPECT_TRUE(recorded(fault).empty());
}

// Every body the recorder got has its audit row, with the hash of those exact bytes, and the
// audit has no row for a body the recorder did not get.
void expect_audit_matches_recorder(GatewayUnderTest& gateway, const FaultUpstream& fault,
                                   const std::vector<std::string>& purposes) {
  std::multiset<std::string> sent;
  for (const auto& body : recorded(fault)) {
    sent.insert(config::sha256_hex(body));
  }
  const json rows =
      request(gateway.port(), "GET", "/v1/tandem/audit?limit=1000").json_body()["data"];
  std::multiset<std::string> audited;
  std::set<std::string> seen_purposes;
  for (const auto& row : rows) {
    audited.insert(row["sha256"].get<std::string>());
    seen_purposes.insert(row["purpose"].get<std::string>());
  }
  EXPECT_EQ(audited, sent);
  for (const auto& p : purposes) {
    EXPECT_TRUE(seen_purposes.count(p)) << "no audited " << p << " in " << rows.dump();
  }
}

TEST(EgressGatewayTest, EverySendOfEveryPurposeIsAuditedWithTheHashOfItsBytes) {
  FaultUpstream fault;
  // The first upstream always fails: every cloud call falls back to the second, whose first
  // request fails once and is retried.
  GatewayUnderTest gateway("cloud:\n  upstreams:\n" +
                           upstream_yaml("down", fault.base_url(), "fault-500", 0) +
                           upstream_yaml("flaky", fault.base_url(), "fault-500-x1", 1) +
                           "routing:\n  pattern: cascade\n  cascade: {threshold: 1}\n"
                           "  speculative: {judge: prompt}\n  collaborate: {entropy_threshold: 0}\n"
                           "operations:\n  canary: {prompts: ['Once upon a time']}\n");
  for (const char* pattern : {"cloud", "cascade", "speculative", "collaborate"}) {
    auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once upon a time", 4),
                  {{"X-Tandem-Pattern", pattern}});
    ASSERT_EQ(r.status, 200) << pattern << ": " << r.body;
  }
  auto streamed = post(gateway.port(), "/v1/completions", completion("Once upon a time", 4, true),
                       {{"X-Tandem-Pattern", "cloud"}});
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  ASSERT_EQ(post(gateway.port(), "/v1/tandem/canary", json::object()).status, 200);
  const json stats = fault.stats()["requests"];
  EXPECT_GE(stats.value("fault-500", 0), 1) << "the fallback was exercised";
  EXPECT_GE(stats.value("fault-500-x1", 0), 2) << "the retry was exercised";
  expect_audit_matches_recorder(gateway, fault, {"answer", "verify", "continue", "canary"});
  const json sent =
      request(gateway.port(), "GET", "/v1/tandem/status").json_body()["privacy"]["egress"]["sent"];
  EXPECT_EQ(sent["answer"].get<int>() + sent["verify"].get<int>() + sent["continue"].get<int>() +
                sent["canary"].get<int>(),
            static_cast<int>(recorded(fault).size()))
      << sent.dump();
}

TEST(EgressGatewayTest, ShadowTrafficIsAuditedWithTheHashOfItsBytes) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      egress_yaml(fault.base_url(), "  pattern: cascade\n  shadow: {enabled: true, sample: 1}\n"));
  auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once upon a time", 4));
  ASSERT_EQ(r.status, 200) << r.body;
  gateway.gateway().flush_traces();
  eventually([&] { return !recorded(fault).empty(); });
  expect_audit_matches_recorder(gateway, fault, {"answer"});
  // A private query is not shadowed: rules are not preferences.
  request(fault.port(), "POST", "/control/reset");
  auto pinned = post(gateway.port(), "/v1/chat/completions",
                     chat("tandem", "Remind jane.doe@example.org of the meeting", 4));
  ASSERT_EQ(pinned.status, 200) << pinned.body;
  EXPECT_EQ(pinned.json_body()["tandem"]["tier"], "edge");
  EXPECT_TRUE(recorded(fault).empty());
}

// A gateway whose routing database loses its audit table once it runs: every audit row it then
// tries to store fails, as on a database error or a full disk.
class GatewayWithBrokenAudit {
 public:
  GatewayWithBrokenAudit(const FaultUpstream& fault, const std::string& name,
                         const std::string& routing, const std::string& extra = "")
      : db_(::testing::TempDir() + "egress-" + name + "-" + std::to_string(::getpid()) + ".db") {
    std::filesystem::remove(db_);
    gateway_ = std::make_unique<GatewayUnderTest>(
        egress_yaml(fault.base_url(), routing, "  database: " + db_ + "\n" + extra));
    auto other = store::Database::open(db_).value();
    EXPECT_TRUE(other->acquire().exec("DROP TABLE cloud_audit").ok());
  }
  ~GatewayWithBrokenAudit() {
    gateway_.reset();
    std::filesystem::remove(db_);
  }
  GatewayUnderTest& operator*() { return *gateway_; }

 private:
  std::string db_;
  std::unique_ptr<GatewayUnderTest> gateway_;
};

TEST(EgressGatewayTest, ASendTheAuditCannotRecordIsRefusedBeforeAnyByteLeaves) {
  FaultUpstream fault;
  GatewayWithBrokenAudit broken(fault, "audit", "  pattern: ingress\n  ingress: {threshold: 0}\n");
  GatewayUnderTest& gateway = *broken;
  auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once upon a time", 4));
  ASSERT_EQ(r.status, 200) << r.body;
  const json t = r.json_body()["tandem"];
  EXPECT_EQ(t["tier"], "edge") << "the edge answers instead: " << t.dump();
  EXPECT_FALSE(t["data_left_device"].get<bool>());
  EXPECT_EQ(metric(gateway, "tandem_egress_refusals_total",
                   {{"purpose", "answer"}, {"reason", "audit_unavailable"}}),
            1.0);
  const json egress =
      request(gateway.port(), "GET", "/v1/tandem/status").json_body()["privacy"]["egress"];
  EXPECT_EQ(egress["refused"]["audit_unavailable"], 1) << egress.dump();
  EXPECT_TRUE(recorded(fault).empty());

  // Asked for the cloud model by name, there is no edge to fall back to by choice: 503.
  auto named = post(gateway.port(), "/v1/chat/completions", chat("big", "Once upon a time", 4));
  EXPECT_TRUE(named.status == 503 || named.json_body()["tandem"]["tier"] == "edge") << named.body;
  EXPECT_TRUE(recorded(fault).empty());
}

TEST(EgressGatewayTest, ARefusedEscalationLeavesTheCascadeItsEdgeDraft) {
  FaultUpstream fault;
  // Every draft escalates; the escalation's audit row cannot be stored.
  GatewayWithBrokenAudit broken(fault, "cascade",
                                "  pattern: cascade\n  cascade: {threshold: 1}\n");
  GatewayUnderTest& gateway = *broken;
  for (const bool stream : {false, true}) {
    auto r =
        post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once upon a time", 4, stream));
    ASSERT_EQ(r.status, 200) << r.body;
    const json t = decision_of(r, stream);
    EXPECT_EQ(t["tier"], "edge") << t.dump();
    EXPECT_EQ(t["pattern"], "cascade") << t.dump();
    EXPECT_FALSE(t["data_left_device"].get<bool>());
    ASSERT_FALSE(t["fallbacks"].empty()) << t.dump();
    EXPECT_NE(t["fallbacks"][0]["reason"].get<std::string>().find("audit"), std::string::npos)
        << t.dump();
  }
  EXPECT_EQ(metric(gateway, "tandem_egress_refusals_total",
                   {{"purpose", "answer"}, {"reason", "audit_unavailable"}}),
            2.0);
  EXPECT_TRUE(recorded(fault).empty());
}

TEST(EgressGatewayTest, WithTheAuditNotRequiredALostRowDoesNotStopTheSend) {
  FaultUpstream fault;
  GatewayWithBrokenAudit broken(fault, "lenient", "  pattern: ingress\n  ingress: {threshold: 0}\n",
                                "operations:\n  audit: {required: false}\n");
  GatewayUnderTest& gateway = *broken;
  auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once upon a time", 4));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "cloud");
  EXPECT_EQ(recorded(fault).size(), 1u);
}

TEST(EgressGatewayTest, ContentTheScanCannotReadFollowsThePolicy) {
  const json image_request = {
      {"model", "tandem"},
      {"max_tokens", 2},
      {"messages",
       {{{"role", "user"},
         {"content",
          {{{"type", "text"}, {"text", "What is in this picture?"}},
           {{"type", "image_url"},
            {"image_url", {{"url", "https://example.com/id-card.png"}}}}}}}}}};
  FaultUpstream fault;
  {
    GatewayUnderTest edge_only(egress_yaml(fault.base_url(), "  pattern: cascade\n"));
    auto r = post(edge_only.port(), "/v1/chat/completions", image_request);
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.json_body()["error"]["code"], "private_data_needs_cloud");
    EXPECT_NE(r.body.find("image_url in messages[0].content[1]"), std::string::npos) << r.body;
  }
  {
    GatewayUnderTest refuse(egress_yaml(fault.base_url(),
                                        "  pattern: cascade\n"
                                        "  privacy: {opaque_content: refuse}\n"));
    auto r = post(refuse.port(), "/v1/chat/completions", image_request);
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.json_body()["error"]["code"], "opaque_content_refused");
  }
  EXPECT_TRUE(recorded(fault).empty());
  {
    GatewayUnderTest allow(egress_yaml(fault.base_url(),
                                       "  pattern: cascade\n"
                                       "  privacy: {opaque_content: allow}\n"));
    auto r = post(allow.port(), "/v1/chat/completions", image_request);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json_body()["tandem"]["tier"], "cloud");
    EXPECT_EQ(recorded(fault).size(), 1u);
    // A local-only request keeps even allowed opaque content home.
    auto local = post(allow.port(), "/v1/chat/completions", image_request,
                      {{"X-Tandem-Privacy", "local-only"}});
    ASSERT_EQ(local.status, 400) << local.body;
    EXPECT_EQ(local.json_body()["error"]["code"], "private_data_needs_cloud");
    EXPECT_EQ(recorded(fault).size(), 1u);
  }
}

}  // namespace
}  // namespace tandem::test
