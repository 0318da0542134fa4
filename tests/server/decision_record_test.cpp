#include <nlohmann/json.hpp>
#include <string>

#include <gtest/gtest.h>

#include "server/gateway.h"
#include "server/responses.h"

namespace tandem::server {
namespace {

using nlohmann::json;

// A record with every part present.
DecisionRecord full_record() {
  DecisionRecord record;
  record.tier = "cloud";
  record.tiers = {"edge", "cloud"};
  record.pattern = "cascade";
  record.reasons = {"cascade.escalated", "ingress.below \"cascade\""};
  record.routing = {{"decision", "cascade"}, {"complexity", 0.25}};
  record.edge_model = "tiny";
  record.edge_sha256 = "abc123";
  record.cloud_upstream = "openai";
  record.cloud_model = "gpt-4o-mini";
  record.edge_usage = TierUsage{12, 8, 3};  // prompt, completion, cached
  record.cloud_usage = TierUsage{12, 40, 0};
  record.cloud_cost_usd = 0.000123;
  record.cloud_prices = config::Prices{0.15, 0.6, 0.0};
  record.data_left_device = true;
  record.ttft_ms = 12.5;
  record.latency_ms = 104.516938;
  record.fallbacks = {{"cloud:openai", "cloud:backup", "timeout"}};
  record.degraded = "edge throttled";
  record.confidence = {{"mean_logprob", -0.5}};
  record.escalation = {{"at_token", 4}};
  record.verification = {{"verdict", "revise"}};
  record.revision = {{"id", "rev_1"}};
  record.collaboration = {{"handoffs", 2}};
  record.review = {{"ticket", "t_1"}};
  record.consistency = {{"hit", false}};
  record.shadow = {{"sampled", true}};
  return record;
}

// The record is written straight to text, in the form nlohmann::json writes it (keys in name
// order, its number forms): clients and stored review tickets see the same bytes as before.
TEST(DecisionRecordTest, TheTextIsWhatNlohmannWouldWrite) {
  for (const DecisionRecord& record : {DecisionRecord{}, full_record()}) {
    const std::string text = record.json_text();
    EXPECT_EQ(text, dump(json::parse(text)));
  }
}

TEST(DecisionRecordTest, EveryPartAndTheCost) {
  const json out = full_record().to_json();
  EXPECT_EQ(out["tier"], "cloud");
  EXPECT_EQ(out["tiers"], json({"edge", "cloud"}));
  EXPECT_EQ(out["reasons"][1], "ingress.below \"cascade\"");
  EXPECT_EQ(out["models"]["edge"], json({{"name", "tiny"}, {"sha256", "abc123"}}));
  EXPECT_EQ(out["models"]["cloud"], json({{"upstream", "openai"}, {"model", "gpt-4o-mini"}}));
  EXPECT_EQ(out["usage"]["edge"],
            json({{"prompt_tokens", 12}, {"cached_prompt_tokens", 3}, {"completion_tokens", 8}}));
  EXPECT_EQ(out["fallbacks"][0]["reason"], "timeout");
  EXPECT_EQ(out["degraded"]["reason"], "edge throttled");
  for (const char* part : {"routing", "confidence", "escalation", "verification", "revision",
                           "collaboration", "review", "consistency", "shadow"}) {
    EXPECT_TRUE(out.contains(part)) << part;
  }
  // All cloud: the prompt once and, the answer being a collaboration, both tiers' completion
  // tokens (8 + 40) at the cloud's prices.
  const double all_cloud = (12 * 0.15 + 48 * 0.6) / 1e6;
  EXPECT_DOUBLE_EQ(out["cost_usd"]["all_cloud"].get<double>(), all_cloud);
  EXPECT_DOUBLE_EQ(out["cost_usd"]["saved"].get<double>(), all_cloud - 0.000123);
  EXPECT_EQ(out["cost_usd"], full_record().cost_json());
}

TEST(DecisionRecordTest, AnEmptyRecordHasNullsWhereNothingRan) {
  const json out = DecisionRecord{}.to_json();
  EXPECT_TRUE(out["tier"].is_null());
  EXPECT_TRUE(out["pattern"].is_null());
  EXPECT_TRUE(out["models"]["edge"].is_null());
  EXPECT_TRUE(out["models"]["cloud"].is_null());
  EXPECT_TRUE(out["usage"]["edge"].is_null());
  EXPECT_TRUE(out["degraded"].is_null());
  EXPECT_TRUE(out["cost_usd"]["all_cloud"].is_null());
  EXPECT_TRUE(out["cost_usd"]["edge"].is_number_float());
  EXPECT_FALSE(out.contains("routing"));
  EXPECT_FALSE(out.contains("shadow"));
}

}  // namespace
}  // namespace tandem::server
