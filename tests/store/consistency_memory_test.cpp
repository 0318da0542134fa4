// The routing memory: hits, misses, expiry, replacement, isolation, and lookup latency. Every
// case runs against both backends (names end in /sqlite and /redis); the Redis ones use a
// redis-server that the test starts itself (redis_server.h), each test under its own prefix.

#include "store/consistency_memory.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <latch>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "redis_server.h"
#include "store/redis_consistency_memory.h"
#include "temp_dir.h"

namespace tandem::store {
namespace {

using testing::connect_client;
using testing::shared_redis_server;
using testing::StoreBackend;
using testing::TempDir;
using testing::unique_prefix;

constexpr int64_t kMinute = 60'000;

class ConsistencyMemoryTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == StoreBackend::kSqlite) {
      auto db = Database::open(":memory:");
      ASSERT_TRUE(db) << db.error().message;
      memory_ = std::make_unique<SqliteConsistencyMemory>(*db);
    } else {
      ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
      prefix_ = unique_prefix();
      memory_ = open_handle();
      ASSERT_TRUE(memory_);
    }
    ASSERT_STREQ(memory_->backend(), GetParam() == StoreBackend::kSqlite ? "sqlite" : "redis");
  }

  // Redis: another replica's handle on the same memory (a client of its own).
  std::unique_ptr<ConsistencyMemory> open_handle() {
    auto client = connect_client(shared_redis_server(), prefix_);
    if (!client) {
      ADD_FAILURE() << client.error().message;
      return nullptr;
    }
    return std::make_unique<RedisConsistencyMemory>(*client);
  }

  // The remembered route, or a route with tier "miss" (or "error: …").
  RememberedRoute find(const std::string& client, const std::vector<uint64_t>& keys,
                       int64_t now_ms) {
    auto found = memory_->lookup(client, keys, now_ms);
    if (!found) {
      return RememberedRoute{"error: " + found.error().message, "", 0, 0, 0, 0};
    }
    if (!found->has_value()) {
      return RememberedRoute{"miss", "", 0, 0, 0, 0};
    }
    return **found;
  }

  void remember(const std::string& client, const std::vector<uint64_t>& keys,
                const std::string& tier, int64_t now_ms, int64_t ttl_ms = kMinute,
                const std::string& reason = "because") {
    Status status = memory_->remember(client, keys, tier, reason, now_ms, ttl_ms);
    ASSERT_TRUE(status) << status.error().message;
  }

  std::string prefix_;
  std::unique_ptr<ConsistencyMemory> memory_;
};

INSTANTIATE_TEST_SUITE_P(Backends, ConsistencyMemoryTest,
                         ::testing::Values(StoreBackend::kSqlite, StoreBackend::kRedis),
                         testing::backend_name);

TEST_P(ConsistencyMemoryTest, MissWhenNothingRemembered) {
  EXPECT_EQ(find("acme", {1, 2, 3, 4}, 0).tier, "miss");
  EXPECT_EQ(find("acme", {}, 0).tier, "miss");
}

TEST_P(ConsistencyMemoryTest, HitOnAnySharedKeyAndCountsHits) {
  remember("acme", {10, 11, 12, 13}, "cloud", 1000, kMinute, "complex maths");
  RememberedRoute route = find("acme", {99, 12, 98, 97}, 2000);
  EXPECT_EQ(route.tier, "cloud");
  EXPECT_EQ(route.reason, "complex maths");
  EXPECT_EQ(route.matched_key, 12u);
  EXPECT_EQ(route.decided_at_ms, 1000);
  EXPECT_EQ(route.expires_at_ms, 1000 + kMinute);
  EXPECT_EQ(route.hits, 1);
  EXPECT_EQ(find("acme", {12}, 2001).hits, 2);
  EXPECT_EQ(find("acme", {12}, 2002).hits, 3);
  EXPECT_EQ(find("acme", {13}, 2003).hits, 1);  // hits are per key
  EXPECT_EQ(find("acme", {1, 2, 3, 4}, 2000).tier, "miss");
}

