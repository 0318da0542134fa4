#include "telemetry/gaming_monitor.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::telemetry {
namespace {

constexpr const char* kKinds[] = {"multiple_choice", "math", "code", "factoid", "open"};

// Deterministic synthetic traffic: mt19937's output is fixed by the standard, and uniform()
// is built from it directly (the std distributions may differ between libraries).
class Traffic {
 public:
  explicit Traffic(uint32_t seed) : rng_(seed) {}

  double uniform() { return static_cast<double>(rng_()) / 4294967296.0; }

  // The population: kinds and complexities uniform, a quarter of requests escalated.
  RoutingObservation honest(const std::string& client, int64_t now_ms) {
    RoutingObservation o;
    o.client = client;
    o.kind = kKinds[rng_() % 5];
    o.complexity = uniform();
    o.escalated = uniform() < 0.25;
    o.now_ms = now_ms;
    return o;
  }

  // Ordinary prompts, but 90% of them reach the cloud.
  RoutingObservation escalation_gamer(const std::string& client, int64_t now_ms) {
    RoutingObservation o = honest(client, now_ms);
    o.escalated = uniform() < 0.9;
    return o;
  }

  // Every prompt padded into the top complexity quintile of `math`; ordinary escalation share.
  RoutingObservation feature_gamer(const std::string& client, int64_t now_ms) {
    RoutingObservation o;
    o.client = client;
    o.kind = "math";
    o.complexity = 0.8 + 0.2 * uniform();
    o.escalated = uniform() < 0.25;
    o.now_ms = now_ms;
    return o;
  }

