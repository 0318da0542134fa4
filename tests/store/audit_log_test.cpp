// The cloud audit: ids, newest-first reads and their filters, every field round-tripping,
// validation naming the field, retention, the schema 3 -> 4 migration (cloud_audit, and the
// new trace columns), and the background writer's audit rows.

#include "store/audit_log.h"

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "common/answer_match.h"
#include "store/trace_log.h"
#include "store/trace_writer.h"
#include "temp_dir.h"

namespace tandem::store {
namespace {

using testing::TempDir;
using Ids = std::vector<std::string>;

// A record with every field set to something other than its default.
AuditRecord full_audit() {
  AuditRecord r;
  r.unix_ms = 1764478201123;
  r.request_id = "chatcmpl-abc123";
  r.client = "acme";
  r.upstream = "openai";
  r.model = "gpt-4o-mini";
  r.purpose = "verify";
  r.bytes = 1234;
  r.sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  r.content_mode = "redacted";
  r.content =
      "{\"messages\":[{\"role\":\"user\",\"content\":\"mail [EMAIL] about card [PAYMENT_CARD] "
      "\\u00e9\\n\"}]}";
  r.redactions = 3;
  r.redacted_detectors = {"email", "payment_card", "pattern:employee_id"};
  return r;
}

AuditRecord simple_audit(int64_t unix_ms, const std::string& request_id,
                         const std::string& upstream = "openai") {
  AuditRecord r;
  r.unix_ms = unix_ms;
  r.request_id = request_id;
  r.upstream = upstream;
  r.model = "gpt-4o-mini";
  r.purpose = "answer";
  r.bytes = 10;
  r.sha256 = "00";
  r.content_mode = "none";
  return r;
}

TraceRecord simple_trace(int64_t unix_ms, const std::string& request_id) {
  TraceRecord r;
  r.unix_ms = unix_ms;
  r.request_id = request_id;
  r.model = "tandem";
  r.pattern = "cascade";
  r.tier = "cloud";
  r.kind = "open";
  r.reason_codes = {"pattern.cascade"};
  r.features.assign(29, 0.25F);
  return r;
}

// An AuditQuery built field by field (designated initializers would leave `upstream` out).
struct Query {
  AuditQuery q;
  Query& since(int64_t ms) {
    q.since_ms = ms;
    return *this;
  }
  Query& until(int64_t ms) {
    q.until_ms = ms;
    return *this;
  }
  Query& upstream(std::string name) {
    q.upstream = std::move(name);
    return *this;
  }
  Query& limit(size_t n) {
    q.limit = n;
    return *this;
  }
  operator AuditQuery() const { return q; }  // NOLINT(google-explicit-constructor)
};

void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  const std::string text = message != nullptr ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << text;
}

std::string raw_query_text(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return "<cannot open>";
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    out = text != nullptr ? reinterpret_cast<const char*>(text) : "<null>";
  } else {
    out = std::string("<error: ") + sqlite3_errmsg(db) + ">";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    path_ = dir_.file("tandem.db");
    auto db = Database::open(path_);
    ASSERT_TRUE(db) << db.error().message;
    db_ = *db;
    audit_ = std::make_shared<AuditLog>(db_);
    traces_ = std::make_shared<TraceLog>(db_);
  }

  int64_t append(const AuditRecord& record) {
    auto id = audit_->append(record);
    EXPECT_TRUE(id) << id.error().message;
    return id ? *id : -1;
  }

  Ids request_ids(const AuditQuery& query) {
    auto rows = audit_->read(query);
    EXPECT_TRUE(rows) << rows.error().message;
    Ids out;
    if (rows) {
      for (const auto& r : *rows) {
        out.push_back(r.request_id);
      }
    }
    return out;
  }

  size_t count() {
    auto n = audit_->count();
    EXPECT_TRUE(n) << n.error().message;
    return n ? *n : 0;
  }

  TempDir dir_;
  std::string path_;
  std::shared_ptr<Database> db_;
  std::shared_ptr<AuditLog> audit_;
  std::shared_ptr<TraceLog> traces_;
};

TEST_F(AuditLogTest, AppendReturnsIncreasingIds) {
  int64_t last = 0;
  for (int i = 0; i < 5; ++i) {
    const int64_t id = append(simple_audit(1000 + i, "r" + std::to_string(i)));
    EXPECT_GT(id, last) << "row " << i;
    last = id;
  }
  // Ids follow insertion, not time: an older timestamp appended later still gets a higher id.
  EXPECT_GT(append(simple_audit(1, "late-but-old")), last);
  EXPECT_EQ(count(), 6U);
}

