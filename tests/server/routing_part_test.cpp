// The decision record's `routing` part: the server's JsonWriter text of a routing explanation
// against routing::to_json (what `tandem route` and /v1/tandem/route print), for explanations
// with every field set and with none.

#include <nlohmann/json.hpp>
#include <string>

#include <gtest/gtest.h>

#include "routing/router.h"
#include "server/decision_parts_json.h"
#include "server/responses.h"

namespace tandem::server {
namespace {

using nlohmann::json;

std::string text_of(const RoutingPart& part) {
  std::string text;
  JsonWriter out(text);
  write_json(out, part);
  return text;
}

// The router's explanation of a prompt with an e-mail address (a privacy finding in a field),
// a review keyword, every hint, opaque content and a remembered tier.
RoutingPart explained(bool detailed) {
  config::RoutingConfig config;
  config.review.enabled = true;
  config.review.keywords = {{"legal", {"lawsuit"}}};
  auto router = routing::Router::create(config);
  EXPECT_TRUE(router.ok());
  const std::string prompt = "Mail jane@example.com about the lawsuit, \"fast\".";
  const json body = {{"messages", {{{"role", "user"}, {"content", prompt}}}}};
  routing::RouteInput input;
  input.document = &body;
  input.text = prompt;
  input.prompt.last_user = prompt;
  input.prompt.total_chars = prompt.size();
  input.prompt.turns = 3;
  input.hints.privacy_header = true;
  input.hints.review_header = true;
  input.hints.client = "acme";
  input.hints.latency_budget_ms = 250;
  input.hints.pattern = "cascade";
  input.hints.cloud_only_fields = {"response_format", "tools"};
  routing::RouteSignals signals = (*router)->signals(input);
  signals.opaque.push_back({"messages[0].content[1]", "image_url"});
  signals.remembered = routing::RememberedTier{routing::Tier::kCloud, "escalated", 1234};
  signals.escalation_capped = true;
  routing::HealthSnapshot health;
  health.cloud_online = false;
  health.edge_throttled = true;
  const routing::Decision decision = (*router)->decide(signals, health);
  return (*router)->explanation(input, signals, decision, health, detailed);
}

TEST(RoutingPartTest, AFullExplanationIsWrittenAsTheRouteApiWritesIt) {
  for (const bool detailed : {false, true}) {
    const RoutingPart part = explained(detailed);
    ASSERT_FALSE(part.signals.privacy.empty());
    ASSERT_FALSE(part.signals.privacy[0].field.empty());
    ASSERT_FALSE(part.signals.review.empty());
    EXPECT_EQ(text_of(part), dump(routing::to_json(part))) << "detailed: " << detailed;
  }
}

TEST(RoutingPartTest, EveryFieldReadsBack) {
  RoutingPart part = explained(true);
  part.decision.notice = "the cloud is offline";
  part.decision.tier = routing::Tier::kEdge;
  const json out = json::parse(text_of(part));
  const json& signals = out["signals"];
  EXPECT_EQ(out["decision"]["notice"], "the cloud is offline");
  EXPECT_EQ(out["decision"]["tier"], "edge");
  EXPECT_EQ(out["decision"]["pattern"], routing::pattern_name(part.decision.pattern));
  EXPECT_EQ(out["decision"]["reasons"].size(), part.decision.reasons.size());
  EXPECT_EQ(signals["privacy"]["findings"][0]["detector"], "email");
  EXPECT_EQ(signals["privacy"]["findings"][0]["field"], "messages[0].content");
  EXPECT_TRUE(signals["privacy"]["header_local_only"].get<bool>());
  EXPECT_EQ(signals["privacy"]["opaque"][0]["kind"], "image_url");
  EXPECT_EQ(signals["review"]["findings"][0]["detector"], "keyword:legal");
  EXPECT_TRUE(signals["review"]["header"].get<bool>());
  EXPECT_EQ(signals["complexity"]["features"].size(), routing::kFeatureCount);
  EXPECT_EQ(signals["complexity"]["threshold"], part.thresholds.ingress);
  EXPECT_EQ(signals["latency_budget_ms"], 250);
  EXPECT_EQ(signals["client"], "acme");
  EXPECT_EQ(signals["requested_pattern"], "cascade");
  EXPECT_EQ(signals["cloud_only_fields"], json({"response_format", "tools"}));
  EXPECT_EQ(signals["consistency"],
            json({{"tier", "cloud"}, {"reason", "escalated"}, {"age_ms", 1234}}));
  EXPECT_TRUE(signals["escalation_capped"].get<bool>());
  EXPECT_FALSE(signals["health"]["cloud_online"].get<bool>());
  EXPECT_TRUE(signals["health"]["edge_throttled"].get<bool>());
  EXPECT_EQ(signals["prompt"]["turns"], 3);
  EXPECT_EQ(out["thresholds"]["edge_latency_budget_ms"], 300);
  EXPECT_EQ(out["thresholds"]["review_cloud"], 0.3);
  EXPECT_EQ(text_of(part), dump(routing::to_json(part)));
}

TEST(RoutingPartTest, AnEmptyExplanationHasItsNulls) {
  const RoutingPart empty;
  EXPECT_EQ(text_of(empty), dump(routing::to_json(empty)));
  const json out = json::parse(text_of(empty));
  EXPECT_TRUE(out["decision"]["tier"].is_null());
  EXPECT_TRUE(out["decision"]["notice"].is_null());
  EXPECT_TRUE(out["signals"]["client"].is_null());
  EXPECT_TRUE(out["signals"]["consistency"].is_null());
  EXPECT_TRUE(out["signals"]["latency_budget_ms"].is_null());
  EXPECT_TRUE(out["signals"]["requested_pattern"].is_null());
  EXPECT_FALSE(out["signals"]["complexity"].contains("features"));
}

}  // namespace
}  // namespace tandem::server
