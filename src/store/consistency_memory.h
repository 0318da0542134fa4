#pragma once
// ConsRoute-style routing memory: similar queries from the same client keep the tier chosen
// for the first of them for a while, so a conversation does not flip between edge and cloud
// answers. The router derives a few locality-sensitive "cluster keys" per query (e.g. MinHash
// band hashes); queries sharing any key are similar. The memory maps (client, key) to a tier
// with an expiry. Clients are isolated: one client's routes never answer another's lookup
// (all anonymous clients, client "", share one memory).
//
// ConsistencyMemory is the interface; SqliteConsistencyMemory (below) keeps the routes in the
// gateway's SQLite file, RedisConsistencyMemory (store/redis_consistency_memory.h) in a Redis
// that several gateway replicas share, with identical semantics.
//
// Thread-safety: every method of every implementation may be called from any thread. lookup()
// runs on the request path: one indexed query (SQLite) or one script call (Redis).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace tandem::store {

// At most this many cluster keys per lookup or remember; more is kInvalidArgument.
inline constexpr size_t kMaxClusterKeys = 32;

struct RememberedRoute {
  std::string tier;    // "edge" | "cloud" | "human"
  std::string reason;  // why that tier was chosen originally
  uint64_t matched_key = 0;
  int64_t decided_at_ms = 0, expires_at_ms = 0;
  int hits = 0;  // times this memory has been used, this lookup included
};

class ConsistencyMemory {
 public:
  virtual ~ConsistencyMemory() = default;

  // "sqlite" or "redis": which store holds the routes, for logs and /health.
  virtual const char* backend() const = 0;

  // The most recently decided unexpired route stored under any of `keys` for `client`, or
  // nullopt (also for no keys). A route expires at expires_at_ms exactly. Bumps the matched
  // route's hits. Ties in the decision time go to the later expiry, then to the smaller key
  // (compared as int64). kInvalidArgument for too many keys or a client id over 1 KiB.
  virtual Result<std::optional<RememberedRoute>> lookup(const std::string& client,
                                                        const std::vector<uint64_t>& keys,
                                                        int64_t now_ms) = 0;

  // Stores the route under every key, atomically, decided at now_ms. A key's existing route is
  // replaced when this decision is at least as recent, and its hits start again from 0; an
  // older decision arriving late (a slow request) does not overwrite a newer one.
  // kInvalidArgument for an unknown tier, ttl_ms <= 0, too many keys, a client id over 1 KiB
  // or a reason over 64 KiB. No keys: stores nothing, successfully.
  virtual Status remember(const std::string& client, const std::vector<uint64_t>& keys,
                          const std::string& tier, const std::string& reason, int64_t now_ms,
                          int64_t ttl_ms) = 0;

  // Deletes every route of `client` (a user asks to reset).
  virtual Status forget(const std::string& client) = 0;

  // Deletes the routes expired at now_ms; returns how many it deleted. (Redis also drops
  // expired routes by itself; see RedisConsistencyMemory for what its count covers.)
  virtual Result<size_t> prune_expired(int64_t now_ms) = 0;
};

// Routes kept by default (routing.consistency.max_routes).
inline constexpr uint64_t kDefaultMaxRoutes = 100000;
// remember() trims the routes after this many calls: so the table holds at most max_routes +
// kTrimEvery * kMaxClusterKeys rows whatever the request rate.
inline constexpr uint64_t kTrimEvery = 256;

// Routes in SQLite, one row per (client, key). The Database serialises calls. Bounded whatever
// the request rate: every kTrimEvery remember() calls, the routes beyond `max_routes` that
// expire first are deleted (a lost route only means a query is routed afresh). Expired routes
// within the bound go with the gateway's sweeper (store/expiry_sweeper.h).
class SqliteConsistencyMemory final : public ConsistencyMemory {
 public:
  explicit SqliteConsistencyMemory(std::shared_ptr<Database> db,
                                   uint64_t max_routes = kDefaultMaxRoutes);

  const char* backend() const override { return "sqlite"; }
  Result<std::optional<RememberedRoute>> lookup(const std::string& client,
                                                const std::vector<uint64_t>& keys,
                                                int64_t now_ms) override;
  Status remember(const std::string& client, const std::vector<uint64_t>& keys,
                  const std::string& tier, const std::string& reason, int64_t now_ms,
                  int64_t ttl_ms) override;
  Status forget(const std::string& client) override;
  Result<size_t> prune_expired(int64_t now_ms) override;
  // Deletes the routes beyond max_routes, those expiring first; returns how many went.
  // remember() runs it every kTrimEvery calls.
  Result<size_t> trim();

 private:
  std::shared_ptr<Database> db_;
  uint64_t max_routes_;
  std::atomic<uint64_t> remembered_{0};  // remember() calls that stored something
  // lookup's SQL for 1..kMaxClusterKeys keys, built once: the IN list has one `?` per key.
  std::vector<std::string> lookup_sql_;
};

}  // namespace tandem::store