TEST_F(AuditLogTest, EveryFieldRoundTripsThroughTheFile) {
  AuditRecord redacted = full_audit();
  AuditRecord none = simple_audit(1764478202000, "chatcmpl-none", "anthropic");
  none.client = "";
  none.purpose = "canary";
  none.request_id = "";  // canary queries carry no response id
  none.content_mode = "none";
  none.content = "";
  none.redactions = 0;
  none.redacted_detectors = {};
  AuditRecord full = simple_audit(1764478203000, "chatcmpl-full");
  full.purpose = "continue";
  full.content_mode = "full";
  full.content = "{\"prompt\":\"quotes \\\" and 'single', a tab\t and \xe2\x82\xac\"}";
  full.redacted_detectors = {"email"};  // one detector, a single-element list

  redacted.id = append(redacted);
  none.id = append(none);
  full.id = append(full);

  // A new Database on the same file: nothing comes from a cache.
  db_.reset();
  audit_.reset();
  traces_.reset();
  auto reopened = Database::open(path_);
  ASSERT_TRUE(reopened) << reopened.error().message;
  AuditLog log(*reopened);
  auto rows = log.read({});
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 3U);
  EXPECT_EQ((*rows)[0], full);
  EXPECT_EQ((*rows)[1], none);
  EXPECT_EQ((*rows)[2], redacted);
  EXPECT_TRUE((*rows)[1].content.empty());
  EXPECT_TRUE((*rows)[1].redacted_detectors.empty());
  EXPECT_EQ((*rows)[2].redacted_detectors,
            (std::vector<std::string>{"email", "payment_card", "pattern:employee_id"}));
}

TEST_F(AuditLogTest, EveryPurposeAndContentModeIsAccepted) {
  for (const char* purpose : {"answer", "verify", "continue", "shadow", "canary", "embeddings"}) {
    AuditRecord r = simple_audit(1, purpose);
    r.purpose = purpose;
    EXPECT_TRUE(audit_->append(r)) << purpose;
  }
  for (const char* mode : {"none", "redacted", "full"}) {
    AuditRecord r = simple_audit(2, mode);
    r.content_mode = mode;
    EXPECT_TRUE(audit_->append(r)) << mode;
  }
  EXPECT_EQ(count(), 9U);
}

TEST_F(AuditLogTest, ReadIsNewestFirstWithTimeUpstreamFiltersAndLimit) {
  // r0..r5 at 1000..6000 ms, alternating upstreams.
  for (int i = 0; i < 6; ++i) {
    append(simple_audit(1000 * (i + 1), "r" + std::to_string(i), i % 2 == 0 ? "openai" : "local"));
  }
  EXPECT_EQ(request_ids({}), (Ids{"r5", "r4", "r3", "r2", "r1", "r0"}));
  EXPECT_EQ(request_ids(Query().limit(2)), (Ids{"r5", "r4"}));
  EXPECT_EQ(request_ids(Query().limit(1)), (Ids{"r5"}));
  // since is inclusive, until exclusive.
  EXPECT_EQ(request_ids(Query().since(2000)), (Ids{"r5", "r4", "r3", "r2", "r1"}));
  EXPECT_EQ(request_ids(Query().until(3000)), (Ids{"r1", "r0"}));
  EXPECT_EQ(request_ids(Query().since(2000).until(5000)), (Ids{"r3", "r2", "r1"}));
  EXPECT_EQ(request_ids(Query().upstream("openai")), (Ids{"r4", "r2", "r0"}));
  EXPECT_EQ(request_ids(Query().upstream("local")), (Ids{"r5", "r3", "r1"}));
  EXPECT_EQ(request_ids(Query().since(2000).until(6000).upstream("local").limit(1)), (Ids{"r3"}));
  EXPECT_TRUE(request_ids(Query().upstream("nobody")).empty());
  EXPECT_TRUE(request_ids(Query().since(7000)).empty());
  EXPECT_TRUE(request_ids(Query().since(3000).until(3000)).empty());
  // The most a read may ask for is accepted.
  EXPECT_EQ(request_ids(Query().limit(10000)).size(), 6U);
}

