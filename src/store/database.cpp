#include "store/database.h"

#include <array>
#include <filesystem>
#include <utility>

#include <sqlite3.h>

#include "common/log.h"

namespace tandem::store {
namespace {

// Long enough to ride out another process's write transaction (they last milliseconds),
// short enough that a stuck lock surfaces as an error instead of a hung request.
constexpr int kBusyTimeoutMs = 5000;

// PRAGMA application_id of a Tandem database ("TDM1"), so that a file belonging to another
// program is recognised and left alone.
constexpr int kApplicationId = 0x54444d31;

// Migrations, in order: kMigrations[v] takes a database from user_version v to v + 1. Each runs
// in the same transaction as the user_version bump, so a crash leaves the old version intact.
constexpr std::array<const char*, Database::kSchemaVersion> kMigrations = {
    // 0 -> 1: the review queue and the routing memory.
    R"sql(
CREATE TABLE review_tickets (
  -- seq orders tickets created in the same millisecond; ids are random and cannot.
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'rejected')),
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  client TEXT NOT NULL,
  model TEXT NOT NULL,
  request_json TEXT NOT NULL,
  prompt_text TEXT NOT NULL,
  reason TEXT NOT NULL,
  decision_json TEXT NOT NULL,
  draft_answer TEXT NOT NULL,
  draft_tier TEXT NOT NULL CHECK (draft_tier IN ('edge', 'cloud', '')),
  answer TEXT NOT NULL DEFAULT '',
  reviewer TEXT NOT NULL DEFAULT ''
);
CREATE INDEX review_tickets_by_time ON review_tickets (created_at_ms);
CREATE INDEX review_tickets_by_status_time ON review_tickets (status, created_at_ms);

CREATE TABLE consistency_routes (
  client TEXT NOT NULL,
  cluster_key INTEGER NOT NULL,  -- the uint64 key bit-cast to int64
  tier TEXT NOT NULL CHECK (tier IN ('edge', 'cloud', 'human')),
  reason TEXT NOT NULL,
  decided_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (client, cluster_key)
) WITHOUT ROWID;
CREATE INDEX consistency_routes_by_expiry ON consistency_routes (expires_at_ms);
)sql",
    // 1 -> 2: one row per routed request (store/trace_log.h); never prompt or answer text.
    R"sql(
CREATE TABLE traces (
  id INTEGER PRIMARY KEY,  -- increasing: retention deletes the lowest first
  unix_ms INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  client TEXT NOT NULL,
  model TEXT NOT NULL,
  pattern TEXT NOT NULL,
  tier TEXT NOT NULL CHECK (tier IN ('edge', 'cloud', 'human', 'none')),
  kind TEXT NOT NULL,
  reason_codes TEXT NOT NULL,       -- JSON array of strings
  privacy_detectors TEXT NOT NULL,  -- JSON array of strings
  review_rules TEXT NOT NULL,       -- JSON array of strings
  privacy_header INTEGER NOT NULL,
  key_local_only INTEGER NOT NULL,
  review_header INTEGER NOT NULL,
  latency_budget_ms INTEGER,        -- NULL: none
  requested_pattern TEXT NOT NULL,
  cloud_only_fields TEXT NOT NULL,  -- JSON array of strings
  features TEXT NOT NULL,           -- comma-separated floats, shortest round-trip form
  complexity REAL NOT NULL,
  confidence_tokens INTEGER,        -- NULL: no edge confidence (nor the columns below)
  confidence_mean_logprob REAL,
  confidence_min_logprob REAL,
  confidence_mean_entropy REAL,
  confidence_mean_margin REAL,
  confidence_combined REAL,
  confidence_threshold REAL,
  escalated INTEGER NOT NULL,
  cost_edge REAL NOT NULL,
  cost_cloud REAL NOT NULL,
  cost_all_cloud REAL,              -- NULL: no cloud prices known
  prompt_tokens INTEGER NOT NULL,
  edge_tokens INTEGER NOT NULL,
  cloud_tokens INTEGER NOT NULL,
  latency_ms REAL NOT NULL,
  data_left_device INTEGER NOT NULL,
  edge_model TEXT NOT NULL,
  cloud_model TEXT NOT NULL,
  ticket TEXT NOT NULL,
  edge_answer_hash TEXT NOT NULL,
  edge_good INTEGER CHECK (edge_good IN (0, 1)),  -- NULL: unlabelled
  label_source TEXT NOT NULL DEFAULT ''
);
CREATE INDEX traces_by_time ON traces (unix_ms);
CREATE INDEX traces_by_ticket ON traces (ticket) WHERE ticket != '';
)sql",
    // 2 -> 3: shadow mode's samples and traffic counts (store/shadow_log.h); no text.
    R"sql(
