// The Database: opening, configuring and migrating real SQLite files, and refusing the ones
// that are not ours to change.

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/consistency_memory.h"
#include "store/database.h"
#include "store/review_queue.h"
#include "temp_dir.h"

namespace tandem::store {
namespace {

using testing::TempDir;

// Reads a one-value PRAGMA or query through the library's own connection.
std::string query_text(Database& db, const char* sql) {
  Connection connection = db.acquire();
  auto stmt = connection.prepare(sql);
  if (!stmt) {
    return "error: " + stmt.error().message;
  }
  auto row = stmt->step();
  if (!row || !*row) {
    return "no row";
  }
  return stmt->column_text(0);
}

// Runs SQL on a file behind the library's back, as another program (or an older/newer tandem)
// would.
void raw_exec(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  const std::string text = message != nullptr ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

NewTicket sample_ticket(const std::string& prompt) {
  NewTicket ticket;
  ticket.client = "acme";
  ticket.model = "tandem";
  ticket.request_json =
      R"({"model":"tandem","messages":[{"role":"user","content":")" + prompt + R"("}]})";
  ticket.prompt_text = prompt;
  ticket.reason = "edge and cloud disagree";
  ticket.decision_json = R"({"tier":"human"})";
  ticket.draft_answer = "maybe";
  ticket.draft_tier = "cloud";
  return ticket;
}

TEST(StoreDatabase, OpensInMemoryWithCurrentSchema) {
  auto db = Database::open(":memory:");
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ(query_text(**db, "PRAGMA user_version"), std::to_string(Database::kSchemaVersion));
  EXPECT_EQ(query_text(**db, "PRAGMA foreign_keys"), "1");
  EXPECT_EQ(query_text(**db,
                       "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN "
                       "('review_tickets', 'consistency_routes', 'traces')"),
            "3");
}

TEST(StoreDatabase, CreatesFileWithWalAndSettings) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("tandem.db");
  auto db = Database::open(path);
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ((*db)->path(), path);
  EXPECT_EQ(query_text(**db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query_text(**db, "PRAGMA synchronous"), "1");  // NORMAL
  EXPECT_EQ(query_text(**db, "PRAGMA foreign_keys"), "1");
  EXPECT_EQ(query_text(**db, "PRAGMA busy_timeout"), "5000");
  EXPECT_EQ(query_text(**db, "PRAGMA user_version"), std::to_string(Database::kSchemaVersion));
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(StoreDatabase, NothingIsLostAcrossRestarts) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("tandem.db");
  std::string pending_id, answered_id;
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db) << db.error().message;
    SqliteReviewQueue queue(*db);
    auto pending = queue.create(sample_ticket("first"), 1000);
    auto answered = queue.create(sample_ticket("second"), 2000);
    ASSERT_TRUE(pending && answered);
    pending_id = pending->id;
    answered_id = answered->id;
    ASSERT_TRUE(queue.answer(answered_id, "42", "alice", 3000));
    SqliteConsistencyMemory memory(*db);
    ASSERT_TRUE(memory.remember("acme", {7, 0xfedcba9876543210ull}, "cloud", "long", 1000, 60000));
  }  // the last reference closes the database, as a restart would
  auto db = Database::open(path);
  ASSERT_TRUE(db) << db.error().message;
  SqliteReviewQueue queue(*db);
  auto pending = queue.get(pending_id);
  ASSERT_TRUE(pending) << pending.error().message;
  EXPECT_EQ(pending->status, "pending");
  EXPECT_EQ(pending->prompt_text, "first");
  auto answered = queue.get(answered_id);
  ASSERT_TRUE(answered) << answered.error().message;
  EXPECT_EQ(answered->status, "answered");
  EXPECT_EQ(answered->answer, "42");
  EXPECT_EQ(answered->reviewer, "alice");
  EXPECT_EQ(answered->updated_at_ms, 3000);
  SqliteConsistencyMemory memory(*db);
  auto route = memory.lookup("acme", {0xfedcba9876543210ull}, 2000);
  ASSERT_TRUE(route);
  ASSERT_TRUE(route->has_value());
  EXPECT_EQ((*route)->tier, "cloud");
  EXPECT_EQ((*route)->matched_key, 0xfedcba9876543210ull);
}

// The opcodes SQLite would run for `sql`, one per row of EXPLAIN.
std::vector<std::string> opcodes(Database& db, const std::string& sql) {
  Connection connection = db.acquire();
  auto stmt = connection.prepare("EXPLAIN " + sql);
  std::vector<std::string> names;
  if (!stmt) {
    ADD_FAILURE() << stmt.error().message;
    return names;
  }
  EXPECT_TRUE(stmt->each_row([&](const Statement& row) { names.push_back(row.column_text(1)); }));
  return names;
}

// A CHECK written `x IN ('a', 'b')` makes SQLite build and drop a temporary index for every
// row inserted, a third of a trace row's cost; no table of ours may have one.
TEST(StoreDatabase, NoInsertBuildsATemporaryIndexPerRow) {
  auto db = Database::open(":memory:");
  ASSERT_TRUE(db) << db.error().message;
  std::vector<std::string> tables;
  {
    Connection connection = (*db)->acquire();
    auto stmt = connection.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    ASSERT_TRUE(stmt);
    ASSERT_TRUE(
        stmt->each_row([&](const Statement& row) { tables.push_back(row.column_text(0)); }));
  }
  ASSERT_GE(tables.size(), 7U);
  for (const std::string& table : tables) {
    const auto ops = opcodes(**db, "INSERT INTO " + table + " DEFAULT VALUES");
    ASSERT_FALSE(ops.empty()) << table;
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "OpenEphemeral"), 0) << table;
  }
}

