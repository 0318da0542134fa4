// The routing policy against the golden cases in tests/routing/cases/policy_cases.yaml, plus
// the running confidence of the cascade and the consistency memory's cluster keys.

#include <random>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "routing/confidence.h"
#include "routing/query_cluster.h"
#include "routing/router.h"

namespace tandem::routing {
namespace {

struct GoldenCase {
  std::string name;
  YAML::Node node;
};

std::vector<GoldenCase> load_cases() {
  std::vector<GoldenCase> cases;
  const YAML::Node root = YAML::LoadFile(std::string(TANDEM_ROUTING_CASES) + "/policy_cases.yaml");
  for (const auto& node : root) {
    cases.push_back({node["name"].as<std::string>(), node});
  }
  return cases;
}

Tier parse_tier(const std::string& name) {
  if (name == "edge") {
    return Tier::kEdge;
  }
  if (name == "cloud") {
    return Tier::kCloud;
  }
  if (name == "human") {
    return Tier::kHuman;
  }
  return Tier::kNone;
}

class GoldenPolicy : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenPolicy, DecidesAsRecorded) {
  const YAML::Node& c = GetParam().node;
  YAML::Node document;
  if (c["routing"]) {
    document["routing"] = c["routing"];
  }
  auto config = config::parse_config(YAML::Dump(document), GetParam().name);
  ASSERT_TRUE(config) << config.error().message;
  auto router = Router::create(config->routing);
  ASSERT_TRUE(router) << router.error().message;

  const std::string prompt = c["prompt"].as<std::string>();
  const std::string system = c["system"] ? c["system"].as<std::string>() : "";
  const std::string all = system.empty() ? prompt : system + "\n" + prompt;
  const std::string body = c["body"] ? c["body"].as<std::string>() : "";
  RouteInput input;
  input.text = all;
  input.body = body;
  input.prompt.system = system;
  input.prompt.last_user = prompt;
  input.prompt.turns = c["turns"] ? c["turns"].as<size_t>() : 1;
  input.prompt.total_chars = all.size();
  if (const YAML::Node h = c["headers"]) {
    input.hints.privacy_header = h["privacy"] && h["privacy"].as<bool>();
    input.hints.review_header = h["review"] && h["review"].as<bool>();
    if (h["latency_budget_ms"]) {
      input.hints.latency_budget_ms = h["latency_budget_ms"].as<uint32_t>();
    }
    if (h["pattern"]) {
      input.hints.pattern = h["pattern"].as<std::string>();
    }
    if (h["client"]) {
      input.hints.client = h["client"].as<std::string>();
    }
  }
  input.hints.key_local_only = c["key_local_only"] && c["key_local_only"].as<bool>();
  if (c["cloud_only_fields"]) {
    input.hints.cloud_only_fields = c["cloud_only_fields"].as<std::vector<std::string>>();
  }

  RouteSignals signals = router.value()->signals(input);
  HealthSnapshot health;
  if (const YAML::Node s = c["state"]) {
    const std::string cloud = s["cloud"] ? s["cloud"].as<std::string>() : "online";
    health.cloud_configured = cloud != "none";
    health.cloud_online = cloud == "online";
    health.cloud_problem = "connection refused";
    health.edge_available = !s["edge"] || s["edge"].as<std::string>() == "available";
    health.edge_problem = "model file missing";
    if (s["throttled"] && s["throttled"].as<bool>()) {
      health.edge_throttled = true;
      health.throttle_reason = "thermal zone at 91 C";
    }
    signals.escalation_capped = s["escalation_capped"] && s["escalation_capped"].as<bool>();
    if (const YAML::Node m = s["remembered"]) {
      signals.remembered = RememberedTier{parse_tier(m["tier"].as<std::string>()),
                                          m["reason"].as<std::string>(), 60000};
    }
  }
  const Decision d = router.value()->decide(signals, health);
  const YAML::Node expect = c["expect"];
  ASSERT_FALSE(d.reasons.empty());
  EXPECT_EQ(tier_name(d.tier), expect["tier"].as<std::string>());
  EXPECT_EQ(reason_code_name(d.reasons.front().code), expect["reason"].as<std::string>())
      << d.reasons.front().detail;
  if (expect["pattern"]) {
    EXPECT_EQ(pattern_name(d.pattern), expect["pattern"].as<std::string>());
  }
  if (expect["reasons"]) {
    std::vector<std::string> codes;
    for (const auto& r : d.reasons) {
      codes.emplace_back(reason_code_name(r.code));
    }
    EXPECT_EQ(codes, expect["reasons"].as<std::vector<std::string>>());
  }
  if (expect["field"]) {
    ASSERT_FALSE(signals.privacy.empty());
    EXPECT_EQ(signals.privacy.front().field, expect["field"].as<std::string>());
  }
  if (expect["cloud_allowed"]) {
    EXPECT_EQ(d.cloud_allowed, expect["cloud_allowed"].as<bool>());
  }
  if (expect["from_memory"]) {
    EXPECT_EQ(d.from_memory, expect["from_memory"].as<bool>());
  }
  if (expect["notice"]) {
    EXPECT_EQ(d.notice.has_value(), expect["notice"].as<bool>());
  }
  // Every decision explains itself in JSON that names the decision and its signals.
  const auto explained = router.value()->explain(input, signals, d, health, true);
  EXPECT_EQ(explained["decision"]["pattern"], pattern_name(d.pattern));
  EXPECT_TRUE(explained["signals"]["complexity"].contains("features"));
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenPolicy, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& param) {
                           std::string name;
                           for (char c : param.param.name) {
                             name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
                           }
                           return name;
                         });