CREATE TABLE shadow_samples (
  seq INTEGER PRIMARY KEY,  -- increasing: the bound on rows deletes the lowest first
  unix_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('compared', 'edge_busy', 'edge_failed')),
  agreed INTEGER NOT NULL CHECK (agreed IN (0, 1)),
  f1 REAL NOT NULL,
  edge_tokens INTEGER NOT NULL,
  edge_confidence REAL NOT NULL,
  mean_logprob REAL NOT NULL,
  min_logprob REAL NOT NULL,
  mean_entropy REAL NOT NULL,
  mean_margin REAL NOT NULL,
  edge_ms REAL NOT NULL,
  cloud_ms REAL NOT NULL
);
CREATE INDEX shadow_samples_by_time ON shadow_samples (unix_ms);

CREATE TABLE shadow_traffic (
  kind TEXT NOT NULL,
  hour_ms INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  shadowed INTEGER NOT NULL,
  PRIMARY KEY (kind, hour_ms)
) WITHOUT ROWID;
)sql",
    // 3 -> 4: the audit of what was sent to which cloud (store/audit_log.h), and the model
    // identities and time to first token on every trace.
    R"sql(
CREATE TABLE cloud_audit (
  id INTEGER PRIMARY KEY,
  unix_ms INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  client TEXT NOT NULL,
  upstream TEXT NOT NULL,
  model TEXT NOT NULL,
  purpose TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  content_mode TEXT NOT NULL CHECK (content_mode IN ('none', 'redacted', 'full')),
  content TEXT NOT NULL,
  redactions INTEGER NOT NULL,
  redacted_detectors TEXT NOT NULL
);
CREATE INDEX cloud_audit_by_time ON cloud_audit (unix_ms);
ALTER TABLE traces ADD COLUMN edge_sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE traces ADD COLUMN cloud_upstream TEXT NOT NULL DEFAULT '';
ALTER TABLE traces ADD COLUMN ttft_ms REAL NOT NULL DEFAULT 0;
)sql",
    // 4 -> 5: responses of POST /v1/responses, kept for previous_response_id.
    R"sql(
CREATE TABLE stored_responses (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  expires_ms INTEGER NOT NULL,
  response TEXT NOT NULL,     -- the Response object, JSON
  conversation TEXT NOT NULL  -- the chat messages the next turn continues, JSON
);
CREATE INDEX stored_responses_by_expiry ON stored_responses (expires_ms);
)sql",
};

ErrorCode code_for(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? ErrorCode::kBusy
                                                            : ErrorCode::kInternal;
}

Error sqlite_error(sqlite3* db, int rc, std::string_view what) {
  const char* file = sqlite3_db_filename(db, "main");
  std::string where = file != nullptr && *file != '\0' ? file : ":memory:";
  return make_error(code_for(rc),
                    std::string(what) + " on database " + where + ": " + sqlite3_errmsg(db));
}

}  // namespace

void SqliteCloser::operator()(sqlite3* db) const {
  sqlite3_close_v2(db);
}
void StatementFinalizer::operator()(sqlite3_stmt* stmt) const {
  sqlite3_finalize(stmt);
}

// ---- Statement ----