TEST_P(ConsistencyMemoryTest, ExpiresAtItsExpiryTime) {
  remember("acme", {5}, "edge", 1000, 500);
  EXPECT_EQ(find("acme", {5}, 1499).tier, "edge");
  EXPECT_EQ(find("acme", {5}, 1500).tier, "miss");
  EXPECT_EQ(find("acme", {5}, 99999).tier, "miss");
}

TEST_P(ConsistencyMemoryTest, NewerDecisionReplacesOlderAndResetsHits) {
  remember("acme", {5, 6}, "edge", 1000);
  EXPECT_EQ(find("acme", {5}, 1100).hits, 1);
  remember("acme", {5}, "cloud", 2000, kMinute, "escalated");
  RememberedRoute route = find("acme", {5}, 2100);
  EXPECT_EQ(route.tier, "cloud");
  EXPECT_EQ(route.reason, "escalated");
  EXPECT_EQ(route.decided_at_ms, 2000);
  EXPECT_EQ(route.hits, 1);
  EXPECT_EQ(find("acme", {6}, 2100).tier, "edge");  // other keys keep their route
}

TEST_P(ConsistencyMemoryTest, OlderDecisionArrivingLateDoesNotOverwrite) {
  remember("acme", {5}, "cloud", 2000);
  remember("acme", {5}, "edge", 1000);  // a slower request decided earlier
  EXPECT_EQ(find("acme", {5}, 2100).tier, "cloud");
  remember("acme", {5}, "human", 2000);  // the same instant counts as newer
  EXPECT_EQ(find("acme", {5}, 2100).tier, "human");
}

TEST_P(ConsistencyMemoryTest, LatestDecidedWinsAcrossKeys) {
  remember("acme", {1}, "edge", 1000);
  remember("acme", {2}, "human", 3000);
  remember("acme", {3}, "cloud", 2000);
  RememberedRoute route = find("acme", {1, 2, 3}, 4000);
  EXPECT_EQ(route.tier, "human");
  EXPECT_EQ(route.matched_key, 2u);
  // An expired newer route does not hide an older live one.
  remember("acme", {4}, "cloud", 3500, 100);
  EXPECT_EQ(find("acme", {1, 4}, 4000).tier, "edge");
}

TEST_P(ConsistencyMemoryTest, KeysWithTheTopBitSetRoundTrip) {
  const std::vector<uint64_t> keys = {0xffffffffffffffffull, 0x8000000000000000ull,
                                      0x7fffffffffffffffull, 0};
  for (uint64_t key : keys) {
    remember("acme", {key}, "cloud", 1000);
  }
  for (uint64_t key : keys) {
    RememberedRoute route = find("acme", {key}, 1001);
    EXPECT_EQ(route.tier, "cloud") << key;
    EXPECT_EQ(route.matched_key, key);
  }
  // -1 as int64 and 0xffff... as uint64 are one key, not two.
  EXPECT_EQ(find("acme", {0xfffffffffffffffeull}, 1001).tier, "miss");
}

TEST_P(ConsistencyMemoryTest, ClientsAreIsolated) {
  remember("alice", {42}, "cloud", 1000);
  remember("", {43}, "edge", 1000);
  EXPECT_EQ(find("bob", {42}, 1001).tier, "miss");
  EXPECT_EQ(find("alice", {42}, 1001).tier, "cloud");
  EXPECT_EQ(find("alice", {43}, 1001).tier, "miss");
  EXPECT_EQ(find("", {43}, 1001).tier, "edge");  // anonymous clients share one memory
  remember("bob", {42}, "edge", 2000);
  EXPECT_EQ(find("alice", {42}, 2001).tier, "cloud");
  EXPECT_EQ(find("bob", {42}, 2001).tier, "edge");
}

TEST_P(ConsistencyMemoryTest, ForgetDropsOnlyThatClient) {
  remember("alice", {1, 2}, "cloud", 1000);
  remember("bob", {1}, "edge", 1000);
  ASSERT_TRUE(memory_->forget("alice"));
  EXPECT_EQ(find("alice", {1, 2}, 1001).tier, "miss");
  EXPECT_EQ(find("bob", {1}, 1001).tier, "edge");
  ASSERT_TRUE(memory_->forget("nobody"));
}

