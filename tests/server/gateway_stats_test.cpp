// GatewayStats: what one finished request adds to the metrics, the status page's windows and
// the fleet's counters, from its trace; counted from several threads at once without losing a
// request.

#include "server/gateway_stats.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::server {
namespace {

store::TraceRecord trace(std::string tier, double cost_cloud = 0.0) {
  store::TraceRecord t;
  t.tier = std::move(tier);
  t.pattern = t.tier.empty() ? "none" : t.tier;
  t.reason_codes = {"ingress.simple"};
  t.cost_cloud = cost_cloud;
  t.latency_ms = 12.0;
  return t;
}

TEST(GatewayStats, FleetDeltasCountRequestsByTierAndCarryMoneyFractions) {
  GatewayStats stats;
  stats.observe(trace("edge"), true, 1000);
  stats.observe(trace("edge"), true, 1000);
  auto escalated = trace("cloud", 0.0000004);  // 0.4 micro-USD: carried, not yet whole
  escalated.escalated = true;
  escalated.cost_all_cloud = 0.000002;
  stats.observe(escalated, true, 1000);
  stats.observe(trace("cloud", 0.0000007), false, 1000);  // 0.4 + 0.7: one whole micro-USD
  stats.observe(trace(""), false, 1000);                  // no tier: "none"
  stats.observe(trace("mystery"), false, 1000);           // a tier outside the known four

  auto deltas = stats.take_fleet_deltas();
  EXPECT_EQ(deltas["requests"], 6);
  EXPECT_EQ(deltas["requests.edge"], 2);
  EXPECT_EQ(deltas["requests.cloud"], 2);
  EXPECT_EQ(deltas["requests.none"], 1);
  EXPECT_EQ(deltas["requests.mystery"], 1);
  EXPECT_EQ(deltas["requests.human"], 0);
  EXPECT_EQ(deltas["escalations"], 1);
  EXPECT_EQ(deltas["cloud_cost_micro_usd"], 1);
  EXPECT_EQ(deltas["saved_micro_usd"], 1);  // 2 - 0.4 = 1.6: one whole, 0.6 carried

  // Taken means reset: the next round starts from zero, with the fractions still carried.
  stats.observe(trace("cloud", 0.0000003), false, 1000);  // 0.1 left + 0.3: still under one
  deltas = stats.take_fleet_deltas();
  EXPECT_EQ(deltas["requests"], 1);
  EXPECT_EQ(deltas["requests.edge"], 0);
  EXPECT_EQ(deltas["requests.cloud"], 1);
  EXPECT_EQ(deltas["cloud_cost_micro_usd"], 0);
}

TEST(GatewayStats, TheMetricsAndWindowsSeeEveryRequest) {
  GatewayStats stats;
  stats.observe(trace("edge"), true, 1000);
  stats.observe(trace("cloud"), true, 1000);
  stats.observe(trace("mystery"), true, 1000);
  const auto traffic = stats.traffic_json(1000);
  EXPECT_EQ(traffic["total"]["requests"], 3);
  EXPECT_EQ(traffic["total"]["by_tier"]["edge"], 1);
  EXPECT_EQ(traffic["total"]["by_tier"]["cloud"], 1);
  EXPECT_EQ(traffic["recent"]["by_tier"]["edge"], 1);
  const auto latency = stats.latency_json(1000, false);
  EXPECT_EQ(latency["edge"]["count"], 1);
  EXPECT_EQ(latency["cloud"]["count"], 1);
  EXPECT_EQ(latency["human"]["count"], 0);
  EXPECT_DOUBLE_EQ(stats.registry().sum("tandem_requests_total",
                                        {{"tier", "edge"}, {"reason", "ingress.simple"}}),
                   1.0);
}

TEST(GatewayStats, RequestsCountedFromSeveralThreadsAreAllCounted) {
  GatewayStats stats;
  constexpr int kThreads = 4;
  constexpr int kEach = 2000;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&stats, i] {
      for (int n = 0; n < kEach; ++n) {
        stats.observe(trace(i % 2 == 0 ? "edge" : "cloud", 0.0000001), true, 1000);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  auto deltas = stats.take_fleet_deltas();
  EXPECT_EQ(deltas["requests"], kThreads * kEach);
  EXPECT_EQ(deltas["requests.edge"], kThreads / 2 * kEach);
  EXPECT_EQ(deltas["requests.cloud"], kThreads / 2 * kEach);
  // 8,000 requests at 0.1 micro-USD: 800, give or take the last fraction's rounding.
  EXPECT_NEAR(static_cast<double>(deltas["cloud_cost_micro_usd"]), 800.0, 1.0);
  EXPECT_DOUBLE_EQ(stats.registry().sum("tandem_requests_total"), kThreads * kEach);
}

}  // namespace
}  // namespace tandem::server