Statement::Statement(sqlite3_stmt* stmt, sqlite3* db, bool* in_use)
    : stmt_(stmt), db_(db), in_use_(in_use) {}

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)),
      db_(other.db_),
      in_use_(std::exchange(other.in_use_, nullptr)),
      bind_error_(other.bind_error_) {}

Statement::~Statement() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  if (in_use_ != nullptr) {
    *in_use_ = false;
  }
}

void Statement::bind(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) {
    bind_error_ = rc;
  }
}

void Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) {
    bind_error_ = rc;
  }
}

void Statement::bind_null(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) {
    bind_error_ = rc;
  }
}

void Statement::bind(int index, std::string_view text) {
  // An empty view may have a null data(), which SQLite would store as NULL, not ''.
  const char* data = text.data() != nullptr ? text.data() : "";
  // SQLITE_TRANSIENT copies: callers may bind temporaries that die before step().
  const int rc =
      sqlite3_bind_text64(stmt_, index, data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) {
    bind_error_ = rc;
  }
}

Result<bool> Statement::step() {
  if (bind_error_ != SQLITE_OK) {
    return make_error(ErrorCode::kInternal, std::string("cannot bind a statement parameter: ") +
                                                sqlite3_errstr(bind_error_));
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  return sqlite_error(db_, rc, "query failed");
}

Status Statement::run() {
  return each_row([](const Statement&) {});
}

Result<int64_t> Connection::query_int64(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) {
    return stmt.error();
  }
  auto row = stmt->step();
  if (!row) {
    return row.error();
  }
  if (!*row) {
    return make_error(ErrorCode::kInternal, "the query returned no row: " + std::string(sql));
  }
  return stmt->column_int64(0);
}

Status Statement::each_row(const std::function<void(const Statement&)>& visit) {
  for (;;) {
    auto row = step();
    if (!row) {
      return row.error();
    }
    if (!*row) {
      return {};
    }
    visit(*this);
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
}

int64_t Statement::column_int64(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

double Statement::column_double(int index) const {
  return sqlite3_column_double(stmt_, index);
}

bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::string Statement::column_text(int index) const {
  // column_text before column_bytes, as SQLite documents, so the length is of the UTF-8 form.
  const auto* text = sqlite3_column_text(stmt_, index);
  const int bytes = sqlite3_column_bytes(stmt_, index);
  if (text == nullptr) {
    return {};
  }
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes));
}

// ---- Connection ----

Connection::Connection(Database* db) : lock_(db->mutex_), db_(db) {}

Result<Statement> Connection::prepare(std::string_view sql) {
  sqlite3* db = db_->db_.get();
  auto [it, inserted] = db_->statements_.try_emplace(std::string(sql));
  Database::CachedStatement& cached = it->second;
  if (!cached.stmt) {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &raw, &tail);
    StatementPtr stmt(raw);
    if (rc != SQLITE_OK || !stmt) {
      db_->statements_.erase(it);
      return rc != SQLITE_OK
                 ? sqlite_error(db, rc, "cannot prepare statement")
                 : make_error(ErrorCode::kInternal, "cannot prepare an empty statement");
    }
    // Anything after the first statement would be silently ignored; refuse it instead.
    if (tail != nullptr &&
        std::string_view(tail).find_first_not_of(" \t\r\n;") != std::string_view::npos) {
      db_->statements_.erase(it);
      return make_error(ErrorCode::kInternal, "prepare() takes one SQL statement");
    }
    cached.stmt = std::move(stmt);
  }
  if (cached.in_use) {
    return make_error(ErrorCode::kInternal,
                      "statement is already in use by this connection: " + std::string(sql));
  }
  cached.in_use = true;
  return Statement(cached.stmt.get(), db, &cached.in_use);
}

Status Connection::exec(const char* sql) {
  sqlite3* db = db_->db_.get();
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) {
    return {};
  }
  std::string text = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  Error error = sqlite_error(db, rc, "statement failed");
  error.message += " (" + text + ")";
  return error;
}

int64_t Connection::changes() const {
  return sqlite3_changes64(db_->db_.get());
}