TEST_F(AuditLogTest, ReadOrdersByInsertionNotByTimestamp) {
  append(simple_audit(5000, "first"));
  append(simple_audit(1000, "second"));
  EXPECT_EQ(request_ids({}), (Ids{"second", "first"}));
}

TEST_F(AuditLogTest, ALimitOutsideOneToTenThousandIsRefusedNamingTheLimit) {
  append(simple_audit(1, "r"));
  for (size_t limit : {size_t{0}, size_t{10001}}) {
    auto rows = audit_->read(Query().limit(limit));
    ASSERT_FALSE(rows) << "limit " << limit;
    EXPECT_EQ(rows.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(rows.error().message.find("limit"), std::string::npos) << rows.error().message;
  }
}

TEST_F(AuditLogTest, InvalidRecordsAreRefusedNamingTheField) {
  AuditRecord bad_purpose = simple_audit(1, "p");
  bad_purpose.purpose = "exfiltrate";
  auto p = audit_->append(bad_purpose);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(p.error().message.find("purpose"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("exfiltrate"), std::string::npos) << p.error().message;

  AuditRecord empty_purpose = simple_audit(1, "e");
  empty_purpose.purpose = "";
  EXPECT_FALSE(audit_->append(empty_purpose));

  AuditRecord bad_mode = simple_audit(1, "m");
  bad_mode.content_mode = "partial";
  auto m = audit_->append(bad_mode);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(m.error().message.find("content_mode"), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("partial"), std::string::npos) << m.error().message;

  AuditRecord huge = simple_audit(1, "h");
  huge.content_mode = "full";
  huge.content.assign(kMaxAuditContentBytes + 1, 'x');
  auto h = audit_->append(huge);
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(h.error().message.find("content"), std::string::npos) << h.error().message;
  EXPECT_NE(h.error().message.find(std::to_string(kMaxAuditContentBytes)), std::string::npos)
      << h.error().message;

  EXPECT_EQ(count(), 0U);  // nothing refused was stored

  // Exactly the limit is still accepted.
  AuditRecord at_limit = simple_audit(1, "at-limit");
  at_limit.content_mode = "full";
  at_limit.content.assign(kMaxAuditContentBytes, 'y');
  auto ok = audit_->append(at_limit);
  ASSERT_TRUE(ok) << ok.error().message;
  auto rows = audit_->read({});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1U);
  EXPECT_EQ((*rows)[0].content.size(), kMaxAuditContentBytes);
}

TEST_F(AuditLogTest, PruneKeepsTheNewestRowsAndSaysHowManyWent) {
  for (int i = 0; i < 10; ++i) {
    append(simple_audit(i, "r" + std::to_string(i)));
  }
  EXPECT_EQ(count(), 10U);
  auto none = audit_->prune(10);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(*none, 0U);
  auto more_than_there = audit_->prune(1000);
  ASSERT_TRUE(more_than_there);
  EXPECT_EQ(*more_than_there, 0U);
  auto huge = audit_->prune(UINT64_MAX);  // beyond int64: clamped, not an error
  ASSERT_TRUE(huge) << huge.error().message;
  EXPECT_EQ(*huge, 0U);

  auto deleted = audit_->prune(3);
  ASSERT_TRUE(deleted) << deleted.error().message;
  EXPECT_EQ(*deleted, 7U);
  EXPECT_EQ(count(), 3U);
  EXPECT_EQ(request_ids({}), (Ids{"r9", "r8", "r7"}));

  // New rows keep counting up after a prune.
  EXPECT_GT(append(simple_audit(99, "r10")), 10);
  auto all = audit_->prune(0);
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, 4U);
  EXPECT_EQ(count(), 0U);
  auto empty = audit_->prune(0);  // nothing left to delete
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, 0U);
}

TEST_F(AuditLogTest, PruneNeverTouchesTraces) {
  ASSERT_TRUE(traces_->append(simple_trace(1, "t1")));
  append(simple_audit(1, "a1"));
  auto deleted = audit_->prune(0);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(*deleted, 1U);
  auto traces = traces_->count();
  ASSERT_TRUE(traces);
  EXPECT_EQ(*traces, 1U);
}