TEST(PolicyRouter, BadConfiguredPatternFailsNamingIt) {
  config::RoutingConfig config;
  config.privacy.patterns.push_back({"broken", "([a-z"});
  auto router = Router::create(config);
  ASSERT_FALSE(router);
  EXPECT_NE(router.error().message.find("broken"), std::string::npos) << router.error().message;
}

TEST(PolicyRouter, UnknownDisabledDetectorFailsListingTheKnownOnes) {
  config::RoutingConfig config;
  config.privacy.disabled_detectors.push_back("emial");
  auto router = Router::create(config);
  ASSERT_FALSE(router);
  EXPECT_NE(router.error().message.find("emial"), std::string::npos);
  EXPECT_NE(router.error().message.find("email"), std::string::npos);
}

TEST(PolicyRouter, MissingWeightsFileFailsNamingIt) {
  config::RoutingConfig config;
  config.ingress.model = "/nonexistent/weights.json";
  auto router = Router::create(config);
  ASSERT_FALSE(router);
  EXPECT_NE(router.error().message.find("/nonexistent/weights.json"), std::string::npos);
}

TEST(PolicyRouter, ACloudShareOutsideTheRecordedOnesFailsNamingTheRange) {
  // The shipped weights record thresholds from 1% to 50% of their training traffic.
  for (const double share : {0.005, 0.7}) {
    config::RoutingConfig config;
    config.ingress.cloud_share = share;
    auto router = Router::create(config);
    ASSERT_FALSE(router) << share;
    EXPECT_NE(router.error().message.find("0.01 to 0.5"), std::string::npos)
        << router.error().message;
    EXPECT_NE(router.error().message.find("routing.ingress.threshold"), std::string::npos);
  }
}

TEST(PolicyRouter, CloudSharesZeroAndOneGateNothingAndEverything) {
  const auto& model = ComplexityModel::builtin();
  const auto none = threshold_for_share(model, 0.0);
  const auto all = threshold_for_share(model, 1.0);
  ASSERT_TRUE(none && all);
  EXPECT_GT(none.value(), 1.0);  // no score reaches it
  EXPECT_EQ(all.value(), 0.0);   // every score does
  // Between recorded shares the threshold is interpolated, so it falls as the share grows.
  const auto one = threshold_for_share(model, 0.01);
  const auto three = threshold_for_share(model, 0.03);
  const auto five = threshold_for_share(model, 0.05);
  ASSERT_TRUE(one && three && five);
  EXPECT_GT(one.value(), three.value());
  EXPECT_GT(three.value(), five.value());
}

config::ConfidenceWeights mean_and_min_weights() {
  config::ConfidenceWeights w;
  w.bias = 2.0;
  w.mean_logprob = 2.0;
  w.min_logprob = 0.5;
  w.mean_entropy = 0.0;
  w.mean_margin = 0.0;
  return w;
}

TEST(PolicyConfidence, ConfidentTokensStayAboveTheThreshold) {
  ConfidenceTracker tracker(mean_and_min_weights());
  for (int i = 0; i < 10; ++i) {
    tracker.add(-0.05, 0.2, 5.0);
  }
  const auto s = tracker.snapshot();
  EXPECT_EQ(s.tokens, 10u);
  EXPECT_NEAR(s.mean_logprob, -0.05, 1e-9);
  EXPECT_GT(s.combined, 0.8);
  EXPECT_EQ(tracker.verdict(0.5, 100), ConfidenceVerdict::kUndecided);
}