int64_t Connection::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_->db_.get());
}

// ---- Transaction ----

Result<Transaction> Transaction::begin(Connection& connection) {
  if (Status status = connection.exec("BEGIN IMMEDIATE"); !status) {
    return status.error();
  }
  return Transaction(&connection);
}

Transaction::Transaction(Transaction&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)) {}

Transaction::~Transaction() {
  if (connection_ != nullptr) {
    (void)connection_->exec("ROLLBACK");
  }
}

Status Transaction::commit() {
  if (connection_ == nullptr) {
    return make_error(ErrorCode::kInternal, "transaction already finished");
  }
  Status status = connection_->exec("COMMIT");
  if (status) {
    connection_ = nullptr;  // a failed COMMIT leaves the transaction open for the rollback
  }
  return status;
}

// ---- Database ----

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

namespace {

Result<int64_t> read_pragma(Connection& connection, const char* sql) {
  auto stmt = connection.prepare(sql);
  if (!stmt) {
    return stmt.error();
  }
  auto row = stmt->step();
  if (!row) {
    return row.error();
  }
  return *row ? stmt->column_int64(0) : 0;
}

}  // namespace

Status Database::migrate() {
  Connection connection = acquire();
  auto version = read_pragma(connection, "PRAGMA user_version");
  if (!version) {
    return version.error();
  }
  if (*version > kSchemaVersion) {
    return make_error(ErrorCode::kInvalidArgument,
                      "database " + path_ + ": database schema version " +
                          std::to_string(*version) + " is newer than this tandem supports (" +
                          std::to_string(kSchemaVersion) + ")");
  }
  auto application = read_pragma(connection, "PRAGMA application_id");
  if (!application) {
    return application.error();
  }
  if (*application != 0 && *application != kApplicationId) {
    return make_error(ErrorCode::kInvalidArgument,
                      "database " + path_ + " belongs to another application (application_id " +
                          std::to_string(*application) + "); refusing to alter it");
  }
  if (*version == kSchemaVersion) {
    return {};
  }

  auto transaction = Transaction::begin(connection);
  if (!transaction) {
    return transaction.error();
  }
  // Another process may have migrated between the read above and taking the write lock.
  version = read_pragma(connection, "PRAGMA user_version");
  if (!version) {
    return version.error();
  }
  if (*version == 0) {
    // A version-0 file with tables is some other program's database, not an empty one.
    auto tables = connection.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "LIMIT 1");
    if (!tables) {
      return tables.error();
    }
    auto row = tables->step();
    if (!row) {
      return row.error();
    }
    if (*row) {
      return make_error(ErrorCode::kInvalidArgument,
                        "database " + path_ + " already has tables (e.g. '" +
                            tables->column_text(0) +
                            "') but no tandem schema; refusing to alter it");
    }
  }
  const int64_t from_version = *version;
  for (int64_t v = from_version; v < kSchemaVersion; ++v) {
    if (Status status = connection.exec(kMigrations[static_cast<size_t>(v)]); !status) {
      return make_error(status.error().code, "cannot migrate database " + path_ + " to version " +
                                                 std::to_string(v + 1) + ": " +
                                                 status.error().message);
    }
  }
  // PRAGMA takes no parameters; these are our own constants, not values from outside.
  const std::string set_version = "PRAGMA user_version = " + std::to_string(kSchemaVersion);
  const std::string set_application = "PRAGMA application_id = " + std::to_string(kApplicationId);
  if (Status status = connection.exec(set_version.c_str()); !status) {
    return status;
  }
  if (Status status = connection.exec(set_application.c_str()); !status) {
    return status;
  }
  if (Status status = transaction->commit(); !status) {
    return status;
  }
  // Test databases in memory are created by the hundred; only a real file's migration is news.
  log_event(path_ == ":memory:" ? LogLevel::kDebug : LogLevel::kInfo, "store", "schema_migrated",
            {{"path", path_},
             {"from_version", std::to_string(from_version)},
             {"version", std::to_string(kSchemaVersion)}});
  return {};
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