 private:
  std::mt19937 rng_;
};

std::string honest_name(int i) {
  return "honest-" + std::to_string(i);
}

// `per_client` requests from each of 20 honest clients, one every 100 ms, starting at `start`.
int64_t add_population(GamingMonitor& monitor, Traffic& traffic, int per_client,
                       int64_t start = 0) {
  int64_t now = start;
  for (int round = 0; round < per_client; ++round) {
    for (int i = 0; i < 20; ++i) {
      monitor.record(traffic.honest(honest_name(i), now));
      now += 100;
    }
  }
  return now;
}

bool has_reason(const GamingMonitor::ClientReport& report, const std::string& prefix) {
  for (const std::string& reason : report.reasons) {
    if (reason.rfind(prefix + ":", 0) == 0) {
      return true;
    }
  }
  return false;
}

TEST(GamingMonitorTest, HonestClientsAreNotFlagged) {
  GamingMonitor monitor(GamingOptions{});
  Traffic traffic(1);
  const int64_t now = add_population(monitor, traffic, 400);

  const auto report = monitor.report(now);
  EXPECT_TRUE(report.flagged.empty());
  EXPECT_EQ(report.population_requests, 8000u);
  EXPECT_EQ(report.clients_tracked, 20u);
  EXPECT_NEAR(report.population_escalation_share, 0.25, 0.02);
  for (int i = 0; i < 20; ++i) {
    const auto client = monitor.client(honest_name(i), now);
    ASSERT_TRUE(client.has_value());
    EXPECT_TRUE(client->judged);
    EXPECT_FALSE(client->flagged) << client->client << " psi " << client->psi;
    EXPECT_LT(client->psi, 0.25);
  }
}

TEST(GamingMonitorTest, EscalationGamerIsFlagged) {
  GamingMonitor monitor(GamingOptions{});
  Traffic traffic(2);
  int64_t now = add_population(monitor, traffic, 300);
  for (int i = 0; i < 200; ++i) {
    monitor.record(traffic.escalation_gamer("gamer", now));
    now += 100;
  }

  const auto report = monitor.report(now);
  ASSERT_EQ(report.flagged.size(), 1u);
  const auto& gamer = report.flagged[0];
  EXPECT_EQ(gamer.client, "gamer");
  EXPECT_EQ(gamer.requests, 200u);
  EXPECT_NEAR(gamer.escalation_share, 0.9, 0.05);
  EXPECT_NEAR(gamer.rest_escalation_share, 0.25, 0.02);
  EXPECT_LT(gamer.p_value, 1e-6);
  EXPECT_TRUE(has_reason(gamer, "escalation_share"));
  EXPECT_FALSE(has_reason(gamer, "feature_shift"));
  EXPECT_FALSE(gamer.capped);  // no cap configured
}

TEST(GamingMonitorTest, FeatureShiftIsFlaggedWithOrdinaryEscalationShare) {
  GamingMonitor monitor(GamingOptions{});
  Traffic traffic(3);
  int64_t now = add_population(monitor, traffic, 300);
  for (int i = 0; i < 200; ++i) {
    monitor.record(traffic.feature_gamer("padder", now));
    now += 100;
  }

  const auto padder = monitor.client("padder", now);
  ASSERT_TRUE(padder.has_value());
  EXPECT_TRUE(padder->flagged);
  EXPECT_GT(padder->psi, 0.25);
  EXPECT_LT(padder->feature_p_value, 0.001);
  EXPECT_GT(padder->p_value, 0.001);  // its escalation share is the population's
  EXPECT_TRUE(has_reason(*padder, "feature_shift"));
  EXPECT_FALSE(has_reason(*padder, "escalation_share"));
  ASSERT_EQ(monitor.report(now).flagged.size(), 1u);
}

TEST(GamingMonitorTest, LeaveOneOutKeepsABigClientFromHidingInItsOwnTraffic) {
  GamingMonitor monitor(GamingOptions{});
  Traffic traffic(4);
  int64_t now = add_population(monitor, traffic, 100);  // 2000 honest requests
  for (int i = 0; i < 5000; ++i) {
    monitor.record(traffic.escalation_gamer("big", now));
    now += 10;
  }
  const auto report = monitor.report(now);
  EXPECT_GT(report.population_escalation_share, 0.6);  // the gamer drags the population up...
  const auto big = monitor.client("big", now);
  ASSERT_TRUE(big.has_value());
  EXPECT_NEAR(big->rest_escalation_share, 0.25, 0.03);  // ...but is compared without itself
  EXPECT_TRUE(big->flagged);
}

TEST(GamingMonitorTest, BelowMinRequestsIsNotJudged) {
  GamingMonitor monitor(GamingOptions{});  // min_requests 30
  Traffic traffic(5);
  int64_t now = add_population(monitor, traffic, 20);
  for (int i = 0; i < 29; ++i) {
    monitor.record({"eager", true, "open", 0.5, now});
  }
  auto eager = monitor.client("eager", now);
  ASSERT_TRUE(eager.has_value());
  EXPECT_FALSE(eager->judged);
  EXPECT_FALSE(eager->flagged);
  EXPECT_TRUE(eager->reasons.empty());
  EXPECT_LT(eager->p_value, 1e-6);  // the numbers are there; the verdict waits for evidence
  EXPECT_TRUE(monitor.report(now).flagged.empty());

  monitor.record({"eager", true, "open", 0.5, now});
  eager = monitor.client("eager", now);
  EXPECT_TRUE(eager->judged);
  EXPECT_TRUE(eager->flagged);
}

TEST(GamingMonitorTest, NotJudgedBeforeThePopulationIsLargeEnough) {
  GamingMonitor monitor(GamingOptions{});  // min_population 100
  for (int i = 0; i < 99; ++i) {
    monitor.record({"rest", false, "open", 0.5, i});
  }
  for (int i = 0; i < 50; ++i) {
    monitor.record({"eager", true, "open", 0.5, 100 + i});
  }
  EXPECT_FALSE(monitor.client("eager", 200)->judged);
  monitor.record({"rest", false, "open", 0.5, 200});
  EXPECT_TRUE(monitor.client("eager", 200)->flagged);
}

TEST(GamingMonitorTest, WindowExpiryUnflagsAClient) {
  GamingOptions options;
  options.window_ms = 600000;  // 10 minutes
  GamingMonitor monitor(options);
  Traffic traffic(6);
  for (int64_t now = 0; now < 1800000; now += 1000) {
    monitor.record(traffic.honest(honest_name(static_cast<int>(now / 1000) % 20), now));
    monitor.record(traffic.honest(honest_name(static_cast<int>(now / 1000 + 7) % 20), now));
    if (now < 300000) {
      monitor.record(traffic.escalation_gamer("gamer", now));
    }
    if (now == 599000) {
      // Every gamer request (0 .. 299 s) is still inside the window.
      const auto report = monitor.report(now);
      ASSERT_EQ(report.flagged.size(), 1u);
      EXPECT_EQ(report.flagged[0].client, "gamer");
      EXPECT_EQ(report.flagged[0].requests, 300u);
    }
    // Its last request, at 299 s, is window_ms old at 899 s.
    if (now == 898000) {
      EXPECT_EQ(monitor.client("gamer", now)->requests, 1u);
    }
    if (now == 899000) {
      EXPECT_FALSE(monitor.client("gamer", now).has_value());
    }
  }
  const auto report = monitor.report(1799000);
  EXPECT_TRUE(report.flagged.empty());
  EXPECT_EQ(report.clients_tracked, 20u);
  EXPECT_EQ(report.population_requests, 1200u);  // 600 s of two honest requests a second
}

// A client flagged for its prompts (so the flag does not depend on the share) whose escalation
// share is walked up to the cap exactly.
TEST(GamingMonitorTest, CapAppliesOnceAFlaggedClientReachesIt) {
  for (const double cap : {0.3, 0.0}) {
    GamingOptions options;
    options.escalation_cap = cap;
    GamingMonitor monitor(options);
    Traffic traffic(7);
    int64_t now = add_population(monitor, traffic, 30);
    for (int i = 0; i < 99; ++i) {
      monitor.record({"padder", i < 29, "math", 0.95, now});
    }
    ASSERT_TRUE(monitor.client("padder", now)->flagged);
    EXPECT_FALSE(monitor.escalation_capped("padder", now));  // 29 / 99 < 0.3
    EXPECT_FALSE(monitor.escalation_capped(honest_name(0), now));

    monitor.record({"padder", true, "math", 0.95, now});  // 30 / 100
    EXPECT_EQ(monitor.escalation_capped("padder", now), cap > 0.0) << "cap " << cap;
    EXPECT_EQ(monitor.client("padder", now)->capped, cap > 0.0);
    EXPECT_FALSE(monitor.escalation_capped("never-seen", now));
    EXPECT_FALSE(monitor.escalation_capped("", now));
  }
}

TEST(GamingMonitorTest, CappedClientKeptOnTheEdgeFallsBelowTheCap) {
  GamingOptions options;
  options.escalation_cap = 0.3;
  GamingMonitor monitor(options);
  Traffic traffic(8);
  int64_t now = add_population(monitor, traffic, 100);
  for (int i = 0; i < 100; ++i) {
    monitor.record(traffic.escalation_gamer("gamer", now));
  }
  ASSERT_TRUE(monitor.escalation_capped("gamer", now));
  // The gateway keeps a capped client on the edge; the cap lifts once its share is under the
  // cap or no longer significantly above the rest, whichever comes first.
  int edge_only = 0;
  while (monitor.escalation_capped("gamer", now) && edge_only < 1000) {
    RoutingObservation kept = traffic.honest("gamer", now);
    kept.escalated = false;
    monitor.record(kept);
    ++edge_only;
  }
  const auto gamer = monitor.client("gamer", now);
  EXPECT_FALSE(gamer->capped);
  EXPECT_LT(gamer->escalation_share, 0.4);
  EXPECT_LT(edge_only, 300);
}

TEST(GamingMonitorTest, MaxClientsForgetsTheLeastRecentlySeen) {
  GamingOptions options;
  options.max_clients = 50;
  options.min_requests = 1;
  GamingMonitor monitor(options);
  for (int i = 0; i < 10; ++i) {
    monitor.record({"", true, "open", 0.5, 0});
  }
  for (int i = 0; i < 1000; ++i) {
    for (int j = 0; j < 3; ++j) {
      monitor.record({"c" + std::to_string(i), false, "code", 0.1, i});
    }
  }
  const auto report = monitor.report(1000);
  EXPECT_EQ(report.clients_tracked, 50u);
  // The forgotten clients' requests leave the population with them; the anonymous stay.
  EXPECT_EQ(report.population_requests, 50u * 3 + 10);
  EXPECT_FALSE(monitor.client("c0", 1000).has_value());
  EXPECT_FALSE(monitor.client("c949", 1000).has_value());
  EXPECT_EQ(monitor.client("c950", 1000)->requests, 3u);
  EXPECT_EQ(monitor.client("c999", 1000)->requests, 3u);
}

TEST(GamingMonitorTest, SeeingAClientAgainKeepsIt) {
  GamingOptions options;
  options.max_clients = 3;
  options.min_requests = 1;
  GamingMonitor monitor(options);
  for (const char* id : {"a", "b", "c", "a", "d"}) {
    monitor.record({id, false, "open", 0.5, 0});
  }
  EXPECT_TRUE(monitor.client("a", 0).has_value());
  EXPECT_FALSE(monitor.client("b", 0).has_value());
  EXPECT_TRUE(monitor.client("d", 0).has_value());
}

TEST(GamingMonitorTest, MaxRequestsPerClientDropsTheOldest) {
  GamingOptions options;
  options.max_requests_per_client = 10;
  options.min_requests = 1;
  GamingMonitor monitor(options);
  for (int i = 0; i < 100; ++i) {
    monitor.record({"busy", i >= 95, "open", 0.5, i});
  }
  const auto busy = monitor.client("busy", 100);
  EXPECT_EQ(busy->requests, 10u);
  EXPECT_EQ(busy->escalations, 5u);  // the last ten: 90..99, of which 95..99 escalated
  EXPECT_EQ(monitor.report(100).population_requests, 10u);
  // The trimmed client still expires on time: its oldest kept request was at 90.
  EXPECT_EQ(monitor.client("busy", 90 + GamingOptions{}.window_ms)->requests, 9u);
}

TEST(GamingMonitorTest, AnonymousCountsInThePopulationButIsNeverFlagged) {
  GamingMonitor monitor(GamingOptions{});
  Traffic traffic(9);
  int64_t now = add_population(monitor, traffic, 50);
  // Anonymous traffic that would flag any named client: every request escalated.
  for (int i = 0; i < 500; ++i) {
    RoutingObservation anonymous = traffic.honest("", now);
    anonymous.escalated = true;
    monitor.record(anonymous);
  }
  const auto report = monitor.report(now);
  EXPECT_TRUE(report.flagged.empty());
  EXPECT_EQ(report.population_requests, 1500u);
  EXPECT_EQ(report.clients_tracked, 20u);
  EXPECT_FALSE(monitor.client("", now).has_value());
}

// A tiny example worked by hand.
//   client "c": 10 requests, 6 escalated; bins (math, quintile 0): 8, (math, quintile 4): 2
//   rest   "r": 10 requests, 2 escalated; bins 5, 5
// Escalation, Yates: a=6 b=4 c=2 d=8, N=20, |ad - bc| = |48 - 8| = 40, minus N/2 -> 30;
//   chi2 = 20 * 30^2 / (10 * 10 * 8 * 12) = 18000 / 9600 = 1.875; p = erfc(sqrt(0.9375))
//   = 0.170904.
// PSI, two bins in use, epsilon 0.5: p_c = (8.5, 2.5) / 11, p_r = (5.5, 5.5) / 11;
//   (3/11) ln(8.5/5.5) + (-3/11) ln(2.5/5.5) = (3/11) ln(8.5/2.5) = (3/11) ln 3.4 = 0.333757.
// Features, Pearson 2x2: column totals 13, 7 -> expected 6.5, 3.5 per row; deviations 1.5;
//   chi2 = 2 * (2.25/6.5 + 2.25/3.5) = 180/91 = 1.978022, 1 df.
TEST(GamingMonitorTest, HandComputedTinyExample) {
  GamingOptions options;
  options.min_requests = 10;
  options.min_population = 10;
  GamingMonitor monitor(options);
  for (int i = 0; i < 10; ++i) {
    monitor.record({"c", i < 6, "math", i < 8 ? 0.1 : 0.9, i});
    monitor.record({"r", i < 2, "math", i < 5 ? 0.1 : 0.9, i});
  }
  const auto c = monitor.client("c", 10);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->judged);
  EXPECT_DOUBLE_EQ(c->escalation_share, 0.6);
  EXPECT_DOUBLE_EQ(c->rest_escalation_share, 0.2);
  EXPECT_NEAR(c->chi_square, 1.875, 1e-12);
  EXPECT_NEAR(c->p_value, 0.170904, 1e-6);
  EXPECT_NEAR(c->psi, 0.333757, 1e-6);
  EXPECT_NEAR(c->feature_chi_square, 1.978022, 1e-6);
  EXPECT_NEAR(c->feature_p_value, std::erfc(std::sqrt(1.978022 / 2)), 1e-6);
  EXPECT_FALSE(c->flagged);  // PSI over 0.25, but ten requests are no evidence
}

