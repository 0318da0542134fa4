// A shared Redis store that hangs (SIGSTOP, as in a partition) or dies under routed traffic:
// every request is still answered, routing goes on without the routing memory, the outage is
// visible in /health, /v1/tandem/status and /metrics, and once Redis answers again the memory
// works again. Debian's redis-server is started here.

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../store/redis_server.h"
#include "test_harness.h"

namespace tandem::test {
namespace {

constexpr int kClients = 6;
constexpr int kRequestsPerClient = 5;

std::string outage_yaml(const std::string& redis_url, const std::string& cloud_url) {
  return "store:\n  replica: a\n  redis: {url: '" + redis_url +
         "', prefix: 'outage-test:', connect_timeout_ms: 500, command_timeout_ms: 500}\n"
         "cloud:\n  upstreams:\n    - name: cloud\n      base_url: " +
         cloud_url +
         "\n      models: {big: fault-ok}\n      retry: {max_retries: 0}\n"
         "      health: {interval_ms: 0}\n";
}

std::map<std::string, std::string> client_headers(const std::string& client,
                                                  const std::string& pattern = "") {
  std::map<std::string, std::string> headers = {{"X-Tandem-Client", client}};
  if (!pattern.empty()) {
    headers["X-Tandem-Pattern"] = pattern;
  }
  return headers;
}

// kClients threads each send kRequestsPerClient routed requests with a client id (each one
// looks up and stores a route); returns how many were answered with 200.
int routed_burst(uint16_t port, const std::string& tag) {
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < kRequestsPerClient; ++i) {
        const std::string who = tag + "-" + std::to_string(c);
        const auto r = post(port, "/v1/chat/completions",
                            chat("tandem", "Once upon a time " + who + " " + std::to_string(i), 4),
                            client_headers(who));
        if (r.status == 200) {
          ++answered;
        }
      }
    });
  }
  for (auto& t : clients) {
    t.join();
  }
  return answered.load();
}

bool store_reachable(uint16_t port) {
  return request(port, "GET", "/health").json_body()["store"]["reachable"] == true;
}

// A route remembered now is used for the client's next similar query.
void expect_memory_works(uint16_t port, const std::string& client) {
  const std::string prompt = "Tell me a story about a little dog and " + client;
  auto first = post(port, "/v1/chat/completions", chat("tandem", prompt, 4),
                    client_headers(client, "cloud"));
  ASSERT_EQ(first.status, 200) << first.body;
  auto again =
      post(port, "/v1/chat/completions", chat("tandem", prompt, 4), client_headers(client));
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.json_body()["tandem"]["routing"]["decision"]["reasons"][0]["code"],
            "consistency.memory")
      << again.body;
}

TEST(StoreOutageGatewayTest, AHungRedisStallsNoRequestAndTheMemoryComesBack) {
  store::testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.problem();
  FaultUpstream fault;
  GatewayUnderTest gateway(outage_yaml(redis.url(), fault.base_url()));
  const uint16_t port = gateway.port();
  expect_memory_works(port, "before");
  EXPECT_TRUE(store_reachable(port));

  redis.pause();
  // Without the circuit every one of these 30 lookups and 30 stores would wait for the
  // 500 ms timeout in turn (30 s); with it only the calls in flight when the outage began do.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(routed_burst(port, "hung"), kClients * kRequestsPerClient);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));

  const json status = request(port, "GET", "/v1/tandem/status").json_body();
  ASSERT_TRUE(status["gateway"]["store_outage"].is_object()) << status["gateway"].dump();
  EXPECT_GT(status["gateway"]["store_outage"]["refused_calls"].get<int>(), 0);
  const auto health = request(port, "GET", "/health");
  EXPECT_EQ(health.status, 200) << "a store outage does not make the gateway unready";
  EXPECT_EQ(health.json_body()["store"]["reachable"], false);
  const std::string metrics = request(port, "GET", "/metrics").body;
  EXPECT_NE(metrics.find("tandem_store_reachable 0"), std::string::npos);
  // A ticket cannot be stored: the operator endpoint says so at once instead of hanging.
  EXPECT_EQ(request(port, "GET", "/v1/tandem/reviews").status, 503);

  redis.resume();
  // The gateway probes every second; the memory then works again.
  ASSERT_TRUE(eventually([&] { return store_reachable(port); }, std::chrono::seconds(10)));
  EXPECT_TRUE(
      request(port, "GET", "/v1/tandem/status").json_body()["gateway"]["store_outage"].is_null());
  expect_memory_works(port, "after");
}

TEST(StoreOutageGatewayTest, ADeadRedisIsRoutedAroundAndRejoinedWhenItRestarts) {
  store::testing::RedisServer redis;
  ASSERT_TRUE(redis.ok()) << redis.problem();
  FaultUpstream fault;
  GatewayUnderTest gateway(outage_yaml(redis.url(), fault.base_url()));
  const uint16_t port = gateway.port();

  redis.stop();
  EXPECT_EQ(routed_burst(port, "dead"), kClients * kRequestsPerClient);
  EXPECT_FALSE(store_reachable(port));

  ASSERT_TRUE(redis.restart()) << redis.problem();
  ASSERT_TRUE(eventually([&] { return store_reachable(port); }, std::chrono::seconds(10)));
  expect_memory_works(port, "restarted");
}

}  // namespace
}  // namespace tandem::test
