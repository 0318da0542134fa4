// Replay: recorded requests decided again under a new configuration, with hand-made records
// (the store and the gateway are not involved: tests/cli covers `tandem replay` end to end).

#include "eval/replay.h"

#include <gtest/gtest.h>

namespace tandem::eval {

using namespace routing;  // NOLINT(google-build-using-namespace): the policy types replayed
namespace {

config::RoutingConfig cascade_config() {
  config::RoutingConfig cfg;
  cfg.pattern = "cascade";
  cfg.ingress.threshold = 0.5;
  return cfg;
}

std::shared_ptr<const Router> router(const config::RoutingConfig& cfg) {
  auto made = Router::create(cfg);
  EXPECT_TRUE(made) << made.error().message;
  return made ? *made : nullptr;
}

ConfidenceSnapshot signals(double mean_logprob) {
  ConfidenceSnapshot s;
  s.tokens = 12;
  s.mean_logprob = mean_logprob;
  s.min_logprob = mean_logprob * 3;
  s.combined = combined_confidence(config::ConfidenceWeights{}, mean_logprob, s.min_logprob, 0, 0);
  return s;
}

// A request the default cascade decided: the edge answered when its confidence reached 0.5.
RecordedRequest cascade_row(const std::string& id, const std::string& kind, double mean_logprob) {
  RecordedRequest r;
  r.request_id = id;
  r.pattern = "cascade";
  r.kind = kind;
  r.reason_codes = {"pattern.cascade"};
  r.features.assign(kFeatureCount, 0.0F);
  r.confidence = signals(mean_logprob);
  const bool escalated = r.confidence->combined < 0.5;
  r.tier = escalated ? "cloud" : "edge";
  r.escalated = escalated;
  r.cost_edge = 0.0;
  r.cost_all_cloud = 0.002;
  r.cost_cloud = escalated ? 0.002 : 0.0;
  return r;
}

RecordedRequest cloud_row(const std::string& id, const std::string& code) {
  RecordedRequest r;
  r.request_id = id;
  r.pattern = "cloud";
  r.tier = "cloud";
  r.kind = "open";
  r.reason_codes = {code};
  r.features.assign(kFeatureCount, 0.0F);
  r.cost_cloud = 0.003;
  r.cost_all_cloud = 0.003;
  return r;
}

ReplayReport replay(const config::RoutingConfig& cfg, const std::vector<RecordedRequest>& rows,
                    size_t max_changes = 20) {
  Replayer replayer(router(cfg), max_changes);
  for (const auto& r : rows) {
    replayer.add(r);
  }
  return replayer.report();
}

TEST(Replay, TheSameConfigurationChangesNothing) {
  const std::vector<RecordedRequest> rows = {cascade_row("a", "math", -0.1),
                                             cascade_row("b", "open", -1.5),
                                             cascade_row("c", "code", -0.05)};
  ASSERT_EQ(rows[1].tier, "cloud");
  const ReplayReport report = replay(cascade_config(), rows);
  EXPECT_EQ(report.requests, 3U);
  EXPECT_EQ(report.redecided, 3U);
  EXPECT_EQ(report.changed, 0U);
  EXPECT_TRUE(report.changes.empty());
  EXPECT_EQ(report.before.edge, 2U);
  EXPECT_EQ(report.before.cloud, 1U);
  EXPECT_EQ(report.before.escalated, 1U);
  EXPECT_EQ(report.after.edge, report.before.edge);
  EXPECT_EQ(report.after.escalated, report.before.escalated);
  EXPECT_DOUBLE_EQ(report.cost_after_usd, report.cost_before_usd);
  EXPECT_DOUBLE_EQ(report.cost_before_usd, 0.002);
  EXPECT_EQ(report.quality_requests, 3U);
  EXPECT_NEAR(report.quality_after, report.quality_before, 1e-12);
  EXPECT_EQ(report.labelled, 0U);
}

TEST(Replay, AKindsOwnThresholdEscalatesOnlyThatKind) {
  config::RoutingConfig strict = cascade_config();
  config::KindCascade math;
  math.threshold = 0.9;
  strict.cascade.kinds["math"] = math;
  const RecordedRequest sure_math = cascade_row("m1", "math", -0.1);
  const RecordedRequest sure_open = cascade_row("o1", "open", -0.1);
  ASSERT_EQ(sure_math.tier, "edge");
  ASSERT_LT(sure_math.confidence->combined, 0.9);
  const ReplayReport report = replay(strict, {sure_math, sure_open});
  ASSERT_EQ(report.changed, 1U);
  ASSERT_EQ(report.changes.size(), 1U);
  const ReplayChange& c = report.changes[0];
  EXPECT_EQ(c.request_id, "m1");
  EXPECT_EQ(c.kind, "math");
  EXPECT_EQ(c.from_tier, "edge");
  EXPECT_EQ(c.to_tier, "cloud (escalated)");
  EXPECT_EQ(c.reason, "pattern.cascade");
  EXPECT_NE(c.detail.find("< 0.900 (math): escalated"), std::string::npos) << c.detail;
  EXPECT_EQ(report.after.edge, 1U);
  EXPECT_EQ(report.after.escalated, 1U);
  // The escalated request now pays the cloud's price for its answer.
  EXPECT_DOUBLE_EQ(report.cost_before_usd, 0.0);
  EXPECT_DOUBLE_EQ(report.cost_after_usd, 0.002);
  // Its quality moves from the edge's P(good) to the cloud's reference 1.
  const double p = sure_math.confidence->combined;
  EXPECT_NEAR(report.quality_before, (p + p) / 2, 1e-12);
  EXPECT_NEAR(report.quality_after, (1.0 + p) / 2, 1e-12);
}

TEST(Replay, NewWeightsChangeTheEdgesConfidence) {
  config::RoutingConfig lenient = cascade_config();
  lenient.cascade.weights.bias = 10;  // every recorded draft is now confident
  const RecordedRequest unsure = cascade_row("u", "open", -1.5);
  ASSERT_EQ(unsure.tier, "cloud");
  const ReplayReport report = replay(lenient, {unsure});
  ASSERT_EQ(report.changes.size(), 1U);
  EXPECT_EQ(report.changes[0].from_tier, "cloud (escalated)");
  EXPECT_EQ(report.changes[0].to_tier, "edge");
  EXPECT_NE(report.changes[0].detail.find("the edge answers"), std::string::npos);
  EXPECT_DOUBLE_EQ(report.cost_after_usd, 0.0);
  EXPECT_NEAR(report.quality_after,
              combined_confidence(lenient.cascade.weights, -1.5, -4.5, 0, 0,
                                  Router::create(lenient).value()->model().score({})),
              1e-12);
}

TEST(Replay, ALabelOutranksTheConfidenceEstimate) {
  RecordedRequest wrong = cascade_row("w", "factoid", -0.05);
  wrong.edge_good = false;
  RecordedRequest right = cascade_row("r", "factoid", -0.05);
  right.edge_good = true;
  const ReplayReport report = replay(cascade_config(), {wrong, right});
  EXPECT_EQ(report.labelled, 2U);
  EXPECT_DOUBLE_EQ(report.quality_before, 0.5);
  EXPECT_DOUBLE_EQ(report.quality_after, 0.5);
}

TEST(Replay, TheIngressThresholdMovesRequestsBetweenTiers) {
  config::RoutingConfig ingress = cascade_config();
  ingress.pattern = "ingress";
  ingress.ingress.threshold = 0.0;  // everything is complex: the cloud
  RecordedRequest edge = cascade_row("e", "open", -0.1);
  edge.reason_codes = {"ingress.simple"};
  RecordedRequest unpriced = edge;
  unpriced.request_id = "n";
  unpriced.cost_all_cloud.reset();
  const ReplayReport to_cloud = replay(ingress, {edge, unpriced});
  EXPECT_EQ(to_cloud.after.cloud, 2U);
  EXPECT_EQ(to_cloud.after.escalated, 0U);
  ASSERT_EQ(to_cloud.changes.size(), 2U);
  EXPECT_EQ(to_cloud.changes[0].reason, "ingress.complex");
  EXPECT_DOUBLE_EQ(to_cloud.cost_after_usd, 0.002);
  EXPECT_EQ(to_cloud.cost_unknown, 1U);

  // The other way: cloud answers move into the cascade, where nothing recorded can judge
  // the edge's draft.
  ingress.ingress.threshold = 1.0;
  const ReplayReport to_edge = replay(ingress, {cloud_row("c", "ingress.complex")});
  EXPECT_EQ(to_edge.after.edge, 1U);
  EXPECT_EQ(to_edge.unjudged_cascade, 1U);
  EXPECT_EQ(to_edge.quality_requests, 0U);  // no estimate for the edge's answer
  EXPECT_DOUBLE_EQ(to_edge.cost_after_usd, 0.0);
  bool noted = false;
  for (const auto& note : to_edge.notes) {
    noted = noted || note.find("no recorded edge confidence") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

TEST(Replay, HealthRulesNamedModelsAndFailuresKeepTheirTier) {
  config::RoutingConfig all_cloud = cascade_config();
  all_cloud.pattern = "cloud";
  RecordedRequest offline = cascade_row("off", "open", -0.1);
  offline.pattern = "edge";
  offline.reason_codes = {"cloud.offline"};
  offline.confidence.reset();
  const RecordedRequest tools = cloud_row("tools", "capability.cloud_only");
  const RecordedRequest named = cloud_row("named", "model.cloud");
  RecordedRequest failed = cascade_row("failed", "open", -0.1);
  failed.tier = "none";
  const ReplayReport report = replay(all_cloud, {offline, tools, named, failed});
  EXPECT_EQ(report.redecided, 0U);
  EXPECT_EQ(report.kept_health, 2U);
  EXPECT_EQ(report.kept_explicit, 1U);
  EXPECT_EQ(report.kept_failed, 1U);
  EXPECT_EQ(report.changed, 0U);
  EXPECT_EQ(report.after.edge, 1U);
  EXPECT_EQ(report.after.cloud, 2U);
  EXPECT_EQ(report.after.none, 1U);
}

TEST(Replay, PrivacyFindingsFollowTheNewConfiguration) {
  config::RoutingConfig cfg = cascade_config();
  cfg.pattern = "cloud";
  cfg.privacy.disabled_detectors = {"email"};
  cfg.privacy.keywords = {{"medical", {"diagnosis"}}};
  auto pinned = [](const std::string& id, const std::string& detector) {
    RecordedRequest r;
    r.request_id = id;
    r.pattern = "edge";
    r.tier = "edge";
    r.kind = "open";
    r.reason_codes = {"privacy.detected", "privacy.edge_only"};
    r.privacy_detectors = {detector};
    r.features.assign(kFeatureCount, 0.0F);
    r.cost_all_cloud = 0.001;
    return r;
  };
  const ReplayReport report =
      replay(cfg, {pinned("email", "email"), pinned("phone", "phone"),
                   pinned("gone", "pattern:employee_id"), pinned("kept", "keyword:medical")});
  // The e-mail detector is off and the employee-id pattern is gone: those two may leave.
  ASSERT_EQ(report.changes.size(), 2U);
  EXPECT_EQ(report.changes[0].request_id, "email");
  EXPECT_EQ(report.changes[0].to_tier, "cloud");
  EXPECT_EQ(report.changes[0].reason, "pattern.cloud");
  EXPECT_EQ(report.changes[1].request_id, "gone");
  EXPECT_EQ(report.after.edge, 2U);

  cfg.privacy.enabled = false;  // no scanner at all
  EXPECT_EQ(replay(cfg, {pinned("phone", "phone")}).after.cloud, 1U);
}

TEST(Replay, ReviewRulesApplyOnlyWhileReviewIsOn) {
  RecordedRequest legal;
  legal.request_id = "legal";
  legal.pattern = "review";
  legal.tier = "human";
  legal.kind = "open";
  legal.reason_codes = {"review.rule"};
  legal.review_rules = {"keyword:legal"};
  legal.features.assign(kFeatureCount, 0.0F);
  config::RoutingConfig on = cascade_config();
  on.pattern = "cloud";
  on.review.enabled = true;
  on.review.keywords = {{"legal", {"lawsuit"}}};
  EXPECT_EQ(replay(on, {legal}).changed, 0U);
  config::RoutingConfig off = on;
  off.review.enabled = false;
  const ReplayReport report = replay(off, {legal});
  ASSERT_EQ(report.changes.size(), 1U);
  EXPECT_EQ(report.changes[0].from_tier, "human");
  EXPECT_EQ(report.changes[0].to_tier, "cloud");
}

TEST(Replay, SpeculativeRevisesWhatTheVerificationRejected) {
  config::RoutingConfig speculative = cascade_config();
  speculative.pattern = "speculative";
  RecordedRequest rejected = cascade_row("x", "math", -0.1);
  rejected.edge_good = false;
  RecordedRequest accepted = cascade_row("y", "math", -0.1);
  accepted.edge_good = true;
  const ReplayReport report = replay(speculative, {rejected, accepted});
  EXPECT_EQ(report.after.cloud, 1U);
  EXPECT_EQ(report.after.escalated, 1U);
  EXPECT_EQ(report.after.edge, 1U);
  // The cloud verifies both: both pay its price.
  EXPECT_DOUBLE_EQ(report.cost_after_usd, 0.004);
  EXPECT_DOUBLE_EQ(report.quality_after, 1.0);
}

TEST(Replay, MissingFeaturesFallBackToTheRecordedComplexity) {
  config::RoutingConfig ingress = cascade_config();
  ingress.pattern = "ingress";
  ingress.ingress.threshold = 0.5;
  RecordedRequest r = cloud_row("f", "ingress.complex");
  r.features.clear();
  r.complexity = 0.9;
  const ReplayReport report = replay(ingress, {r});
  EXPECT_EQ(report.features_missing, 1U);
  EXPECT_EQ(report.changed, 0U);
}

TEST(Replay, ChangesAreCountedAllButListedUpToTheLimit) {
  config::RoutingConfig cloud = cascade_config();
  cloud.pattern = "cloud";
  std::vector<RecordedRequest> rows;
  for (int i = 0; i < 30; ++i) {
    rows.push_back(cascade_row("r" + std::to_string(i), "open", -0.1));
  }
  const ReplayReport report = replay(cloud, rows, 5);
  EXPECT_EQ(report.changed, 30U);
  ASSERT_EQ(report.changes.size(), 5U);
  EXPECT_EQ(report.changes[4].request_id, "r4");

  const nlohmann::json j = to_json(report);
  EXPECT_EQ(j["requests"], 30);
  EXPECT_EQ(j["changed"], 30);
  EXPECT_EQ(j["changes"].size(), 5U);
  EXPECT_DOUBLE_EQ(j["tiers"]["before"]["edge"]["share"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["tiers"]["after"]["cloud"]["share"].get<double>(), 1.0);
  EXPECT_NEAR(j["cost_usd"]["change"].get<double>(), 30 * 0.002, 1e-12);
  EXPECT_FALSE(j["quality"]["before"].is_null());
  EXPECT_NE(j["notes"][0].get<std::string>().find("consistency memory is not replayed"),
            std::string::npos);
}

}  // namespace
}  // namespace tandem::eval