TEST(StoreDatabase, TheChecksStillRefuseAValueOutsideTheirList) {
  auto db = Database::open(":memory:");
  ASSERT_TRUE(db) << db.error().message;
  Connection connection = (*db)->acquire();
  EXPECT_TRUE(connection.exec(
      "INSERT INTO consistency_routes (client, cluster_key, tier, reason, decided_at_ms, "
      "expires_at_ms) VALUES ('acme', 1, 'human', 'r', 0, 1)"));
  Status refused = connection.exec(
      "INSERT INTO consistency_routes (client, cluster_key, tier, reason, decided_at_ms, "
      "expires_at_ms) VALUES ('acme', 2, 'moon', 'r', 0, 1)");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("CHECK constraint failed"), std::string::npos)
      << refused.error().message;
}

// Version 6 rebuilds every table that had a CHECK on a list of strings; run again on a file
// of the same shape, it must keep each row, id and index.
TEST(StoreDatabase, TheVersion6RebuildKeepsEveryRowAndIndex) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("tandem.db");
  std::string ticket_id;
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db) << db.error().message;
    SqliteReviewQueue queue(*db);
    auto ticket = queue.create(sample_ticket("kept"), 1000);
    ASSERT_TRUE(ticket);
    ticket_id = ticket->id;
    SqliteConsistencyMemory memory(*db);
    ASSERT_TRUE(memory.remember("acme", {7}, "edge", "short", 1000, 60000));
  }
  raw_exec(path, "PRAGMA user_version = 5");
  auto db = Database::open(path);
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ(query_text(**db, "PRAGMA user_version"), std::to_string(Database::kSchemaVersion));
  SqliteReviewQueue queue(*db);
  auto ticket = queue.get(ticket_id);
  ASSERT_TRUE(ticket) << ticket.error().message;
  EXPECT_EQ(ticket->prompt_text, "kept");
  SqliteConsistencyMemory memory(*db);
  auto route = memory.lookup("acme", {7}, 2000);
  ASSERT_TRUE(route && route->has_value());
  EXPECT_EQ((*route)->tier, "edge");
  EXPECT_EQ(query_text(**db,
                       "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN "
                       "('review_tickets_by_time', 'review_tickets_by_status_time', "
                       "'consistency_routes_by_expiry', 'traces_by_time', 'traces_by_ticket', "
                       "'shadow_samples_by_time', 'cloud_audit_by_time')"),
            "7");
  EXPECT_EQ(query_text(**db, "SELECT count(*) FROM sqlite_schema WHERE name LIKE '%_v6'"), "0");
}

TEST(StoreDatabase, RefusesNewerSchemaWithoutAlteringIt) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("tandem.db");
  ASSERT_TRUE(Database::open(path));
  const std::string newer = std::to_string(Database::kSchemaVersion + 1);
  raw_exec(path, ("PRAGMA user_version = " + newer).c_str());
  auto db = Database::open(path);
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(db.error().message, "database " + path + ": database schema version " + newer +
                                    " is newer than this tandem supports (" +
                                    std::to_string(Database::kSchemaVersion) + ")");
  raw_exec(path, "SELECT 1");  // still a valid database
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), Database::kSchemaVersion + 1);
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
}

TEST(StoreDatabase, RefusesFileThatIsNotADatabase) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("notes.txt");
  const std::string content(4096, 'x');
  std::ofstream(path, std::ios::binary) << content;
  auto db = Database::open(path);
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(db.error().message.find(path), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find("not a database"), std::string::npos) << db.error().message;
  EXPECT_EQ(read_file(path), content);  // left untouched
}

