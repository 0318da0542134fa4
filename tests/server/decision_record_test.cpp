#include <nlohmann/json.hpp>
#include <string>

#include <gtest/gtest.h>

#include "routing/router.h"
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
  record.routing = RoutingPart{};
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
  record.confidence =
      ConfidencePart{routing::ConfidenceSnapshot{4, -0.5, -1.0, 0.5, 0.2, 0.2}, 0.5};
  record.escalation = EscalationPart{"edge confidence 0.2 < 0.5", false, false, 4, 4, std::nullopt};
  record.verification =
      VerificationPart{"match", "agreed", std::nullopt, std::nullopt, std::nullopt};
  record.revision = Revision{"rev_1", "edge", "cloud", "low confidence"};
  record.collaboration = CollaborationPart{2, 8, 40, 2.5, {}, std::nullopt};
  record.review =
      ReviewPart{"t_1", "pending_review", "legal", "/v1/tandem/reviews/t_1", std::nullopt};
  record.consistency = ConsistencyPart{"acme", false, std::nullopt};
  record.shadow = ShadowPart{true, "cascade", "pending", std::nullopt};
  return record;
}

// A record as a request leaves it: the router's own explanation of a prompt (a privacy finding,
// a review rule, hints, a remembered tier), every other part in the shape its pattern gives it.
DecisionRecord realistic_record() {
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
  input.hints.client = "acme";
  input.hints.latency_budget_ms = 250;
  input.hints.pattern = "cascade";
  input.hints.cloud_only_fields = {"response_format"};
  routing::RouteSignals signals = (*router)->signals(input);
  signals.opaque.push_back({"messages[0].content[1]", "image_url"});
  signals.remembered = routing::RememberedTier{routing::Tier::kCloud, "escalated", 1234};
  signals.escalation_capped = true;
  routing::HealthSnapshot health;
  health.cloud_online = false;
  health.edge_throttled = true;
  const routing::Decision decision = (*router)->decide(signals, health);

  DecisionRecord record = full_record();
  record.routing = (*router)->explanation(input, signals, decision, health, false);
  record.confidence =
      ConfidencePart{routing::ConfidenceSnapshot{17, -0.42, -3.125, 0.9, 2.3, 0.61}, 0.5};
  record.escalation = EscalationPart{
      "edge confidence 0.610000 < 0.700000", false, true, 17, 17, JudgedConfidence{0.27}};
  record.verification = VerificationPart{"prompt", "disagreed_unrevised", "upstream timed out",
                                         std::nullopt, "No, it is \xff wrong."};
  record.revision = Revision{"rev-1", "edge", "cloud", "the cloud disagreed (prompt)"};
  record.collaboration = CollaborationPart{
      1,
      20,
      8,
      2.5,
      {{"edge", 20, CollaborationSegment::EdgePrompt{40, 5}}, {"cloud", 8, std::nullopt}},
      "timeout"};
  record.review = ReviewPart{"rt_9", "pending_review", "the cloud is unsure too",
                             "/v1/tandem/reviews/rt_9", std::nullopt};
  record.consistency = ConsistencyPart{"acme", true, ConsistencyPart::Override{true, "edge"}};
  record.shadow = ShadowPart{true, "cascade", "compared", ShadowPart::Comparison{false, 0.4}};
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

// The text of a realistic record, byte for byte as the gateway wrote it when the parts were
// nlohmann::json values: the native parts must not change a single byte clients see.
TEST(DecisionRecordTest, ARealisticRecordKeepsItsText) {
  const std::string golden =
      R"j({"collaboration":{"cloud_failure":"timeout","cloud_tokens":8,"edge_tokens":20,"e)j"
      R"j(ntropy_threshold":2.5,"handoffs":1,"segments":[{"cached_prompt_tokens":5,"prompt)j"
      R"j(_tokens":40,"tier":"edge","tokens":20},{"tier":"cloud","tokens":8}]},"confidence)j"
      R"j(":{"combined":0.61,"mean_entropy":0.9,"mean_logprob":-0.42,"mean_margin":2.3,"mi)j"
      R"j(n_logprob":-3.125,"threshold":0.5,"tokens":17},"consistency":{"client":"acme","o)j"
      R"j(verrode":true,"used":true,"would_have_been":"edge"},"cost_usd":{"all_cloud":3.06)j"
      R"j(e-05,"cloud":0.000123,"edge":0.0,"saved":-9.240000000000001e-05},"data_left_devi)j"
      R"j(ce":true,"degraded":{"reason":"edge throttled"},"escalation":{"at_token":17,"clo)j"
      R"j(ud_confidence":0.27,"early_stop":false,"edge_tokens_discarded":17,"prefix_decisi)j"
      R"j(on":true,"reason":"edge confidence 0.610000 < 0.700000"},"fallbacks":[{"from":"c)j"
      R"j(loud:openai","reason":"timeout","to":"cloud:backup"}],"latency_ms":104.516938,"m)j"
      R"j(odels":{"cloud":{"model":"gpt-4o-mini","upstream":"openai"},"edge":{"name":"tiny)j"
      R"j(","sha256":"abc123"}},"pattern":"cascade","reasons":["cascade.escalated","ingres)j"
      R"j(s.below \"cascade\""],"review":{"poll":"/v1/tandem/reviews/rt_9","reason":"the c)j"
      R"j(loud is unsure too","status":"pending_review","ticket":"rt_9"},"revision":{"from)j"
      R"j(_tier":"edge","id":"rev-1","reason":"the cloud disagreed (prompt)","to_tier":"cl)j"
      R"j(oud"},"routing":{"decision":{"cloud_allowed":false,"from_memory":false,"notice":)j"
      R"j(null,"pattern":"none","reasons":[{"code":"privacy.detected","detail":"the reques)j"
      R"j(t contains email (***@***.com) in messages[0].content"},{"code":"privacy.needs_c)j"
      R"j(loud","detail":"the request uses response_format, which only the cloud model pro)j"
      R"j(vides, and its data may not leave the device"}],"tier":null},"signals":{"client")j"
      R"j(:"acme","cloud_only_fields":["response_format"],"complexity":{"model":"sha256:b2)j"
      R"j(357fc11de9bd91","score":0.11886670309608915,"threshold":0.8245777529136911},"con)j"
      R"j(sistency":{"age_ms":1234,"reason":"escalated","tier":"cloud"},"escalation_capped)j"
      R"j(":true,"health":{"cloud_configured":true,"cloud_online":false,"edge_available":t)j"
      R"j(rue,"edge_throttled":true},"kind":"open","latency_budget_ms":250,"privacy":{"fin)j"
      R"j(dings":[{"detector":"email","field":"messages[0].content","length":16,"masked":")j"
      R"j(***@***.com","offset":5}],"header_local_only":false,"key_local_only":false,"opaq)j"
      R"j(ue":[{"field":"messages[0].content[1]","kind":"image_url"}]},"prompt":{"chars":4)j"
      R"j(8,"turns":3},"requested_pattern":"cascade","review":{"findings":[{"detector":"ke)j"
      R"j(yword:legal","length":7,"masked":"***","offset":32}],"header":false}},"threshold)j"
      R"j(s":{"cascade":0.5,"collaborate_entropy":2.5,"edge_latency_budget_ms":300,"ingres)j"
      R"j(s":0.8245777529136911,"review_cloud":0.3}},"shadow":{"agreed":false,"f1":0.4,"sa)j"
      R"j(mpled":true,"status":"compared","would_have_been":"cascade"},"tier":"cloud","tie)j"
      R"j(rs":["edge","cloud"],"ttft_ms":12.5,"usage":{"cloud":{"cached_prompt_tokens":0,")j"
      R"j(completion_tokens":40,"prompt_tokens":12},"edge":{"cached_prompt_tokens":3,"comp)j"
      R"j(letion_tokens":8,"prompt_tokens":12}},"verification":{"cloud_reply":"No, it is �)j"
      R"j( wrong.","error":"upstream timed out","judge":"prompt","status":"disagreed_unrev)j"
      R"j(ised"}})j";
  EXPECT_EQ(realistic_record().json_text(), golden);
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