TEST_F(AuditLogTest, TracesKeepTheirModelIdentitiesAndTimeToFirstToken) {
  TraceRecord r = simple_trace(1764478201123, "chatcmpl-v4");
  r.edge_model = "stories260K";
  r.edge_sha256 = "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d";
  r.cloud_model = "gpt-4o-mini";
  r.cloud_upstream = "openai";
  r.ttft_ms = 123.456789;
  r.data_left_device = true;
  auto id = traces_->append(r);
  ASSERT_TRUE(id) << id.error().message;
  r.id = *id;
  auto rows = traces_->read({});
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1U);
  EXPECT_EQ((*rows)[0], r);
  EXPECT_EQ((*rows)[0].edge_sha256, r.edge_sha256);
  EXPECT_EQ((*rows)[0].cloud_upstream, "openai");
  EXPECT_DOUBLE_EQ((*rows)[0].ttft_ms, 123.456789);
}

// ---- Schema 3 -> 4 --------------------------------------------------------------------------

TEST(AuditDatabase, ASchemaVersion3FileIsMigratedKeepingItsTraces) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("v3.db");
  TraceRecord old = simple_trace(1700000000000, "chatcmpl-old");
  old.edge_model = "stories260K";
  old.cloud_model = "gpt-4o-mini";
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db) << db.error().message;
    auto id = TraceLog(*db).append(old);
    ASSERT_TRUE(id) << id.error().message;
    old.id = *id;
  }
  // Take the file back to what a schema-3 tandem wrote: no cloud_audit, no new trace columns,
  // no stored responses.
  raw_exec(path,
           "DROP TABLE stored_responses; "
           "DROP TABLE cloud_audit; "
           "ALTER TABLE traces DROP COLUMN edge_sha256; "
           "ALTER TABLE traces DROP COLUMN cloud_upstream; "
           "ALTER TABLE traces DROP COLUMN ttft_ms; "
           "PRAGMA user_version = 3");
  ASSERT_EQ(raw_query_text(path, "PRAGMA user_version"), "3");
  ASSERT_EQ(raw_query_text(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'cloud_audit'"),
            "0");

  {
    auto db = Database::open(path);
    ASSERT_TRUE(db) << db.error().message;
    // The old row reads back unchanged, the new columns at their defaults.
    TraceLog traces(*db);
    auto rows = traces.read({});
    ASSERT_TRUE(rows) << rows.error().message;
    ASSERT_EQ(rows->size(), 1U);
    EXPECT_EQ((*rows)[0], old);
    EXPECT_EQ((*rows)[0].edge_sha256, "");
    EXPECT_EQ((*rows)[0].cloud_upstream, "");
    EXPECT_EQ((*rows)[0].ttft_ms, 0.0);

    // New rows use the new columns.
    TraceRecord fresh = simple_trace(1700000001000, "chatcmpl-new");
    fresh.edge_sha256 = "abc";
    fresh.cloud_upstream = "openai";
    fresh.ttft_ms = 42.5;
    auto id = traces.append(fresh);
    ASSERT_TRUE(id) << id.error().message;
    fresh.id = *id;
    auto newest = traces.read({.limit = 1, .newest_first = true});
    ASSERT_TRUE(newest);
    ASSERT_EQ(newest->size(), 1U);
    EXPECT_EQ((*newest)[0], fresh);

    // The audit table exists and works.
    AuditLog audit(*db);
    auto empty = audit.count();
    ASSERT_TRUE(empty) << empty.error().message;
    EXPECT_EQ(*empty, 0U);
    AuditRecord a = full_audit();
    auto audit_id = audit.append(a);
    ASSERT_TRUE(audit_id) << audit_id.error().message;
    a.id = *audit_id;
    auto audited = audit.read({});
    ASSERT_TRUE(audited);
    ASSERT_EQ(audited->size(), 1U);
    EXPECT_EQ((*audited)[0], a);
  }
  EXPECT_EQ(raw_query_text(path, "PRAGMA user_version"), std::to_string(Database::kSchemaVersion));
  EXPECT_EQ(raw_query_text(path,
                           "SELECT count(*) FROM pragma_table_info('traces') WHERE name IN "
                           "('edge_sha256', 'cloud_upstream', 'ttft_ms')"),
            "3");
}