TEST(GamingStatisticsTest, ChiSquareUpperTail) {
  EXPECT_NEAR(chi_square_upper_tail(3.0, 1), std::erfc(std::sqrt(1.5)), 1e-15);
  EXPECT_NEAR(chi_square_upper_tail(5.0, 2), std::exp(-2.5), 1e-15);
  // Critical values from the standard tables.
  EXPECT_NEAR(chi_square_upper_tail(3.841459, 1), 0.05, 1e-6);
  EXPECT_NEAR(chi_square_upper_tail(18.307038, 10), 0.05, 1e-6);
  EXPECT_NEAR(chi_square_upper_tail(51.178939, 24), 0.0009998985663777695, 1e-12);
  // Closed forms: odd df 3 is erfc(sqrt(x/2)) + sqrt(2x/pi) e^(-x/2); even df 2k is
  // e^(-x/2) sum_{j<k} (x/2)^j / j!.
  EXPECT_NEAR(chi_square_upper_tail(2.0, 3), 0.5724067044708798, 1e-12);      // series
  EXPECT_NEAR(chi_square_upper_tail(100.0, 84), 0.11228906255311702, 1e-12);  // fraction
  EXPECT_EQ(chi_square_upper_tail(0.0, 3), 1.0);
  EXPECT_EQ(chi_square_upper_tail(-1.0, 3), 1.0);
  EXPECT_EQ(chi_square_upper_tail(std::nan(""), 3), 1.0);
  EXPECT_EQ(chi_square_upper_tail(1.0, 0), 1.0);
  EXPECT_EQ(chi_square_upper_tail(std::numeric_limits<double>::infinity(), 3), 0.0);
}

