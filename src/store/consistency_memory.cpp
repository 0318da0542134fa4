#include "store/consistency_memory.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "store/backend_checks.h"

namespace tandem::store {
namespace {

// SQLite integers are signed 64-bit; the bit pattern round-trips every uint64 key, including
// those with the top bit set (stored as negative numbers).
int64_t to_sql(uint64_t key) {
  return std::bit_cast<int64_t>(key);
}
uint64_t from_sql(int64_t key) {
  return std::bit_cast<uint64_t>(key);
}

constexpr const char* kBumpSql =
    "UPDATE consistency_routes SET hits = hits + 1 "
    "WHERE client = ?1 AND cluster_key = ?2 AND decided_at_ms = ?3 RETURNING hits";
constexpr const char* kUpsertSql =
    "INSERT INTO consistency_routes "
    "(client, cluster_key, tier, reason, decided_at_ms, expires_at_ms, hits) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0) "
    "ON CONFLICT (client, cluster_key) DO UPDATE SET tier = excluded.tier, "
    "reason = excluded.reason, decided_at_ms = excluded.decided_at_ms, "
    "expires_at_ms = excluded.expires_at_ms, hits = 0 "
    "WHERE excluded.decided_at_ms >= consistency_routes.decided_at_ms";
constexpr const char* kForgetSql = "DELETE FROM consistency_routes WHERE client = ?1";
constexpr const char* kPruneSql = "DELETE FROM consistency_routes WHERE expires_at_ms <= ?1";
// Beyond ?1 routes, those expiring first (the expired ones among them), ties cut by the key;
// the expiry index holds the key too.
constexpr const char* kCapSql =
    "DELETE FROM consistency_routes WHERE (expires_at_ms, client, cluster_key) <= "
    "(SELECT expires_at_ms, client, cluster_key FROM consistency_routes "
    "ORDER BY expires_at_ms DESC, client DESC, cluster_key DESC LIMIT 1 OFFSET ?1)";

}  // namespace

// ---- checks shared with the Redis memory (store/backend_checks.h) ----

namespace internal {
namespace {

constexpr size_t kMaxClientBytes = 1024;
constexpr size_t kMaxReasonBytes = 64u << 10;

}  // namespace

Status check_cluster_keys(const std::vector<uint64_t>& keys) {
  if (keys.size() > kMaxClusterKeys) {
    return make_error(ErrorCode::kInvalidArgument,
                      std::to_string(keys.size()) +
                          " cluster keys; the routing memory takes at most " +
                          std::to_string(kMaxClusterKeys));
  }
  return {};
}

Status check_memory_client(const std::string& client) {
  if (client.size() > kMaxClientBytes) {
    return make_error(ErrorCode::kInvalidArgument, "client id is " + std::to_string(client.size()) +
                                                       " bytes; the routing memory keeps at most " +
                                                       std::to_string(kMaxClientBytes));
  }
  return {};
}

Status check_route(const std::string& tier, const std::string& reason, int64_t ttl_ms) {
  if (tier != "edge" && tier != "cloud" && tier != "human") {
    return make_error(ErrorCode::kInvalidArgument,
                      "unknown tier '" + tier + "' (expected edge, cloud or human)");
  }
  if (ttl_ms <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "a remembered route needs a positive ttl, not " +
                                                       std::to_string(ttl_ms) + " ms");
  }
  if (reason.size() > kMaxReasonBytes) {
    return make_error(ErrorCode::kInvalidArgument, "route reason is " +
                                                       std::to_string(reason.size()) +
                                                       " bytes; the routing memory keeps at most " +
                                                       std::to_string(kMaxReasonBytes));
  }
  return {};
}

Status check_lookup(const std::string& client, const std::vector<uint64_t>& keys) {
  if (Status status = check_cluster_keys(keys); !status) {
    return status;
  }
  return check_memory_client(client);
}

Status check_remember(const std::string& client, const std::vector<uint64_t>& keys,
                      const std::string& tier, const std::string& reason, int64_t ttl_ms) {
  if (Status status = check_lookup(client, keys); !status) {
    return status;
  }
  return check_route(tier, reason, ttl_ms);
}

int64_t route_expiry(int64_t now_ms, int64_t ttl_ms) {
  return now_ms > std::numeric_limits<int64_t>::max() - ttl_ms ? std::numeric_limits<int64_t>::max()
                                                               : now_ms + ttl_ms;
}

}  // namespace internal

// ---- SqliteConsistencyMemory ----

SqliteConsistencyMemory::SqliteConsistencyMemory(std::shared_ptr<Database> db, uint64_t max_routes)
    : db_(std::move(db)), max_routes_(std::max<uint64_t>(max_routes, 1)) {
  // One statement per key count keeps the lookup a single indexed query; the text holds only
  // placeholders, never values.
  lookup_sql_.reserve(kMaxClusterKeys);
  std::string placeholders;
  for (size_t n = 1; n <= kMaxClusterKeys; ++n) {
    placeholders += (n == 1 ? "?" : ", ?") + std::to_string(n + 2);
    lookup_sql_.push_back(
        "SELECT cluster_key, tier, reason, decided_at_ms, expires_at_ms, hits "
        "FROM consistency_routes WHERE client = ?1 AND expires_at_ms > ?2 AND cluster_key IN (" +
        placeholders + ") ORDER BY decided_at_ms DESC, expires_at_ms DESC, cluster_key LIMIT 1");
  }
}