TEST(AuditDatabase, AFreshFileHasTheAuditTableAtTheCurrentVersion) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("fresh.db");
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db) << db.error().message;
  }
  EXPECT_EQ(raw_query_text(path, "PRAGMA user_version"), std::to_string(Database::kSchemaVersion));
  EXPECT_EQ(raw_query_text(path,
                           "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                           "name = 'cloud_audit'"),
            "1");
  EXPECT_EQ(raw_query_text(path,
                           "SELECT dflt_value FROM pragma_table_info('traces') WHERE name = "
                           "'cloud_upstream'"),
            "''");
  EXPECT_EQ(raw_query_text(path,
                           "SELECT dflt_value FROM pragma_table_info('traces') WHERE name = "
                           "'ttft_ms'"),
            "0");
}

// ---- The background writer ----------------------------------------------------------------

TEST_F(AuditLogTest, WriterWithAnAuditLogWritesAuditRowsAfterFlush) {
  TraceWriter writer(traces_, {}, audit_);
  ASSERT_TRUE(writer.submit(simple_trace(1, "t1")));
  AuditRecord a1 = full_audit();
  ASSERT_TRUE(writer.submit_audit(a1));
  ASSERT_TRUE(writer.submit(simple_trace(2, "t2")));
  AuditRecord a2 = simple_audit(2, "a2", "local");
  ASSERT_TRUE(writer.submit_audit(a2));
  writer.flush();

  auto rows = audit_->read({});
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2U);
  a2.id = (*rows)[0].id;
  a1.id = (*rows)[1].id;
  EXPECT_EQ((*rows)[0], a2);
  EXPECT_EQ((*rows)[1], a1);
  EXPECT_LT(a1.id, a2.id);
  auto traces = traces_->count();
  ASSERT_TRUE(traces);
  EXPECT_EQ(*traces, 2U);
  EXPECT_EQ(writer.failed(), 0U);
  EXPECT_EQ(writer.dropped(), 0U);
}

TEST_F(AuditLogTest, WriterWithoutAnAuditLogRefusesAuditRows) {
  TraceWriter writer(traces_, {});
  EXPECT_FALSE(writer.submit_audit(full_audit()));
  ASSERT_TRUE(writer.submit(simple_trace(1, "t1")));
  writer.flush();
  EXPECT_EQ(count(), 0U);
  auto traces = traces_->count();
  ASSERT_TRUE(traces);
  EXPECT_EQ(*traces, 1U);
  EXPECT_EQ(writer.failed(), 0U);
}

// The egress guard waits for a required row's commit only where the commit outlives the
// process: a file, not an in-memory database (server/egress_guard.cpp).
TEST_F(AuditLogTest, OnlyAnAuditInAFileOutlivesTheProcess) {
  EXPECT_TRUE(TraceWriter(traces_, {}, audit_).audit_persistent());
  EXPECT_FALSE(TraceWriter(traces_, {}).audit_persistent()) << "no audit at all";
  auto memory = Database::open(":memory:");
  ASSERT_TRUE(memory) << memory.error().message;
  auto in_memory = std::make_shared<AuditLog>(*memory);
  EXPECT_FALSE(TraceWriter(std::make_shared<TraceLog>(*memory), {}, in_memory).audit_persistent());
  EXPECT_FALSE(TraceWriter(std::make_shared<TraceLog>(*memory), {}, AuditLog::in_memory(10))
                   .audit_persistent());
}

TEST_F(AuditLogTest, WriterCountsAnAuditRowTheDatabaseRefusesAsFailed) {
  TraceWriter writer(traces_, {}, audit_);
  AuditRecord bad = simple_audit(1, "bad");
  bad.purpose = "exfiltrate";
  ASSERT_TRUE(writer.submit_audit(simple_audit(1, "good1")));
  ASSERT_TRUE(writer.submit_audit(bad));  // queued: refused only when written
  ASSERT_TRUE(writer.submit_audit(simple_audit(2, "good2")));
  writer.flush();
  EXPECT_EQ(writer.failed(), 1U);
  EXPECT_EQ(request_ids({}), (Ids{"good2", "good1"}));
}

TEST_F(AuditLogTest, WriterTellsTheSenderWhetherEachRowWasStored) {
  // The egress guard waits on this answer before it lets a body leave (operations.audit.required).
  TraceWriter writer(traces_, {}, audit_);
  std::mutex mutex;
  std::vector<std::pair<std::string, bool>> answers;
  auto answer = [&](const std::string& name) {
    return [&, name](bool stored) {
      std::lock_guard lock(mutex);
      answers.emplace_back(name, stored);
    };
  };
  AuditRecord bad = simple_audit(2, "bad");
  bad.purpose = "exfiltrate";
  ASSERT_TRUE(writer.submit_audit(simple_audit(1, "good"), answer("good")));
  ASSERT_TRUE(writer.submit_audit(bad, answer("bad")));
  writer.flush();
  std::lock_guard lock(mutex);
  EXPECT_EQ(answers, (std::vector<std::pair<std::string, bool>>{{"good", true}, {"bad", false}}));
}