TEST_P(ConsistencyMemoryTest, PruneDeletesOnlyExpiredRows) {
  remember("alice", {1, 2}, "cloud", 1000, 100);  // expires at 1100
  remember("bob", {1}, "edge", 1000, 1000);       // expires at 2000
  auto pruned = memory_->prune_expired(1100);
  ASSERT_TRUE(pruned);
  EXPECT_EQ(*pruned, 2u);
  EXPECT_EQ(find("bob", {1}, 1200).tier, "edge");
  auto again = memory_->prune_expired(1100);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, 0u);
  auto rest = memory_->prune_expired(5000);
  ASSERT_TRUE(rest);
  EXPECT_EQ(*rest, 1u);
}

TEST_P(ConsistencyMemoryTest, HugeTtlSaturatesInsteadOfOverflowing) {
  remember("acme", {1}, "edge", 1000, std::numeric_limits<int64_t>::max());
  RememberedRoute route = find("acme", {1}, std::numeric_limits<int64_t>::max() - 1);
  EXPECT_EQ(route.tier, "edge");
  EXPECT_EQ(route.expires_at_ms, std::numeric_limits<int64_t>::max());
}

TEST_P(ConsistencyMemoryTest, RefusesBadArguments) {
  EXPECT_EQ(memory_->remember("acme", {1}, "gpu", "", 0, kMinute).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(memory_->remember("acme", {1}, "edge", "", 0, 0).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(memory_->remember("acme", {1}, "edge", "", 0, -5).error().code,
            ErrorCode::kInvalidArgument);
  const std::vector<uint64_t> too_many(kMaxClusterKeys + 1, 7);
  EXPECT_EQ(memory_->remember("acme", too_many, "edge", "", 0, kMinute).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(memory_->lookup("acme", too_many, 0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(find("acme", {7}, 1).tier, "miss");  // nothing half-stored
  // An empty key set stores nothing and is not an error.
  EXPECT_TRUE(memory_->remember("acme", {}, "edge", "", 0, kMinute));
}

TEST_P(ConsistencyMemoryTest, AcceptsTheMaximumKeyCountWithDuplicates) {
  std::vector<uint64_t> keys(kMaxClusterKeys);
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = i % 5;  // duplicates are harmless
  }
  remember("acme", keys, "human", 1000);
  EXPECT_EQ(find("acme", keys, 1001).tier, "human");
  EXPECT_EQ(find("acme", {4}, 1001).tier, "human");
}

// Lookups from many threads (and, for Redis, from several replicas' connections) each count
// exactly one hit: the find-and-bump is atomic.
TEST_P(ConsistencyMemoryTest, ConcurrentLookupsCountEveryHit) {
  remember("acme", {1, 2}, "cloud", 1000);
  std::vector<std::unique_ptr<ConsistencyMemory>> replicas;
  std::vector<ConsistencyMemory*> handles = {memory_.get()};
  if (GetParam() == StoreBackend::kRedis) {
    for (int i = 0; i < 3; ++i) {
      replicas.push_back(open_handle());
      ASSERT_TRUE(replicas.back());
      handles.push_back(replicas.back().get());
    }
  }
  constexpr int kThreads = 8;
  constexpr int kLookups = 25;
  std::latch start(kThreads);
  std::atomic<int> hits = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ConsistencyMemory& memory = *handles[static_cast<size_t>(t) % handles.size()];
      start.arrive_and_wait();
      for (int i = 0; i < kLookups; ++i) {
        auto found = memory.lookup("acme", {9, 1}, 2000);
        if (!found || !found->has_value()) {
          ADD_FAILURE() << (found ? "miss" : found.error().message);
          return;
        }
        ++hits;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(hits.load(), kThreads * kLookups);
  EXPECT_EQ(find("acme", {1}, 2001).hits, kThreads * kLookups + 1);
}

// Times lookups on a warm database: a request-path budget of tens of microseconds. Prints the
// numbers; asserts only a bound far above them, since CI machines vary.
void measure_lookups(ConsistencyMemory& memory, const char* label, int routes = 2000,
                     int lookups = 5000) {
  for (int i = 0; i < routes; ++i) {
    const uint64_t base = static_cast<uint64_t>(i) * 4;
    ASSERT_TRUE(memory.remember("client" + std::to_string(i % 10),
                                {base, base + 1, base + 2, base + 3}, "edge", "r", 1000, kMinute));
  }
  using Clock = std::chrono::steady_clock;
  auto time = [&](uint64_t offset) {
    const auto start = Clock::now();
    for (int i = 0; i < lookups; ++i) {
      const uint64_t base = static_cast<uint64_t>(i % routes) * 4 + offset;
      auto found = memory.lookup("client" + std::to_string(i % 10),
                                 {base + 100000, base + 200000, base + 300000, base}, 2000);
      if (!found) {
        ADD_FAILURE() << found.error().message;
        break;
      }
    }
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / lookups;
  };
  const double hit_us = time(0);
  const double miss_us = time(1000000);
  std::printf("[ %s ] lookup: %.1f us per hit, %.1f us per miss\n", label, hit_us, miss_us);
  EXPECT_LT(hit_us, 5000.0);
  EXPECT_LT(miss_us, 5000.0);
}

std::string find_tier(ConsistencyMemory& memory, const std::vector<uint64_t>& keys) {
  auto found = memory.lookup("c", keys, kMinute + 4 * int64_t{kTrimEvery});
  if (!found) {
    return "error: " + found.error().message;
  }
  return found->has_value() ? (*found)->tier : "miss";
}

TEST(ConsistencyMemoryLatency, LookupIsFastInMemory) {
  auto db = Database::open(":memory:");
  ASSERT_TRUE(db);
  SqliteConsistencyMemory memory(*db);
  measure_lookups(memory, ":memory:");
}

TEST(ConsistencyMemoryLatency, LookupIsFastOnAFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto db = Database::open(dir.file("tandem.db"));
  ASSERT_TRUE(db) << db.error().message;
  SqliteConsistencyMemory memory(*db);
  measure_lookups(memory, "file");
}

// Every request adds routes; the table must not grow with traffic: every kTrimEvery remembers,
// the routes beyond max_routes that expire first go.
TEST(ConsistencyMemoryBound, RoutesStayWithinMaxRoutesWhateverTheTraffic) {
  auto db = Database::open(":memory:");
  ASSERT_TRUE(db);
  constexpr uint64_t kMaxRoutes = 50;
  SqliteConsistencyMemory memory(*db, kMaxRoutes);
  auto routes = [&] {
    auto connection = (*db)->acquire();
    auto count = connection.query_int64("SELECT count(*) FROM consistency_routes");
    return count ? count.value() : -1;
  };
  // Two keys per request, later requests expiring later; one trim per kTrimEvery.
  for (uint64_t round = 1; round <= 3; ++round) {
    for (uint64_t i = 0; i < kTrimEvery; ++i) {
      const uint64_t n = round * kTrimEvery + i;
      ASSERT_TRUE(
          memory.remember("c", {2 * n, 2 * n + 1}, "cloud", "r", kMinute + int64_t(n), kMinute));
    }
    EXPECT_EQ(routes(), int64_t{kMaxRoutes}) << "round " << round;
  }
  // The newest routes are the ones kept.
  const uint64_t last = 4 * kTrimEvery - 1;
  EXPECT_EQ(find_tier(memory, {2 * last}), "cloud");
  EXPECT_EQ(find_tier(memory, {2 * kTrimEvery}), "miss");

  // Expired routes go first; routes of one instant (the same expiry) are cut by the key.
  for (uint64_t i = 0; i < kTrimEvery; ++i) {
    ASSERT_TRUE(memory.remember("d", {1000000 + i}, "edge", "r", 10 * kMinute, kMinute));
  }
  EXPECT_EQ(routes(), int64_t{kMaxRoutes});
  auto connection = (*db)->acquire();
  auto of_c = connection.query_int64("SELECT count(*) FROM consistency_routes WHERE client = 'c'");
  ASSERT_TRUE(of_c);
  EXPECT_EQ(of_c.value(), 0) << "the routes of the earlier rounds had expired at 10 minutes";
}

// A round trip per lookup on loopback: fewer of them, to stay fast.
TEST(ConsistencyMemoryLatency, LookupIsFastOnRedis) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client) << client.error().message;
  RedisConsistencyMemory memory(*client);
  measure_lookups(memory, "redis", 500, 1000);
}

}  // namespace
}  // namespace tandem::store