TEST(PolicyConfidence, ACollapsedMinimumMakesEscalationCertain) {
  ConfidenceTracker tracker(mean_and_min_weights());
  tracker.add(-0.1, 0.5, 3.0);
  EXPECT_EQ(tracker.verdict(0.5, 200), ConfidenceVerdict::kUndecided);
  tracker.add(-12.0, 6.0, 0.0);  // bias 2 + 0.5 * -12 = -4 even with perfect tokens after
  EXPECT_EQ(tracker.verdict(0.5, 200), ConfidenceVerdict::kEscalateCertain);
}

TEST(PolicyConfidence, TheMeanBoundDependsOnTheTokensLeft) {
  config::ConfidenceWeights w;
  w.bias = 1.0;
  w.mean_logprob = 1.0;
  ConfidenceTracker tracker(w);
  for (int i = 0; i < 4; ++i) {
    tracker.add(-3.0, 0.0, 0.0);
  }
  // Now: sigmoid(1 - 3) = 0.12. With 100 perfect tokens to come the mean could reach -0.12.
  EXPECT_EQ(tracker.verdict(0.5, 100), ConfidenceVerdict::kUndecided);
  // With 2 left the best mean is -2: sigmoid(-1) = 0.27 < 0.5, whatever comes.
  EXPECT_EQ(tracker.verdict(0.5, 2), ConfidenceVerdict::kEscalateCertain);
}

// Early stop must never fire while some continuation could still clear the threshold: with
// the log-doubt and length terms the best case is no longer at an end of the interval, so
// check the verdict against continuations tried one by one.
TEST(PolicyConfidence, CertainEscalationHoldsForEveryContinuationTried) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> weight(-4.0, 4.0);
  std::uniform_real_distribution<double> logprob(-6.0, 0.0);
  size_t certain = 0;
  for (int trial = 0; trial < 300; ++trial) {
    config::ConfidenceWeights w;
    w.bias = weight(random);
    w.mean_logprob = std::abs(weight(random));
    w.log_doubt = -std::abs(weight(random)) / 2;
    w.log_tokens = weight(random) / 2;
    w.min_logprob = std::abs(weight(random)) / 4;
    ConfidenceTracker tracker(w);
    const int seen = 1 + trial % 5;
    for (int i = 0; i < seen; ++i) {
      tracker.add(logprob(random), 0.0, 0.0);
    }
    const size_t left = 1 + static_cast<size_t>(trial % 7);
    if (tracker.verdict(0.5, left) != ConfidenceVerdict::kEscalateCertain) {
      continue;
    }
    ++certain;
    for (size_t k = 0; k <= left; ++k) {
      for (double v : {0.0, -1e-7, -1e-4, -0.01, -0.3, -1.0, -3.0, -20.0}) {
        ConfidenceTracker continued = tracker;
        for (size_t i = 0; i < k; ++i) {
          continued.add(v, 0.0, 0.0);
        }
        EXPECT_LT(continued.snapshot().combined, 0.5) << "trial " << trial << " k " << k;
      }
    }
  }
  EXPECT_GT(certain, 20u);  // the check above must have had cases to check
}

TEST(PolicyConfidence, NanAndExtremeSignalsAreClipped) {
  ConfidenceTracker tracker(mean_and_min_weights());
  tracker.add(std::nan(""), std::nan(""), std::nan(""));
  tracker.add(-1e30, 1e30, 1e30);
  const auto s = tracker.snapshot();
  EXPECT_EQ(s.min_logprob, kMinLogprob);
  EXPECT_LE(s.mean_entropy, kMaxEntropy);
  EXPECT_TRUE(std::isfinite(s.combined));
}

TEST(PolicyCluster, SimilarQueriesShareAKeyAndUnrelatedOnesDoNot) {
  const auto a = query_cluster_keys("How do I reset the password of my router at home?");
  const auto b = query_cluster_keys("how do I reset my home router password");
  const auto c = query_cluster_keys("Write a sonnet about autumn leaves falling in Kyoto");
  ASSERT_EQ(a.size(), kClusterBands);
  auto share = [](const std::vector<uint64_t>& x, const std::vector<uint64_t>& y) {
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] == y[i]) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(share(a, b));
  EXPECT_FALSE(share(a, c));
  EXPECT_EQ(a, query_cluster_keys("How do I reset the password of my router at home?"));
  EXPECT_TRUE(query_cluster_keys("  ?? !! ").empty());
  EXPECT_EQ(query_cluster_keys("我想重置路由器密码").size(), kClusterBands);
}

}  // namespace
}  // namespace tandem::routing