// Traces may linger in the queue (nobody waits for them), but an audit row its sender waits for
// is not held up by that, and takes the traces queued before it along: when its sender hears
// it was stored, they are stored too.
TEST_F(AuditLogTest, AnAwaitedAuditRowTakesTheLingeringTracesAlong) {
  TraceWriter writer(traces_, {}, audit_);
  ASSERT_TRUE(writer.submit(simple_trace(1, "t1")));
  ASSERT_TRUE(writer.submit(simple_trace(2, "t2")));
  std::promise<std::optional<size_t>> traces_when_stored;
  ASSERT_TRUE(writer.submit_audit(simple_audit(1, "a1"), [&](bool ok) {
    // Called on the writer's thread after the commit, the connection released.
    auto n = traces_->count();
    traces_when_stored.set_value(ok && n ? std::optional<size_t>(*n) : std::nullopt);
  }));
  auto future = traces_when_stored.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(future.get(), std::optional<size_t>(2));
}

// A trace with nothing behind it is still written, without a flush, within the linger.
TEST_F(AuditLogTest, ALoneTraceIsWrittenWithoutAFlush) {
  TraceWriter writer(traces_, {}, audit_);
  ASSERT_TRUE(writer.submit(simple_trace(1, "t1")));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (writer.written() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(writer.written(), 1U);
  // And again after the writer has gone idle.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(writer.submit(simple_trace(2, "t2")));
  while (writer.written() == 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(writer.written(), 2U);
}

TEST_F(AuditLogTest, WriterStoresAMixedBatchTogetherInQueueOrder) {
  TraceWriter writer(traces_, {}, audit_);
  std::mutex mutex;
  std::vector<std::string> stored;
  auto answer = [&](const std::string& name) {
    return [&, name](bool ok) {
      std::lock_guard lock(mutex);
      stored.push_back(name + (ok ? ": stored" : ": refused"));
    };
  };
  TraceRecord reviewed = simple_trace(1, "t1");
  reviewed.ticket = "rev_aaaaaaaaaaaaaaaaaaaaaaaa";
  reviewed.edge_answer_hash = answer_hash("Paris");
  {
    // Another user holds the database: everything queues, then goes in one batch.
    Connection busy = db_->acquire();
    ASSERT_TRUE(writer.submit(reviewed));
    ASSERT_TRUE(writer.submit_audit(simple_audit(1, "a1"), answer("a1")));
    ASSERT_TRUE(writer.submit_review_label(reviewed.ticket, "paris"));
    ASSERT_TRUE(writer.submit(simple_trace(2, "t2")));
    ASSERT_TRUE(writer.submit_audit(simple_audit(2, "a2"), answer("a2")));
  }
  writer.flush();
  EXPECT_EQ(writer.written(), 2U);
  EXPECT_EQ(writer.failed(), 0U);
  EXPECT_EQ(request_ids({}), (Ids{"a2", "a1"}));
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(stored, (std::vector<std::string>{"a1: stored", "a2: stored"}));
  }
  auto traces = traces_->read({});
  ASSERT_TRUE(traces) << traces.error().message;
  ASSERT_EQ(traces->size(), 2U);
  EXPECT_EQ((*traces)[0].request_id, "t1");
  EXPECT_EQ((*traces)[0].edge_good, std::optional<bool>(true)) << "the label follows its trace";
  EXPECT_EQ((*traces)[0].label_source, "review");
}

TEST_F(AuditLogTest, WriterAppliesAuditRetentionAtClose) {
  {
    TraceWriter writer(traces_, {.max_audit_rows = 3}, audit_);
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(writer.submit_audit(simple_audit(i, "r" + std::to_string(i))));
    }
  }  // the destructor writes what is queued, then runs the retention
  EXPECT_EQ(request_ids({}), (Ids{"r9", "r8", "r7"}));
}

TEST_F(AuditLogTest, WriterDropsAuditRowsOnceClosed) {
  TraceWriter writer(traces_, {}, audit_);
  writer.close();
  EXPECT_FALSE(writer.submit_audit(simple_audit(1, "late")));
  EXPECT_EQ(count(), 0U);
}