TEST(GamingStatisticsTest, DegenerateTablesHaveNothingToSay) {
  EXPECT_EQ(yates_chi_square(0, 0, 5, 5).p_value, 1.0);    // no client requests
  EXPECT_EQ(yates_chi_square(5, 0, 5, 0).p_value, 1.0);    // nobody stayed on the edge
  EXPECT_EQ(yates_chi_square(5, 5, 5, 5).statistic, 0.0);  // identical shares
  const std::vector<uint64_t> one_bin = {0, 7, 0};
  const std::vector<uint64_t> same_bin = {0, 3, 0};
  EXPECT_EQ(homogeneity_chi_square(one_bin, same_bin).p_value, 1.0);
  EXPECT_EQ(population_stability_index(one_bin, same_bin), 0.0);
  EXPECT_EQ(population_stability_index(one_bin, std::vector<uint64_t>(3, 0)), 0.0);
  EXPECT_EQ(population_stability_index(one_bin, std::vector<uint64_t>{}), 0.0);
}

TEST(GamingStatisticsTest, ComplexityQuintiles) {
  const std::vector<std::pair<double, size_t>> cases = {
      {0.0, 0},
      {0.19999, 0},
      {0.2, 1},
      {0.5, 2},
      {0.79, 3},
      {0.8, 4},
      {1.0, 4},
      {7.0, 4},
      {-3.0, 0},
      {std::nan(""), 0},
      {std::numeric_limits<double>::infinity(), 4}};
  for (const auto& [complexity, quintile] : cases) {
    EXPECT_EQ(complexity_quintile(complexity), quintile) << complexity;
  }
}

