#pragma once
// One SQLite database file holding the routing layer's durable state (review tickets, routing
// memory). Thread-safety: a Database owns a single connection guarded by a mutex; any thread
// may call acquire(), which blocks until the connection is free. Several processes (the
// gateway and `tandem review`) may open the same file: WAL lets readers run beside a writer,
// and a busy timeout makes writers wait for each other instead of failing at once.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/result.h"

// SQLite's handle types, declared here so that users of this header need not see sqlite3.h.
struct sqlite3;
struct sqlite3_stmt;

namespace tandem::store {

class Database;

struct SqliteCloser {
  void operator()(sqlite3* db) const;
};
struct StatementFinalizer {
  void operator()(sqlite3_stmt* stmt) const;
};
using SqlitePtr = std::unique_ptr<sqlite3, SqliteCloser>;
using StatementPtr = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// A cached prepared statement lent to one caller. Parameters are 1-based, as in SQLite.
// Destroying it resets the statement and clears its bindings so the cache can lend it again;
// it must not outlive the Connection that lent it. Thread-safety: used only by the thread that
// holds that Connection.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // A failed bind (index out of range, value too big) is remembered and reported by step(),
  // so callers bind everything and check once.
  void bind(int index, int64_t value);
  void bind(int index, double value);
  void bind(int index, std::string_view text);
  // Binds `text` without copying it: it must stay alive and unchanged until this Statement is
  // destroyed or the parameter rebound. For the hot inserts' fields of a record the caller
  // holds; temporaries take bind(), which copies.
  void bind_static(int index, std::string_view text);
  void bind_null(int index);

  // Runs the statement one step: true when a row is ready to read, false when it is done.
  // SQLITE_BUSY after the busy timeout becomes kBusy (retryable); anything else kInternal.
  Result<bool> step();
  // Steps until done, for statements that return no rows.
  Status run();
  // Steps until done, handing each row to `visit` (which reads it with the column_ calls).
  Status each_row(const std::function<void(const Statement&)>& visit);
  // Rewinds the statement to run it again (SQLite refuses new bindings until then); the
  // current bindings stay until replaced.
  void reset();

  // Columns are 0-based, as in SQLite; valid only after step() returned true.
  int64_t column_int64(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  bool column_is_null(int index) const;

 private:
  friend class Connection;
  Statement(sqlite3_stmt* stmt, sqlite3* db, bool* in_use);

  sqlite3_stmt* stmt_;
  sqlite3* db_;
  bool* in_use_;  // the cache's flag; cleared on destruction
  int bind_error_ = 0;
};

// Exclusive use of a Database's connection for as long as it lives. Thread-safety: holds the
// Database's mutex; only the thread that acquired it uses it.
class Connection {
 public:
  Connection(Connection&&) = default;

  // The cached statement for `sql` (prepared on first use). `sql` must carry values only as
  // `?` parameters, never spliced in. A statement is lent to one caller at a time: asking for
  // one that is still lent is a programming error reported as kInternal.
  Result<Statement> prepare(std::string_view sql);
  // Runs parameterless SQL (schema, pragmas, several statements at once); not cached.
  Status exec(const char* sql);
  // Runs one parameterless statement through the cache: for the ones run again and again
  // (BEGIN, COMMIT), which exec() would parse anew each time.
  Status run_cached(std::string_view sql);
  // The first column of the first row of a parameterless query (`SELECT count(*) ...`).
  Result<int64_t> query_int64(std::string_view sql);
  // Rows changed by the last INSERT, UPDATE or DELETE on this connection.
  int64_t changes() const;
  // The rowid of the last successful INSERT on this connection (cheaper than RETURNING, which
  // SQLite implements with a temporary table).
  int64_t last_insert_rowid() const;

 private:
  friend class Database;
  explicit Connection(Database* db);

  std::unique_lock<std::mutex> lock_;
  Database* db_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back when destroyed uncommitted (an early error return).
// IMMEDIATE takes the write lock up front, so a read-then-write cannot deadlock against
// another process upgrading its own read. Must not outlive its Connection, and statements
// used inside it should be destroyed (reset) before commit(). Thread-safety: as its Connection.
class Transaction {
 public:
  static Result<Transaction> begin(Connection& connection);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  Status commit();

 private:
  explicit Transaction(Connection* connection) : connection_(connection) {}
  Connection* connection_;  // null once committed or rolled back
};

class Database {
 public:
  // The schema this binary writes (PRAGMA user_version). Version 1: review_tickets and
  // consistency_routes; 2: traces; 3: shadow_samples and shadow_traffic; 4: cloud_audit, and
  // model identities and time to first token on traces; 5: stored_responses; 6: the CHECKs on
  // lists of strings as comparisons (no temporary index per inserted row).
  static constexpr int kSchemaVersion = 6;

  // Opens (creating if needed) the SQLite file at `path`; ":memory:" gives a private
  // in-memory database for tests. Enables WAL, synchronous=NORMAL, foreign keys and a 5 s
  // busy timeout, then migrates the schema. Fails, with a message naming the path, when the
  // path is a directory, cannot be created or written, is not an SQLite database, belongs to
  // another application, or has a newer schema than kSchemaVersion (never altered then).
  static Result<std::shared_ptr<Database>> open(const std::string& path);

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database() = default;

  // Blocks until this thread has the connection to itself.
  Connection acquire() { return Connection(this); }

  const std::string& path() const { return path_; }

 private:
  friend class Connection;
  struct CachedStatement {
    StatementPtr stmt;
    bool in_use = false;
  };

  Database(std::string path, SqlitePtr db) : path_(std::move(path)), db_(std::move(db)) {}
  Status configure();
  Status migrate();

  const std::string path_;
  std::mutex mutex_;
  SqlitePtr db_;  // guarded by mutex_
  // Declared after db_ so the statements are finalized before the connection closes.
  // Looked up by string_view, so that lending a cached statement allocates nothing.
  struct SqlHash {
    using is_transparent = void;
    size_t operator()(std::string_view sql) const { return std::hash<std::string_view>{}(sql); }
  };
  std::unordered_map<std::string, CachedStatement, SqlHash, std::equal_to<>>
      statements_;  // guarded by mutex_
};

// Retention of an append-only table: deletes its rows beyond the newest `max_rows`, newest by
// the increasing integer primary key `id`, and returns how many went. `table` is one of the
// store's own table names, never input.
Result<size_t> prune_oldest_rows(Database& db, std::string_view table, uint64_t max_rows);

}  // namespace tandem::store
