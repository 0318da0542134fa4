#pragma once
// The routing memory in Redis, shared by several gateway replicas: a conversation keeps its
// tier whichever replica serves its next request. Semantics are those of ConsistencyMemory,
// identical to SqliteConsistencyMemory (same checks, ordering, tie-breaks and hit counting).
//
// Layout, under the client's prefix P (<client> is the client id in lower-case hex, so any
// bytes are safe in a key; <key> is the cluster key as a signed decimal int64):
//   P cm:r:<client>:<key>   a hash: tier, reason, decided, expires, hits
//   P cm:c:<client>         a sorted set of the client's keys scored by expiry, for forget()
//
// Atomicity: lookup() (find the most recent unexpired route under any key, bump its hits) and
// remember() (store under every key unless a key holds a newer decision) are each one Lua
// script; forget() is one script too. Times are compared as exact int64 inside the scripts.
//
// Expiry: a route is live until expires_at_ms on the callers' clock, exactly as in SQLite:
// every lookup compares with its own now_ms. Redis also drops the route by itself
// kReclaimGraceMs after that (a relative PEXPIRE of expires_at_ms - now_ms + the grace, i.e.
// PEXPIREAT expires_at_ms + grace on Redis's clock when the replicas' clocks agree with it).
// The expiry is relative rather than PEXPIREAT expires_at_ms because a replica whose clock
// runs behind Redis's would otherwise lose live routes early, and a simulated clock (tests)
// would lose all of them. A ttl reaching beyond kMaxPhysicalTtlMs keeps the route until it is
// replaced, forgotten or pruned.
//
// prune_expired(now_ms) scans this prefix's routes (SCAN, in batches, each batch one script)
// and deletes those expired at now_ms; it returns how many it deleted, which leaves out the
// routes Redis had already dropped by itself. It reads every key of the database, so it is
// for maintenance, not for the request path; the gateway need not call it at all.
//
// Thread-safety: as the RedisClient it holds (any thread; calls share its connection).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/consistency_memory.h"
#include "store/redis_client.h"

namespace tandem::store {

class RedisConsistencyMemory final : public ConsistencyMemory {
 public:
  // How long Redis keeps a route after its expiry before dropping it by itself.
  static constexpr int64_t kReclaimGraceMs = 60'000;
  // Routes that would live longer in Redis than this (ten years) are kept without a Redis
  // expiry.
  static constexpr int64_t kMaxPhysicalTtlMs = 10LL * 366 * 24 * 3600 * 1000;

  // Keys go under client->prefix(); replicas that share a prefix share the memory.
  explicit RedisConsistencyMemory(std::shared_ptr<RedisClient> client);

  const char* backend() const override { return "redis"; }
  Result<std::optional<RememberedRoute>> lookup(const std::string& client,
                                                const std::vector<uint64_t>& keys,
                                                int64_t now_ms) override;
  Status remember(const std::string& client, const std::vector<uint64_t>& keys,
                  const std::string& tier, const std::string& reason, int64_t now_ms,
                  int64_t ttl_ms) override;
  Status forget(const std::string& client) override;
  Result<size_t> prune_expired(int64_t now_ms) override;

 private:
  // P cm:r:<hex client>: — a route's key is this plus the cluster key.
  std::string route_prefix(const std::string& client) const;
  // P cm:c:<hex client>
  std::string client_index(const std::string& client) const;

  std::shared_ptr<RedisClient> client_;
};

}  // namespace tandem::store
