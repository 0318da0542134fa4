// `tandem eval`'s library end to end: trace files in, the server's routing code, metrics out.

#include "eval/evaluate.h"

#include <fstream>

#include <gtest/gtest.h>

#include "../support/recording_progress.h"
#include "eval/three_tier.h"

namespace tandem::eval {
namespace {

const std::string kTiny = std::string(TANDEM_TEST_DATA) + "/eval/tiny.jsonl";

EvalOptions tiny(std::string policy = "") {
  EvalOptions o;
  o.data = {kTiny};
  o.edge = "edge";
  o.cloud = "cloud";
  o.policy = std::move(policy);
  return o;
}

const PolicyResult& find(const std::vector<PolicyResult>& policies, const std::string& name) {
  for (const auto& p : policies) {
    if (p.name == name) {
      return p;
    }
  }
  throw std::runtime_error("no policy " + name);
}

TEST(Evaluate, ConfidencePolicyOnTheHandMadeTraces) {
  auto report = evaluate(tiny("confidence"));
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->rows_used, 5u);
  EXPECT_NEAR(report->edge_quality, 0.4, 1e-12);
  EXPECT_NEAR(report->cloud_quality, 0.6, 1e-12);
  const auto j = to_json(report.value());
  EXPECT_EQ(j["policy"], "confidence");
  EXPECT_NEAR(j["apgr"].get<double>(), 0.3, 1e-6);
  EXPECT_NEAR(j["cpt50"].get<double>(), 0.1, 1e-6);
  EXPECT_NEAR(j["cpt80"].get<double>(), 0.16, 1e-6);
  EXPECT_NEAR(j["cpt95"].get<double>(), 0.19, 1e-6);
  EXPECT_NEAR(j["edge_share_at_95"].get<double>(), 0.83, 1e-6);
  EXPECT_NEAR(j["cost_saved_at_95"].get<double>(), 0.73, 1e-6);
  EXPECT_NEAR(j["baselines"]["random"]["apgr"].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(j["baselines"]["oracle"]["apgr"].get<double>(), 1.5, 1e-6);
  // The curve is exact: one point per distinct confidence plus the all-edge start.
  EXPECT_EQ(j["policies"]["confidence"]["curve"].size(), 6u);
}

TEST(Evaluate, EveryPolicyByDefaultAndTasksOnRequest) {
  EvalOptions o = tiny();
  o.by_task = true;
  auto report = evaluate(o);
  ASSERT_TRUE(report) << report.error().message;
  for (const char* name :
       {"confidence", "learned", "classifier", "combined", "gated", "length", "random", "oracle"}) {
    EXPECT_TRUE(find(report->policies, name).available) << name;
  }
  EXPECT_EQ(find(report->policies, "learned").weights, "cross-fitted (5 folds by row id)");
  ASSERT_EQ(report->tasks.size(), 2u);
  EXPECT_EQ(report->tasks[0].task, "t1");
  EXPECT_EQ(report->tasks[0].rows, 2u);
  EXPECT_EQ(report->tasks[1].rows, 3u);
}

TEST(Evaluate, ReportsEachPhaseUpToItsTotal) {
  EvalOptions o = tiny();
  o.data = {std::string(TANDEM_TEST_DATA) + "/routing/sample-traces.jsonl", kTiny};
  o.edge = "llama3.1-8b";
  o.mid = "llama3.1-70b";
  o.cloud = "llama3.1-405b";
  testing_support::RecordingProgress progress;
  auto report = evaluate(o, progress);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(progress.labels(), (std::vector<std::string>{"reading traces", "routing prompts",
                                                         "cross-fitting policies"}));
  EXPECT_TRUE(progress.every_phase_completes());
  EXPECT_EQ(progress.phases()[0].total, 2u);    // files
  EXPECT_EQ(progress.phases()[1].total, 560u);  // rows, the skipped ones too
  EXPECT_EQ(progress.phases()[2].total, 4u);    // learned, combined, and the mid's two tiers
}

TEST(Evaluate, LeftOutTasksCrossFitsTheLearnedPolicyByTask) {
  EvalOptions o = tiny();
  o.left_out_tasks = true;
  auto report = evaluate(o);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(find(report->policies, "learned").weights, "cross-fitted (each task left out)");
  EXPECT_EQ(find(report->policies, "combined").weights, "cross-fitted (each task left out)");
  // The baselines do not depend on the folds.
  EXPECT_EQ(find(report->policies, "length").weights, "none: the prompt's length");
  const auto j = to_json(report.value());
  EXPECT_TRUE(j["baselines"].contains("length"));
}

TEST(Evaluate, ConfigReportsTheOperatingPoint) {
  EvalOptions o = tiny();
  auto config = config::parse_config(
      "routing:\n  pattern: cascade\n  cascade:\n    threshold: 0.5\n"
      "    weights: {bias: 0, mean_logprob: 1}\n",
      "test.yaml");
  ASSERT_TRUE(config) << config.error().message;
  o.config = config.value();
  auto report = evaluate(o);
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_TRUE(report->operating);
  // P(good) = sigmoid(confidence) < 0.5 for every row (all confidences are negative): every
  // query escalates, so the answers are the cloud's at both tiers' cost.
  EXPECT_NEAR(report->operating->cloud_share, 1.0, 1e-12);
  EXPECT_NEAR(report->operating->quality, 0.6, 1e-12);
  EXPECT_NEAR(report->operating->quality_vs_cloud, 1.0, 1e-12);
  EXPECT_NEAR(report->operating->cost_usd, 55.0, 1e-9);
  const auto j = to_json(report.value());
  for (const char* key : {"quality", "quality_vs_cloud", "cloud_share", "cost_usd"}) {
    EXPECT_TRUE(j["operating"].contains(key)) << key;
  }
}

// The default pattern as a policy: the classifier's gate in front of the raw cascade.
PolicyResult gated_with_threshold(const std::string& threshold) {
  EvalOptions o = tiny("gated");
  auto config = config::parse_config(
      "routing:\n  pattern: ingress\n  ingress: {threshold: " + threshold + "}\n", "test.yaml");
  EXPECT_TRUE(config) << config.error().message;
  o.config = config.value();
  auto report = evaluate(o);
  EXPECT_TRUE(report) << report.error().message;
  return find(report->policies, "gated");
}

TEST(Evaluate, GatedIsTheCascadeWhenTheGateTakesNothingAndOneTierWhenItTakesAll) {
  // No score reaches 1: nothing is gated, and the curve is the confidence cascade's.
  const PolicyResult nothing = gated_with_threshold("1");
  EXPECT_NEAR(nothing.summary.apgr.value(), 0.3, 1e-9);
  EXPECT_NEAR(nothing.curve.back().cost, 55.0, 1e-9);  // the edge always, the cloud on top
  // Every score reaches 0: every query goes to the cloud first as one group, a straight line
  // from all-edge, and none pays the edge.
  const PolicyResult all = gated_with_threshold("0");
  ASSERT_EQ(all.curve.size(), 2u);
  EXPECT_NEAR(all.summary.apgr.value(), 0.5, 1e-9);
  EXPECT_NEAR(all.curve.back().cost, 50.0, 1e-9);
  EXPECT_NE(all.weights.find("classifier >= 0"), std::string::npos) << all.weights;
}

TEST(Evaluate, CollaborationCannotBeReplayedFromAnswers) {
  EvalOptions o = tiny();
  o.config = config::parse_config("routing:\n  pattern: collaborate\n", "test.yaml").value();
  auto report = evaluate(o);
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message.find("collaborate"), std::string::npos);
}

TEST(Evaluate, ClearErrors) {
  EvalOptions o = tiny();
  o.edge = "nope";
  auto missing = evaluate(o);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("edge model 'nope' is not in the data"),
            std::string::npos);
  EXPECT_NE(missing.error().message.find("models present: cloud, edge"), std::string::npos);

