#include "store/response_store.h"

#include <algorithm>
#include <limits>

namespace tandem::store {
namespace {

constexpr const char* kPutSql =
    "INSERT OR REPLACE INTO stored_responses (id, expires_ms, response, conversation) "
    "VALUES (?1, ?2, ?3, ?4)";
constexpr const char* kExpireSql = "DELETE FROM stored_responses WHERE expires_ms <= ?1";
// Deletions by id and expiry leave gaps in seq, so this keeps at most max_rows, often fewer
// for a moment: two index lookups, no scan.
constexpr const char* kTrimSql =
    "DELETE FROM stored_responses WHERE seq <= (SELECT max(seq) FROM stored_responses) - ?1";
constexpr const char* kGetSql =
    "SELECT response, conversation FROM stored_responses WHERE id = ?1 AND expires_ms > ?2";
constexpr const char* kRemoveSql = "DELETE FROM stored_responses WHERE id = ?1";

int64_t as_sql_integer(uint64_t value) {
  return static_cast<int64_t>(
      std::min<uint64_t>(value, static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
}

Status run_with(Connection& connection, const char* sql, int64_t value) {
  auto stmt = connection.prepare(sql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, value);
  return stmt->run();
}

}  // namespace

Status ResponseStore::put(const StoredResponse& response, int64_t now_ms) {
  Connection connection = db_.acquire();
  auto transaction = Transaction::begin(connection);
  if (!transaction) {
    return transaction.error();
  }
  if (Status status = run_with(connection, kExpireSql, now_ms); !status) {
    return status;
  }
  {
    auto stmt = connection.prepare(kPutSql);
    if (!stmt) {
      return stmt.error();
    }
    const auto ttl_ms = std::chrono::duration_cast<std::chrono::milliseconds>(ttl_).count();
    stmt->bind(1, response.id);
    stmt->bind(2, now_ms + ttl_ms);
    stmt->bind(3, response.response);
    stmt->bind(4, response.conversation);
    if (Status status = stmt->run(); !status) {
      return status;
    }
  }
  if (Status status = run_with(connection, kTrimSql, as_sql_integer(max_rows_)); !status) {
    return status;
  }
  return transaction->commit();
}

Result<std::optional<StoredResponse>> ResponseStore::get(const std::string& id, int64_t now_ms) {
  Connection connection = db_.acquire();
  auto stmt = connection.prepare(kGetSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, id);
  stmt->bind(2, now_ms);
  Result<bool> row = stmt->step();
  if (!row) {
    return row.error();
  }
  if (!*row) {
    return std::optional<StoredResponse>();
  }
  return std::optional<StoredResponse>(
      StoredResponse{id, stmt->column_text(0), stmt->column_text(1)});
}

Result<bool> ResponseStore::remove(const std::string& id) {
  Connection connection = db_.acquire();
  auto stmt = connection.prepare(kRemoveSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, id);
  if (Status status = stmt->run(); !status) {
    return status.error();
  }
  return connection.changes() > 0;
}

}  // namespace tandem::store
