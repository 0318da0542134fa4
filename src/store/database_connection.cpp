// The connection's parts: prepared statements lent from the cache, exclusive use of the
// connection, and write transactions. SQLite's result codes become Errors naming the file.

#include <utility>

#include <sqlite3.h>

#include "store/database.h"

namespace tandem::store {
namespace {

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

void Statement::bind_static(int index, std::string_view text) {
  const char* data = text.data() != nullptr ? text.data() : "";
  const int rc = sqlite3_bind_text64(stmt_, index, data, text.size(), SQLITE_STATIC, SQLITE_UTF8);
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
  auto it = db_->statements_.find(sql);
  if (it == db_->statements_.end()) {
    it = db_->statements_.try_emplace(std::string(sql)).first;
  }
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

Status Connection::run_cached(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) {
    return stmt.error();
  }
  return stmt->run();
}

int64_t Connection::changes() const {
  return sqlite3_changes64(db_->db_.get());
}

int64_t Connection::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_->db_.get());
}

// ---- Transaction ----

Result<Transaction> Transaction::begin(Connection& connection) {
  if (Status status = connection.run_cached("BEGIN IMMEDIATE"); !status) {
    return status.error();
  }
  return Transaction(&connection);
}

Transaction::Transaction(Transaction&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)) {}

Transaction::~Transaction() {
  if (connection_ != nullptr) {
    (void)connection_->run_cached("ROLLBACK");
  }
}

Status Transaction::commit() {
  if (connection_ == nullptr) {
    return make_error(ErrorCode::kInternal, "transaction already finished");
  }
  Status status = connection_->run_cached("COMMIT");
  if (status) {
    connection_ = nullptr;  // a failed COMMIT leaves the transaction open for the rollback
  }
  return status;
}

}  // namespace tandem::store