TEST(StoreDatabase, RefusesDirectory) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto db = Database::open(dir.path());
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find(dir.path()), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find("directory"), std::string::npos) << db.error().message;
}

TEST(StoreDatabase, RefusesPathInMissingDirectory) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("no/such/dir/tandem.db");
  auto db = Database::open(path);
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, ErrorCode::kNotFound);
  EXPECT_NE(db.error().message.find(path), std::string::npos) << db.error().message;
}

TEST(StoreDatabase, RefusesReadOnlyFile) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root writes through file permissions";
  }
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("tandem.db");
  ASSERT_TRUE(Database::open(path));
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  auto db = Database::open(path);
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find(path), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find("read-only"), std::string::npos) << db.error().message;
}

TEST(StoreDatabase, RefusesAnotherProgramsDatabase) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("other.db");
  raw_exec(path, "CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)");
  auto db = Database::open(path);
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find(path), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find("accounts"), std::string::npos) << db.error().message;

  const std::string tagged = dir.file("tagged.db");
  raw_exec(tagged, "PRAGMA application_id = 1234");
  auto other = Database::open(tagged);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("another application"), std::string::npos)
      << other.error().message;
}

TEST(StoreDatabase, RefusesEmptyPath) {
  auto db = Database::open("");
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, ErrorCode::kInvalidArgument);
}

TEST(StoreDatabase, TwoHandlesOnOneFileSeeEachOthersWrites) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("tandem.db");
  auto gateway = Database::open(path);
  auto cli = Database::open(path);
  ASSERT_TRUE(gateway && cli);
  SqliteReviewQueue gateway_queue(*gateway);
  SqliteReviewQueue cli_queue(*cli);
  auto ticket = gateway_queue.create(sample_ticket("hello"), 1000);
  ASSERT_TRUE(ticket);
  ASSERT_TRUE(cli_queue.answer(ticket->id, "hi", "bob", 2000));
  auto seen = gateway_queue.get(ticket->id);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->status, "answered");
}

TEST(StoreStatement, CachedStatementIsLentToOneCallerAtATime) {
  auto db = Database::open(":memory:");
  ASSERT_TRUE(db);
  Connection connection = (*db)->acquire();
  {
    auto first = connection.prepare("SELECT 1");
    ASSERT_TRUE(first);
    auto second = connection.prepare("SELECT 1");
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, ErrorCode::kInternal);
  }
  auto again = connection.prepare("SELECT 1");
  ASSERT_TRUE(again) << again.error().message;
  auto row = again->step();
  ASSERT_TRUE(row && *row);
  EXPECT_EQ(again->column_int64(0), 1);
}

TEST(StoreStatement, RefusesMultipleStatementsAndBadSql) {
  auto db = Database::open(":memory:");
  ASSERT_TRUE(db);
  Connection connection = (*db)->acquire();
  EXPECT_FALSE(connection.prepare("SELECT 1; DROP TABLE review_tickets"));
  auto bad = connection.prepare("SELEKT 1");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("syntax error"), std::string::npos) << bad.error().message;
  EXPECT_TRUE(connection.prepare("SELECT 1;"));
}

TEST(StoreTransaction, RollsBackUnlessCommitted) {
  auto db = Database::open(":memory:");
  ASSERT_TRUE(db);
  {
    Connection connection = (*db)->acquire();
    auto transaction = Transaction::begin(connection);
    ASSERT_TRUE(transaction);
    ASSERT_TRUE(connection.exec(
        "INSERT INTO consistency_routes (client, cluster_key, tier, reason, decided_at_ms, "
        "expires_at_ms) VALUES ('c', 1, 'edge', '', 0, 10)"));
  }  // dropped without commit()
  EXPECT_EQ(query_text(**db, "SELECT count(*) FROM consistency_routes"), "0");
  {
    Connection connection = (*db)->acquire();
    auto transaction = Transaction::begin(connection);
    ASSERT_TRUE(transaction);
    ASSERT_TRUE(connection.exec(
        "INSERT INTO consistency_routes (client, cluster_key, tier, reason, decided_at_ms, "
        "expires_at_ms) VALUES ('c', 1, 'edge', '', 0, 10)"));
    ASSERT_TRUE(transaction->commit());
  }
  EXPECT_EQ(query_text(**db, "SELECT count(*) FROM consistency_routes"), "1");
}

}  // namespace
}  // namespace tandem::store