  auto bad_policy = evaluate(tiny("best"));
  ASSERT_FALSE(bad_policy);
  EXPECT_NE(bad_policy.error().message.find("unknown policy 'best'"), std::string::npos);

  o = tiny();
  o.data = {"/nonexistent/traces.jsonl"};
  EXPECT_FALSE(evaluate(o));

  const std::string broken = ::testing::TempDir() + "/broken.jsonl";
  std::ofstream(broken) << "{\"id\": \"x\", \"prompt\": \"p\", \"models\": {\"edge\": {}}}\n";
  o.data = {broken};
  auto parse = evaluate(o);
  ASSERT_FALSE(parse);
  EXPECT_NE(parse.error().message.find("broken.jsonl:1: models.edge.score: missing"),
            std::string::npos);
}

TEST(Evaluate, DataWithoutConfidenceLeavesOnlyPromptPolicies) {
  const std::string path = ::testing::TempDir() + "/no-confidence.jsonl";
  std::ofstream(path)
      << R"({"id": "1", "prompt": "a", "models": {"e": {"score": 0}, "c": {"score": 1}}}
{"id": "2", "prompt": "b", "models": {"e": {"score": 1}, "c": {"score": 1}}}
)";
  EvalOptions o;
  o.data = {path};
  o.edge = "e";
  o.cloud = "c";
  auto report = evaluate(o);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(find(report->policies, "confidence").available);
  EXPECT_FALSE(find(report->policies, "learned").available);
  EXPECT_TRUE(find(report->policies, "classifier").available);
  EXPECT_EQ(to_json(report.value())["policy"], "classifier");
}

TEST(ThreeTier, HandComputedCascade) {
  // Two queries. q1: edge wrong (P .2), mid right (P .9), cloud right. q2: edge right (P .7),
  // mid wrong (P .1), cloud right. Costs 1 / 2 / 10.
  std::vector<Sample> s(2);
  s[0].score = {0, 1, 1};
  s[1].score = {1, 0, 1};
  for (auto& x : s) {
    x.cost = {1, 2, 10};
  }
  const auto curve = three_tier_curve(s, {0.2, 0.7}, {0.9, 0.1});
  // t <= .2: both on the edge (quality .5, cost 2). .2 < t <= .7: q1 on mid (quality 1, cost
  // 4). .7 < t <= .9: q2 escalates past a weak mid straight to the cloud (cost 16).
  // t > .9: q1 goes on to the cloud (cost 26), both right.
  ASSERT_EQ(curve.size(), 4u);
  EXPECT_NEAR(curve[0].quality, 0.5, 1e-12);
  EXPECT_NEAR(curve[0].cost, 2, 1e-12);
  EXPECT_NEAR(curve[1].quality, 1.0, 1e-12);
  EXPECT_NEAR(curve[1].mid_share, 0.5, 1e-12);
  EXPECT_NEAR(curve[1].cost, 4, 1e-12);
  EXPECT_NEAR(curve[2].cloud_share, 0.5, 1e-12);
  EXPECT_NEAR(curve[2].cost, 16, 1e-12);
  EXPECT_NEAR(curve[3].cloud_share, 1.0, 1e-12);
  EXPECT_NEAR(curve[3].mid_share, 0.0, 1e-12);
  EXPECT_NEAR(curve[3].cost, 26, 1e-12);
}

}  // namespace
}  // namespace tandem::eval