Result<std::optional<RememberedRoute>> SqliteConsistencyMemory::lookup(
    const std::string& client, const std::vector<uint64_t>& keys, int64_t now_ms) {
  if (Status status = internal::check_lookup(client, keys); !status) {
    return status.error();
  }
  if (keys.empty()) {
    return std::optional<RememberedRoute>();
  }

  Connection connection = db_->acquire();
  RememberedRoute route;
  {
    auto stmt = connection.prepare(lookup_sql_[keys.size() - 1]);
    if (!stmt) {
      return stmt.error();
    }
    stmt->bind(1, client);
    stmt->bind(2, now_ms);
    for (size_t i = 0; i < keys.size(); ++i) {
      stmt->bind(static_cast<int>(i) + 3, to_sql(keys[i]));
    }
    auto row = stmt->step();
    if (!row) {
      return row.error();
    }
    if (!*row) {
      return std::optional<RememberedRoute>();
    }
    route.matched_key = from_sql(stmt->column_int64(0));
    route.tier = stmt->column_text(1);
    route.reason = stmt->column_text(2);
    route.decided_at_ms = stmt->column_int64(3);
    route.expires_at_ms = stmt->column_int64(4);
    route.hits = static_cast<int>(
        std::min<int64_t>(stmt->column_int64(5) + 1, std::numeric_limits<int>::max()));
  }

  // A miss stays read-only; only a hit writes. The decided_at_ms condition leaves alone a
  // route that another process replaced in between.
  auto bump = connection.prepare(kBumpSql);
  if (!bump) {
    return bump.error();
  }
  bump->bind(1, client);
  bump->bind(2, to_sql(route.matched_key));
  bump->bind(3, route.decided_at_ms);
  auto row = bump->step();
  if (!row) {
    return row.error();
  }
  if (*row) {
    route.hits =
        static_cast<int>(std::min<int64_t>(bump->column_int64(0), std::numeric_limits<int>::max()));
    if (Status status = bump->run(); !status) {
      return status.error();
    }
  }
  return std::optional<RememberedRoute>(std::move(route));
}

Status SqliteConsistencyMemory::remember(const std::string& client,
                                         const std::vector<uint64_t>& keys, const std::string& tier,
                                         const std::string& reason, int64_t now_ms,
                                         int64_t ttl_ms) {
  if (Status status = internal::check_remember(client, keys, tier, reason, ttl_ms); !status) {
    return status;
  }
  if (keys.empty()) {
    return {};
  }
  // Saturates instead of overflowing for a huge ttl ("remember for ever").
  const int64_t expires_at_ms = internal::route_expiry(now_ms, ttl_ms);

  // One transaction: all keys or none, and one commit instead of one per key. The connection
  // is released before trim() takes it again.
  Status stored = [&]() -> Status {
    Connection connection = db_->acquire();
    auto transaction = Transaction::begin(connection);
    if (!transaction) {
      return transaction.error();
    }
    {
      auto stmt = connection.prepare(kUpsertSql);
      if (!stmt) {
        return stmt.error();
      }
      for (uint64_t key : keys) {
        stmt->reset();
        stmt->bind(1, client);
        stmt->bind(2, to_sql(key));
        stmt->bind(3, tier);
        stmt->bind(4, reason);
        stmt->bind(5, now_ms);
        stmt->bind(6, expires_at_ms);
        if (Status status = stmt->run(); !status) {
          return status;
        }
      }
    }
    return transaction->commit();
  }();
  if (!stored) {
    return stored;
  }
  if (remembered_.fetch_add(1) % kTrimEvery == kTrimEvery - 1) {
    if (auto trimmed = trim(); !trimmed) {
      return make_error(trimmed.error().code,
                        "trimming the routing memory: " + trimmed.error().message);
    }
  }
  return {};
}

Status SqliteConsistencyMemory::forget(const std::string& client) {
  Connection connection = db_->acquire();
  auto stmt = connection.prepare(kForgetSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, client);
  return stmt->run();
}

Result<size_t> SqliteConsistencyMemory::prune_expired(int64_t now_ms) {
  Connection connection = db_->acquire();
  auto stmt = connection.prepare(kPruneSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, now_ms);
  if (Status status = stmt->run(); !status) {
    return status.error();
  }
  return static_cast<size_t>(connection.changes());
}

Result<size_t> SqliteConsistencyMemory::trim() {
  Connection connection = db_->acquire();
  auto stmt = connection.prepare(kCapSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<int64_t>(
                    std::min<uint64_t>(max_routes_, std::numeric_limits<int64_t>::max())));
  if (Status status = stmt->run(); !status) {
    return status.error();
  }
  return static_cast<size_t>(connection.changes());
}

}  // namespace tandem::store
