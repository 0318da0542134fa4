#include "store/database.h"

#include <filesystem>
#include <limits>
#include <utility>

#include <sqlite3.h>

#include "common/log.h"

namespace tandem::store {
namespace {

// Long enough to ride out another process's write transaction (they last milliseconds),
// short enough that a stuck lock surfaces as an error instead of a hung request.
constexpr int kBusyTimeoutMs = 5000;

}  // namespace

Result<std::shared_ptr<Database>> Database::open(const std::string& path) {
  if (path.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "the database path is empty");
  }
  if (path != ":memory:") {
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) {
      return make_error(ErrorCode::kInvalidArgument,
                        "cannot open database " + path + ": it is a directory, not a file");
    }
  }
  sqlite3* raw = nullptr;
  // NOMUTEX: the Database's own mutex already serialises every use of the connection.
  const int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
      nullptr);
  SqlitePtr db(raw);
  if (rc != SQLITE_OK) {
    std::string detail = db ? sqlite3_errmsg(db.get()) : sqlite3_errstr(rc);
    return make_error(ErrorCode::kNotFound, "cannot open database " + path + ": " + detail +
                                                " (does its directory exist and is it writable?)");
  }
  std::shared_ptr<Database> database(new Database(path, std::move(db)));
  if (Status status = database->configure(); !status) {
    return status.error();
  }
  if (Status status = database->migrate(); !status) {
    return status.error();
  }
  return database;
}

Status Database::configure() {
  Connection connection = acquire();
  sqlite3* db = db_.get();
  sqlite3_busy_timeout(db, kBusyTimeoutMs);

  // The first read of the file: this is where a file that is not a database is caught.
  {
    auto check = connection.prepare("SELECT count(*) FROM sqlite_schema");
    if (!check) {
      return make_error(ErrorCode::kInvalidArgument,
                        "cannot open database " + path_ + ": " + sqlite3_errmsg(db));
    }
    auto row = check->step();
    if (!row) {
      return make_error(ErrorCode::kInvalidArgument,
                        "cannot open database " + path_ + ": " + sqlite3_errmsg(db));
    }
  }
  // SQLite quietly falls back to read-only when the file is not writable; every write would
  // then fail later, far from the cause.
  if (sqlite3_db_readonly(db, "main") == 1) {
    return make_error(ErrorCode::kNotFound,
                      "cannot open database " + path_ + ": the file is read-only");
  }

  // WAL: readers (the CLI listing tickets) never block the gateway's writes, and commits are
  // cheap. synchronous=NORMAL is durable against process crashes; a power cut may lose the
  // last transactions but never corrupts the file.
  {
    auto mode = connection.prepare("PRAGMA journal_mode = WAL");
    if (!mode) {
      return mode.error();
    }
    auto row = mode->step();
    if (!row) {
      return make_error(row.error().code, "cannot open database " + path_ +
                                              ": cannot enable WAL: " + row.error().message);
    }
    const std::string got = *row ? mode->column_text(0) : "";
    if (got != "wal" && path_ != ":memory:") {
      // Some file systems (network mounts) cannot do WAL; SQLite keeps a rollback journal,
      // which is slower but correct.
      log_event(LogLevel::kWarn, "store", "wal_unavailable",
                {{"path", path_}, {"journal_mode", got}});
    }
  }
  if (Status status = connection.exec("PRAGMA synchronous = NORMAL"); !status) {
    return status;
  }
  return connection.exec("PRAGMA foreign_keys = ON");
}

Result<size_t> prune_oldest_rows(Database& db, std::string_view table, uint64_t max_rows) {
  const std::string name(table);
  const std::string sql = "DELETE FROM " + name + " WHERE id <= (SELECT id FROM " + name +
                          " ORDER BY id DESC LIMIT 1 OFFSET ?1)";
  Connection connection = db.acquire();
  auto stmt = connection.prepare(sql);
  if (!stmt) {
    return stmt.error();
  }
  // SQLite integers are signed; a retention beyond INT64_MAX rows keeps everything anyway.
  stmt->bind(
      1, static_cast<int64_t>(std::min<uint64_t>(max_rows, std::numeric_limits<int64_t>::max())));
  if (Status status = stmt->run(); !status) {
    return status.error();
  }
  return static_cast<size_t>(connection.changes());
}

}  // namespace tandem::store
