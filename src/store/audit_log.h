#pragma once
// The audit of what left the device: one row per request the gateway sent to a cloud upstream
// (the answer itself, a P3 verification, a token-level continuation, a shadow or canary
// query). It says where the data went (upstream, model), why (purpose), how much (bytes) and
// exactly what (the body's sha256, and — per operations.audit.content — the body itself, with
// every privacy detector's match masked, or as sent). An operator proves with it that
// regulated data never left, and sees what did.
//
// Two homes. In a database (the routing database's cloud_audit table) the rows outlive the
// process; the gateway appends them from TraceWriter's thread, never from the request path.
// In memory (in_memory(), for a gateway without a database file) the rows are a bounded list
// of the newest, appended on the request path itself: an SQLite insert into a database that
// dies with the process anyway cost every cloud request ~17k instructions on the writer
// thread, and the writer's bursts of 64 rows were the relay's slowest requests.
//
// Thread-safety: every method may be called from any thread; the Database, or for the rows in
// memory a mutex, serialises them.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace tandem::store {

// append() refuses larger content; the gateway keeps the first kMaxAuditContentBytes of a
// larger body (its bytes and sha256 still describe the whole body).
inline constexpr size_t kMaxAuditContentBytes = 8u << 20;

struct AuditRecord {
  int64_t id = 0;  // assigned by append(); increasing
  int64_t unix_ms = 0;
  std::string request_id;  // the client's response id; "" for canary queries
  std::string client;      // API key name, X-Tandem-Client or `user`; "" anonymous
  std::string upstream;    // the upstream's configured name
  std::string model;       // the model name sent to it
  // "answer", "verify", "continue", "shadow", "canary" or "embeddings".
  std::string purpose;
  int64_t bytes = 0;                            // size of the request body as sent
  std::string sha256;                           // of the body as sent
  std::string content_mode;                     // "none", "redacted" or "full"
  std::string content;                          // the body per content_mode; "" for "none"
  int64_t redactions = 0;                       // values masked in `content`
  std::vector<std::string> redacted_detectors;  // which detectors matched, once each

  bool operator==(const AuditRecord&) const = default;
};

struct AuditQuery {
  int64_t since_ms = 0;
  int64_t until_ms = std::numeric_limits<int64_t>::max();
  std::string upstream;  // "" for all
  size_t limit = 100;    // 1..10,000
};

class AuditLog {
 public:
  explicit AuditLog(std::shared_ptr<Database> db);
  // Rows in memory: the newest `max_rows` (at least one) are kept, older ones go as new ones
  // come. Ids start at 1, as in a table.
  static std::shared_ptr<AuditLog> in_memory(size_t max_rows);

  // kInvalidArgument naming the field for an unknown purpose or content mode, content with
  // content_mode "none", or content over kMaxAuditContentBytes. Returns the id assigned.
  Result<int64_t> append(const AuditRecord& record);
  // The same, taking the row: one in memory is moved in, not copied (the request path's case).
  Result<int64_t> append(AuditRecord&& record);
  // append() on a connection the caller holds, e.g. inside its own transaction. Only for a log
  // in a database (kInternal for one in memory).
  Result<int64_t> append(Connection& connection, const AuditRecord& record);
  // Whether append() would accept `record` (the same checks, no write).
  static Status check(const AuditRecord& record);
  // The database the log writes to: callers sharing one may share a transaction. Null for a
  // log in memory.
  const std::shared_ptr<Database>& database() const { return db_; }
  // Whether the rows are those of in_memory(), not a database's.
  bool kept_in_memory() const { return memory_ != nullptr; }
  // Whether the rows outlive the process: a database file (not one in memory, nor in_memory()).
  bool persistent() const;
  // Newest first.
  Result<std::vector<AuditRecord>> read(const AuditQuery& query);
  Result<size_t> count();
  // Retention: deletes the oldest rows beyond the newest `max_rows`; returns how many.
  Result<size_t> prune(uint64_t max_rows);

 private:
  // The rows of a log in memory, oldest first.
  struct Memory {
    explicit Memory(size_t most) : max_rows(most) {}
    const size_t max_rows;
    std::mutex mutex;
    std::deque<AuditRecord> rows;  // guarded by mutex
    int64_t next_id = 1;           // guarded by mutex
  };

  Result<int64_t> append_in_memory(AuditRecord record);
  std::vector<AuditRecord> read_in_memory(const AuditQuery& query);

  std::shared_ptr<Database> db_;    // null for a log in memory
  std::unique_ptr<Memory> memory_;  // null for a log in a database
};

}  // namespace tandem::store
