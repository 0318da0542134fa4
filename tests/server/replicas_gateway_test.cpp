// Several gateway replicas sharing Redis (store.redis): a ticket created on one is answered on
// another, a client's routing memory follows it across replicas, and a circuit one replica
// opened holds the same upstream open on the others. Debian's redis-server is started here.

#include <gtest/gtest.h>

#include "../store/redis_server.h"
#include "test_harness.h"

namespace tandem::test {
namespace {

std::string replica_yaml(const std::string& name, const std::string& redis_url,
                         const std::string& cloud_url, const std::string& cloud_model) {
  return "store:\n  replica: " + name + "\n  redis: {url: '" + redis_url +
         "', prefix: 'replicas-test:'}\n"
         "cloud:\n  upstreams:\n    - name: cloud\n      base_url: " +
         cloud_url + "\n      models: {big: " + cloud_model +
         "}\n      retry: {max_retries: 0}\n      health: {interval_ms: 0}\n"
         "      circuit: {failure_threshold: 1, cooldown_ms: 30000}\n"
         "routing:\n  review:\n    enabled: true\n    keywords: [{name: legal, words: "
         "[lawsuit]}]\n";
}

TEST(ReplicasGatewayTest, TicketsAndRoutingMemoryAreSharedThroughRedis) {
  store::testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.problem();
  FaultUpstream fault;
  GatewayUnderTest a(replica_yaml("a", redis.url(), fault.base_url(), "fault-ok"));
  GatewayUnderTest b(replica_yaml("b", redis.url(), fault.base_url(), "fault-ok"));
  EXPECT_EQ(request(a.port(), "GET", "/v1/tandem/status").json_body()["gateway"]["store"], "redis");

  auto pending =
      post(a.port(), "/v1/chat/completions", chat("tandem", "About the lawsuit, once upon", 8));
  ASSERT_EQ(pending.status, 200) << pending.body;
  ASSERT_EQ(pending.json_body()["choices"][0]["finish_reason"], "pending_review");
  const std::string ticket = pending.json_body()["tandem"]["review"]["ticket"].get<std::string>();
  auto listed = request(b.port(), "GET", "/v1/tandem/reviews?status=pending");
  ASSERT_EQ(listed.status, 200);
  ASSERT_EQ(listed.json_body()["data"].size(), 1u) << listed.body;
  auto answered = post(b.port(), "/v1/tandem/reviews/" + ticket + "/answer",
                       {{"answer", "Settle it."}, {"reviewer", "ops"}});
  ASSERT_EQ(answered.status, 200) << answered.body;
  auto seen = request(a.port(), "GET", "/v1/tandem/reviews/" + ticket);
  EXPECT_EQ(seen.json_body()["status"], "answered") << seen.body;
  EXPECT_EQ(request(a.port(), "GET", "/v1/tandem/status").json_body()["reviews"]["answered"], 1);

  // The first similar query of "carol" went to the cloud on replica a; replica b remembers.
  const std::map<std::string, std::string> carol = {{"X-Tandem-Client", "carol"}};
  std::map<std::string, std::string> carol_cloud = carol;
  carol_cloud["X-Tandem-Pattern"] = "cloud";
  ASSERT_EQ(post(a.port(), "/v1/chat/completions",
                 chat("tandem", "Tell me a story about a little dog", 8), carol_cloud)
                .status,
            200);
  auto remembered = post(b.port(), "/v1/chat/completions",
                         chat("tandem", "Tell me a story about a little dog", 8), carol);
  ASSERT_EQ(remembered.status, 200) << remembered.body;
  EXPECT_EQ(remembered.json_body()["tandem"]["routing"]["decision"]["reasons"][0]["code"],
            "consistency.memory");
  EXPECT_EQ(remembered.json_body()["tandem"]["tier"], "cloud");

  // Both replicas' requests add up in the fleet counters (synced every second).
  ASSERT_TRUE(eventually(
      [&] {
        const json fleet = request(b.port(), "GET", "/v1/tandem/status").json_body()["fleet"];
        return fleet.is_object() && fleet["counters"].value("requests", 0) == 3 &&
               fleet["counters"].value("requests.cloud", 0) == 2 &&
               fleet["counters"].value("requests.human", 0) == 1;
      },
      std::chrono::seconds(10)))
      << request(b.port(), "GET", "/v1/tandem/status").json_body()["fleet"].dump();
}

TEST(ReplicasGatewayTest, ACircuitOneReplicaOpenedHoldsOnTheOthers) {
  store::testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.problem();
  FaultUpstream fault;
  // Replica a's requests fail (500), replica b's would succeed: b still keeps away from the
  // upstream a found broken, until a's cooldown ends.
  GatewayUnderTest a(replica_yaml("a", redis.url(), fault.base_url(), "fault-500"));
  GatewayUnderTest b(replica_yaml("b", redis.url(), fault.base_url(), "fault-ok"));
  const std::map<std::string, std::string> cloud = {{"X-Tandem-Pattern", "cloud"}};
  (void)post(a.port(), "/v1/chat/completions", chat("tandem", "Once", 8), cloud);
  ASSERT_EQ(request(a.port(), "GET", "/v1/tandem/status").json_body()["circuits"][0]["state"],
            "open");
  ASSERT_TRUE(eventually(
      [&] {
        const json c = request(b.port(), "GET", "/v1/tandem/status").json_body()["circuits"][0];
        return c["state"] == "open" && c["held_by_peer"] == true;
      },
      std::chrono::seconds(10)));
  const int before = fault.requests_for("fault-ok");
  auto r = post(b.port(), "/v1/chat/completions", chat("tandem", "Once", 8), cloud);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "edge") << "b falls back instead of trying";
  EXPECT_EQ(fault.requests_for("fault-ok"), before);
}

}  // namespace
}  // namespace tandem::test