TEST(GamingOptionsTest, ValidateNamesTheField) {
  EXPECT_EQ(GamingOptions{}.validate(), "");
  struct Case {
    const char* field;
    void (*spoil)(GamingOptions&);
  };
  const Case cases[] = {
      {"window_ms", [](GamingOptions& o) { o.window_ms = 0; }},
      {"min_requests", [](GamingOptions& o) { o.min_requests = 0; }},
      {"min_requests", [](GamingOptions& o) { o.min_requests = 20000; }},
      {"psi_threshold", [](GamingOptions& o) { o.psi_threshold = 0; }},
      {"psi_threshold", [](GamingOptions& o) { o.psi_threshold = std::nan(""); }},
      {"p_value", [](GamingOptions& o) { o.p_value = 0; }},
      {"p_value", [](GamingOptions& o) { o.p_value = 1; }},
      {"escalation_cap", [](GamingOptions& o) { o.escalation_cap = -0.1; }},
      {"escalation_cap", [](GamingOptions& o) { o.escalation_cap = 1.5; }},
      {"max_clients", [](GamingOptions& o) { o.max_clients = 0; }},
      {"max_requests_per_client", [](GamingOptions& o) { o.max_requests_per_client = 0; }},
  };
  for (const Case& c : cases) {
    GamingOptions options;
    c.spoil(options);
    const std::string message = options.validate();
    EXPECT_NE(message.find(c.field), std::string::npos) << c.field << ": " << message;
  }
}

