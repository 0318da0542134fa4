#pragma once
// ConsRoute-style routing memory: similar queries from the same client keep the tier chosen
// for the first of them for a while, so a conversation does not flip between edge and cloud
// answers. The router derives a few locality-sensitive "cluster keys" per query (e.g. MinHash
// band hashes); queries sharing any key are similar. The memory maps (client, key) to a tier
// with an expiry. Clients are isolated: one client's routes never answer another's lookup
// (all anonymous clients, client "", share one memory).
//
// Thread-safety: every method may be called from any thread; the Database serialises them.
// lookup() runs on the request path: one indexed query, plus one update on a hit.

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
  explicit ConsistencyMemory(std::shared_ptr<Database> db);

  // The most recently decided unexpired route stored under any of `keys` for `client`, or
  // nullopt (also for no keys). A route expires at expires_at_ms exactly. Bumps the matched
  // route's hits.
  Result<std::optional<RememberedRoute>> lookup(const std::string& client,
                                                const std::vector<uint64_t>& keys, int64_t now_ms);

  // Stores the route under every key, atomically, decided at now_ms. A key's existing route is
  // replaced when this decision is at least as recent, and its hits start again from 0; an
  // older decision arriving late (a slow request) does not overwrite a newer one.
  // kInvalidArgument for an unknown tier, ttl_ms <= 0, or too many keys.
  Status remember(const std::string& client, const std::vector<uint64_t>& keys,
                  const std::string& tier, const std::string& reason, int64_t now_ms,
                  int64_t ttl_ms);

  // Deletes every route of `client` (a user asks to reset).
  Status forget(const std::string& client);

  // Deletes the routes expired at now_ms; returns how many.
  Result<size_t> prune_expired(int64_t now_ms);

 private:
  std::shared_ptr<Database> db_;
  // lookup's SQL for 1..kMaxClusterKeys keys, built once: the IN list has one `?` per key.
  std::vector<std::string> lookup_sql_;
};

}  // namespace tandem::store