// The audit in memory answers every read as the table does: the same rows appended to both, the
// same queries and prunes, the same answers.
TEST_F(AuditLogTest, TheAuditInMemoryReadsAndPrunesAsTheTableDoes) {
  auto memory = AuditLog::in_memory(1000);
  std::mt19937 random(7);
  const std::vector<std::string> upstreams = {"openai", "local", "azure"};
  auto both = [&](const AuditRecord& r) {
    auto in_table = audit_->append(r);
    auto in_memory = memory->append(r);
    ASSERT_TRUE(in_table && in_memory);
    EXPECT_EQ(*in_table, *in_memory) << "ids count up alike";
  };
  auto same_reads = [&](const std::string& when) {
    for (int q = 0; q < 200; ++q) {
      Query query;
      if (random() % 2 == 0) {
        query.since(static_cast<int64_t>(random() % 120));
      }
      if (random() % 2 == 0) {
        query.until(static_cast<int64_t>(random() % 120));
      }
      if (random() % 2 == 0) {
        query.upstream(upstreams[random() % upstreams.size()]);
      }
      query.limit(1 + random() % 40);
      auto from_table = audit_->read(query);
      auto from_memory = memory->read(query);
      ASSERT_TRUE(from_table && from_memory);
      ASSERT_EQ(*from_table, *from_memory) << when << ", query " << q;
    }
    EXPECT_EQ(audit_->count().value(), memory->count().value()) << when;
  };
  for (int i = 0; i < 100; ++i) {
    AuditRecord r = i % 10 == 0 ? full_audit() : simple_audit(0, "r" + std::to_string(i));
    r.unix_ms = static_cast<int64_t>(random() % 100);  // out of order, with ties
    r.upstream = upstreams[random() % upstreams.size()];
    both(r);
  }
  same_reads("after 100 rows");
  EXPECT_EQ(audit_->prune(37).value(), memory->prune(37).value());
  same_reads("after the prune");
  both(simple_audit(50, "after-prune"));
  same_reads("after a row more");
}

TEST(AuditInMemory, KeepsItsNewestRowsAndRefusesWhatTheTableRefuses) {
  auto memory = AuditLog::in_memory(3);
  EXPECT_EQ(memory->database(), nullptr);
  EXPECT_FALSE(memory->persistent());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(memory->append(simple_audit(i, "r" + std::to_string(i))));
  }
  auto rows = memory->read({});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 3U);
  EXPECT_EQ((*rows)[0].request_id, "r9");
  EXPECT_EQ((*rows)[0].id, 10);
  EXPECT_EQ((*rows)[2].request_id, "r7");
  AuditRecord bad = simple_audit(1, "bad");
  bad.purpose = "exfiltrate";
  auto refused = memory->append(bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("purpose"), std::string::npos);
  EXPECT_FALSE(memory->read(Query().limit(0))) << "the same limits as the table";
  EXPECT_EQ(memory->count().value(), 3U);
}

// A writer with an audit in memory stores a row at once, on the sender's thread: no queue, no
// flush, and the sender hears about it before submit_audit returns.
TEST(AuditInMemory, TheWriterStoresARowAtOnceAndSaysSo) {
  auto memory_db = Database::open(":memory:");
  ASSERT_TRUE(memory_db) << memory_db.error().message;
  auto memory = AuditLog::in_memory(100);
  TraceWriter writer(std::make_shared<TraceLog>(*memory_db), {}, memory);
  std::vector<bool> answers;
  EXPECT_TRUE(writer.submit_audit(simple_audit(1, "good"),
                                  [&](bool stored) { answers.push_back(stored); }));
  AuditRecord bad = simple_audit(2, "bad");
  bad.purpose = "exfiltrate";
  EXPECT_FALSE(writer.submit_audit(bad, [&](bool stored) { answers.push_back(stored); }));
  EXPECT_EQ(answers, (std::vector<bool>{true, false}));
  EXPECT_EQ(memory->count().value(), 1U);
  // Traces still go through the queue and the database, alongside.
  ASSERT_TRUE(writer.submit(simple_trace(3, "t1")));
  writer.flush();
  EXPECT_EQ(writer.written(), 1U);
  EXPECT_EQ(writer.failed(), 0U);
}

}  // namespace
}  // namespace tandem::store