TEST(GamingMonitorTest, OddInputNeverBreaksIt) {
  GamingOptions options;
  options.window_ms = -5;  // invalid: clamped, not trusted
  options.p_value = std::nan("");
  options.max_clients = 0;
  GamingMonitor monitor(options);
  const double odd[] = {std::nan(""), -std::numeric_limits<double>::infinity(), 1e300, -0.0};
  const int64_t times[] = {std::numeric_limits<int64_t>::max(), 0,
                           std::numeric_limits<int64_t>::min()};
  for (int64_t t : times) {
    for (double c : odd) {
      monitor.record({"x", true, "", c, t});
      monitor.record({"", false, std::string(1000, 'k'), c, t});
    }
  }
  EXPECT_GE(monitor.report(0).population_requests, 1u);

  GamingOptions tight;
  tight.min_requests = 1;
  tight.max_clients = 2;
  GamingMonitor kinds(tight);
  const std::string long_id(10000, 'z');
  for (int i = 0; i < 40; ++i) {
    kinds.record({long_id, i % 2 == 0, "kind-" + std::to_string(i), 0.5, 1000 - i});
  }
  const auto client = kinds.client(long_id.substr(0, kMaxClientIdBytes) + "ignored", 0);
  ASSERT_TRUE(client.has_value());  // the same first kMaxClientIdBytes bytes: the same client
  EXPECT_EQ(client->requests, 40u);
  EXPECT_EQ(client->client.size(), kMaxClientIdBytes);
}

TEST(GamingMonitorTest, ClientHistoryCountsPerIntervalWithinTheWindow) {
  GamingOptions options;
  options.window_ms = 60'000;
  GamingMonitor monitor(options);
  const auto seen = [&monitor](int64_t at_ms, bool escalated) {
    RoutingObservation o;
    o.client = "alice";
    o.kind = "open";
    o.escalated = escalated;
    o.now_ms = at_ms;
    monitor.record(o);
  };
  seen(1'000, true);  // leaves the window by now = 70'000
  seen(20'000, true);
  seen(25'000, false);
  seen(59'999, true);
  seen(65'000, false);
  const auto history = monitor.client_history("alice", 20'000, 10'000, 5, 70'000);
  ASSERT_EQ(history.size(), 5u);
  EXPECT_EQ(history[0].requests, 2u);  // [20 s, 30 s)
  EXPECT_EQ(history[0].escalations, 1u);
  EXPECT_EQ(history[1].requests, 0u);
  EXPECT_EQ(history[3].requests, 1u);  // [50 s, 60 s)
  EXPECT_EQ(history[3].escalations, 1u);
  EXPECT_EQ(history[4].requests, 1u);  // [60 s, 70 s)
  EXPECT_EQ(history[4].escalations, 0u);
  for (const auto& empty : {monitor.client_history("bob", 0, 10'000, 3, 70'000),
                            monitor.client_history("", 0, 10'000, 3, 70'000)}) {
    ASSERT_EQ(empty.size(), 3u);
    for (const auto& interval : empty) {
      EXPECT_EQ(interval.requests, 0u);
    }
  }
}

TEST(GamingMonitorTest, ConcurrentUseIsSafe) {
  GamingOptions options;
  options.window_ms = 1000;
  options.max_clients = 20;
  options.escalation_cap = 0.5;
  GamingMonitor monitor(options);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&monitor, t] {
      Traffic traffic(100 + t);
      for (int i = 0; i < 2000; ++i) {
        const std::string id = "c" + std::to_string((i * 7 + t) % 40);
        monitor.record(traffic.honest(id, i));
        monitor.escalation_capped(id, i);
        if (i % 250 == 0) {
          monitor.report(i);
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_LE(monitor.report(2000).clients_tracked, 20u);
}

}  // namespace
}  // namespace tandem::telemetry
