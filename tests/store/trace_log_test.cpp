// The routing traces: every field round-trips, labels, retention, read filters, concurrent
// writers, schema checks, and the background writer that keeps SQLite off the request path.

#include "store/trace_log.h"

#include <cmath>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "common/answer_match.h"
#include "store/trace_writer.h"
#include "temp_dir.h"

namespace tandem::store {
namespace {

using testing::TempDir;

// A record with every field set to something other than its default.
TraceRecord full_record() {
  TraceRecord r;
  r.unix_ms = 1764478201123;
  r.request_id = "chatcmpl-abc123";
  r.client = "acme";
  r.model = "tandem";
  r.pattern = "cascade";
  r.tier = "cloud";
  r.kind = "math";
  r.reason_codes = {"pattern.cascade", "x.y"};
  r.privacy_detectors = {"email", "pattern:employee_id"};
  r.review_rules = {"keyword:legal"};
  r.hints.privacy_header = true;
  r.hints.key_local_only = true;
  r.hints.review_header = true;
  r.hints.latency_budget_ms = 150;
  r.hints.pattern = "cascade";
  r.hints.cloud_only_fields = {"tools", "response_format"};
  for (int i = 0; i < 29; ++i) {
    r.features.push_back(0.1F * static_cast<float>(i) + 1e-7F);
  }
  r.features[3] = 3.4028235e38F;  // the extremes survive the text form
  r.features[4] = 1.17549435e-38F;
  r.features[5] = -0.0F;
  r.complexity = 0.123456789012345678;
  r.confidence = TraceConfidence{17, -0.7123456789, -4.5, 1.25, 3.75, 0.4123456789, 0.5};
  r.escalated = true;
  r.cost_edge = 0.0;
  r.cost_cloud = 0.000123456789;
  r.cost_all_cloud = 0.000223456789;
  r.prompt_tokens = 42;
  r.edge_tokens = 17;
  r.cloud_tokens = 23;
  r.latency_ms = 812.625;
  r.data_left_device = true;
  r.edge_model = "llama3.2-1b";
  r.cloud_model = "gpt-4o-mini";
  r.ticket = "rev_0123456789abcdef01234567";
  r.edge_answer_hash = answer_hash("The answer is 42");
  r.edge_good = false;
  r.label_source = "verification";
  return r;
}

TraceRecord simple_record(int64_t unix_ms, const std::string& request_id) {
  TraceRecord r;
  r.unix_ms = unix_ms;
  r.request_id = request_id;
  r.model = "tandem";
  r.pattern = "edge";
  r.tier = "edge";
  r.kind = "open";
  r.reason_codes = {"ingress.simple"};
  r.features.assign(29, 0.5F);
  return r;
}

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

class TraceLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    path_ = dir_.file("tandem.db");
    auto db = Database::open(path_);
    ASSERT_TRUE(db) << db.error().message;
    db_ = *db;
    log_ = std::make_shared<TraceLog>(db_);
  }

  int64_t append(const TraceRecord& record) {
    auto id = log_->append(record);
    EXPECT_TRUE(id) << id.error().message;
    return id ? *id : -1;
  }

  std::vector<std::string> request_ids(const TraceQuery& query) {
    auto rows = log_->read(query);
    EXPECT_TRUE(rows) << rows.error().message;
    std::vector<std::string> out;
    for (const auto& r : rows.value()) {
      out.push_back(r.request_id);
    }
    return out;
  }

  TempDir dir_;
  std::string path_;
  std::shared_ptr<Database> db_;
  std::shared_ptr<TraceLog> log_;
};

TEST_F(TraceLogTest, EveryFieldRoundTripsThroughTheFile) {
  TraceRecord full = full_record();
  TraceRecord bare = simple_record(5, "cmpl-bare");  // every optional unset
  full.id = append(full);
  bare.id = append(bare);
  EXPECT_GT(bare.id, full.id);
  db_.reset();
  log_.reset();
  auto reopened = Database::open(path_);  // from the file, not a cache
  ASSERT_TRUE(reopened) << reopened.error().message;
  TraceLog log(*reopened);
  auto rows = log.read({});
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2U);
  EXPECT_EQ((*rows)[0], full);
  EXPECT_EQ((*rows)[1], bare);
  EXPECT_FALSE((*rows)[1].confidence.has_value());
  EXPECT_FALSE((*rows)[1].cost_all_cloud.has_value());
  EXPECT_FALSE((*rows)[1].hints.latency_budget_ms.has_value());
  EXPECT_FALSE((*rows)[1].edge_good.has_value());
  EXPECT_EQ(std::signbit((*rows)[0].features[5]), true);
}

// The list columns are JSON arrays: a client-supplied field name with quotes, backslashes,
// control characters or invalid UTF-8 still makes a readable row (the invalid byte replaced).
TEST_F(TraceLogTest, ListColumnsKeepAnyFieldNameReadable) {
  TraceRecord r = simple_record(7, "cmpl-lists");
  r.hints.cloud_only_fields = {"a\"b\\c", "tab\there\n", "caf\xc3\xa9", "bad\xff", ""};
  r.review_rules = {"\x01"};
  append(r);
  auto rows = log_->read({});
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 1U);
  const std::vector<std::string> expected = {"a\"b\\c", "tab\there\n", "caf\xc3\xa9",
                                             "bad\xef\xbf\xbd", ""};
  EXPECT_EQ((*rows)[0].hints.cloud_only_fields, expected);
  EXPECT_EQ((*rows)[0].review_rules, std::vector<std::string>{"\x01"});
}

TEST_F(TraceLogTest, InvalidRecordsAreRefusedNamingTheField) {
  TraceRecord r = simple_record(1, "a");
  r.tier = "edge+cloud";
  auto bad_tier = log_->append(r);
  ASSERT_FALSE(bad_tier);
  EXPECT_EQ(bad_tier.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_tier.error().message.find("tier must be edge, cloud, human or none"),
            std::string::npos);

  r = simple_record(1, "a");
  r.edge_good = true;
  auto no_source = log_->append(r);
  ASSERT_FALSE(no_source);
  EXPECT_NE(no_source.error().message.find("label_source"), std::string::npos);

  r = simple_record(1, "a");
  r.label_source = "review";
  EXPECT_FALSE(log_->append(r));  // a source without a label

  r = simple_record(1, "a");
  r.client.assign(kMaxTraceNameBytes + 1, 'x');
  auto long_client = log_->append(r);
  ASSERT_FALSE(long_client);
  EXPECT_NE(long_client.error().message.find("client is 1025 bytes"), std::string::npos);

  r = simple_record(1, "a");
  r.features[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(log_->append(r));
  r = simple_record(1, "a");
  r.confidence = TraceConfidence{};
  r.confidence->combined = std::numeric_limits<double>::infinity();
  auto bad_confidence = log_->append(r);
  ASSERT_FALSE(bad_confidence);
  EXPECT_NE(bad_confidence.error().message.find("confidence.combined"), std::string::npos);

  // A batch with one bad record stores none of it.
  std::vector<TraceRecord> batch = {simple_record(1, "ok"), simple_record(2, "bad")};
  batch[1].tier = "";
  EXPECT_FALSE(log_->append_all(batch));
  auto n = log_->count();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0U);
}

TEST_F(TraceLogTest, AReviewersAnswerLabelsTheEdgeAnswerOfItsTicket) {
  TraceRecord agreed = simple_record(1, "r1");
  agreed.ticket = "rev_aaaaaaaaaaaaaaaaaaaaaaaa";
  agreed.edge_answer_hash = answer_hash("Let me think... #### 42");
  TraceRecord disagreed = simple_record(2, "r2");
  disagreed.ticket = "rev_bbbbbbbbbbbbbbbbbbbbbbbb";
  disagreed.edge_answer_hash = answer_hash("The answer is B.");
  disagreed.edge_good = true;  // a machine's label, which the person's replaces
  disagreed.label_source = "verification";
  TraceRecord no_edge = simple_record(3, "r3");  // a review rule: the edge never answered
  no_edge.ticket = "rev_cccccccccccccccccccccccc";
  append(agreed);
  append(disagreed);
  append(no_edge);

  auto one = log_->label_by_ticket(agreed.ticket, "42");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(*one, 1U);
  auto two = log_->label_by_ticket(disagreed.ticket, "The answer is C");
  ASSERT_TRUE(two);
  EXPECT_EQ(*two, 1U);
  auto none = log_->label_by_ticket(no_edge.ticket, "anything");
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0U);
  auto unknown = log_->label_by_ticket("rev_dddddddddddddddddddddddd", "x");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(*unknown, 0U);
  EXPECT_FALSE(log_->label_by_ticket("", "x"));

  auto rows = log_->read({});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 3U);
  EXPECT_EQ((*rows)[0].edge_good, std::optional<bool>(true));
  EXPECT_EQ((*rows)[0].label_source, "review");
  EXPECT_EQ((*rows)[1].edge_good, std::optional<bool>(false));
  EXPECT_EQ((*rows)[1].label_source, "review");
  EXPECT_FALSE((*rows)[2].edge_good.has_value());
  EXPECT_EQ((*rows)[2].label_source, "");
}

TEST_F(TraceLogTest, ShadowModeLabelsByRequestId) {
  append(simple_record(1, "r1"));
  append(simple_record(2, "r2"));
  auto labelled = log_->label_by_request("r2", true, "shadow");
  ASSERT_TRUE(labelled) << labelled.error().message;
  EXPECT_EQ(*labelled, 1U);
  EXPECT_FALSE(log_->label_by_request("r1", true, "guess"));
  auto rows = log_->read({.labelled_only = true});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1U);
  EXPECT_EQ((*rows)[0].request_id, "r2");
  EXPECT_EQ((*rows)[0].label_source, "shadow");
}

TEST_F(TraceLogTest, ReadFiltersByTimeLabelAndLimit) {
  for (int i = 0; i < 6; ++i) {
    TraceRecord r = simple_record(1000 * (i + 1), "r" + std::to_string(i));
    if (i % 2 == 1) {
      r.edge_good = i == 1;
      r.label_source = "verification";
    }
    append(r);
  }
  using V = std::vector<std::string>;
  EXPECT_EQ(request_ids({}), (V{"r0", "r1", "r2", "r3", "r4", "r5"}));
  // [since, until): 2000 in, 5000 out.
  EXPECT_EQ(request_ids({.since_ms = 2000, .until_ms = 5000}), (V{"r1", "r2", "r3"}));
  EXPECT_EQ(request_ids({.limit = 2}), (V{"r0", "r1"}));
  EXPECT_EQ(request_ids({.limit = 2, .newest_first = true}), (V{"r5", "r4"}));
  EXPECT_EQ(request_ids({.labelled_only = true}), (V{"r1", "r3", "r5"}));
  EXPECT_EQ(request_ids({.since_ms = 3000, .limit = 1, .labelled_only = true}), (V{"r3"}));
  EXPECT_TRUE(request_ids({.since_ms = 7000}).empty());

  int visited = 0;
  Status stopped = log_->scan({}, [&](TraceRecord&&) { return ++visited < 2; });
  ASSERT_TRUE(stopped);
  EXPECT_EQ(visited, 2);
}

TEST_F(TraceLogTest, RetentionDeletesTheOldestRows) {
  for (int i = 0; i < 10; ++i) {
    append(simple_record(i, "r" + std::to_string(i)));
  }
  auto none = log_->prune(10);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0U);
  auto deleted = log_->prune(3);
  ASSERT_TRUE(deleted) << deleted.error().message;
  EXPECT_EQ(*deleted, 7U);
  EXPECT_EQ(request_ids({}), (std::vector<std::string>{"r7", "r8", "r9"}));
  // New rows keep counting up after a prune.
  const int64_t id = append(simple_record(99, "r10"));
  EXPECT_GT(id, 10);
  auto all = log_->prune(0);
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, 4U);
  auto n = log_->count();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0U);
}

TEST_F(TraceLogTest, ThreadsAppendConcurrently) {
  constexpr int kThreads = 8;
  constexpr int kEach = 50;
  std::vector<std::thread> threads;
  std::vector<std::vector<int64_t>> ids(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto id = log_->append(simple_record(i, "t" + std::to_string(t) + "-" + std::to_string(i)));
        ids[t].push_back(id ? *id : -1);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  std::set<int64_t> unique;
  for (const auto& list : ids) {
    for (int64_t id : list) {
      EXPECT_GT(id, 0);
      unique.insert(id);
    }
  }
  EXPECT_EQ(unique.size(), static_cast<size_t>(kThreads * kEach));
  auto n = log_->count();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, static_cast<size_t>(kThreads * kEach));
}

TEST(TraceDatabase, NewerSchemaIsRefusedAndLeftAlone) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("tandem.db");
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(TraceLog(*db).append(simple_record(1, "r1")));
  }
  const std::string newer = std::to_string(Database::kSchemaVersion + 1);
  raw_exec(path, "PRAGMA user_version = " + newer);
  auto db = Database::open(path);
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find("schema version " + newer + " is newer"), std::string::npos);
  auto reader = open_trace_database(path);
  ASSERT_FALSE(reader);
  EXPECT_NE(reader.error().message.find("is newer"), std::string::npos);
}

TEST(TraceDatabase, ReadersNeverCreateOrMigrateAFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string missing = dir.file("missing.db");
  auto none = open_trace_database(missing);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(none.error().message, "traces database " + missing + " does not exist");
  EXPECT_FALSE(std::filesystem::exists(missing));

  // A database from before traces (schema version 1) is reported, not migrated.
  const std::string old = dir.file("old.db");
  raw_exec(old,
           "CREATE TABLE review_tickets (seq INTEGER PRIMARY KEY); PRAGMA user_version = 1; "
           "PRAGMA application_id = 1413762353");
  auto old_db = open_trace_database(old);
  ASSERT_FALSE(old_db);
  EXPECT_NE(old_db.error().message.find("holds no traces table"), std::string::npos)
      << old_db.error().message;

  const std::string text = dir.file("notes.txt");
  {
    std::FILE* f = std::fopen(text.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not a database, just some text that is long enough to be a header......\n", f);
    std::fclose(f);
  }
  EXPECT_FALSE(open_trace_database(text));
  EXPECT_FALSE(open_trace_database(dir.path()));

  const std::string good = dir.file("good.db");
  ASSERT_TRUE(Database::open(good));
  auto opened = open_trace_database(good);
  ASSERT_TRUE(opened) << opened.error().message;
}

// ---- The background writer ----------------------------------------------------------------

TEST_F(TraceLogTest, WriterStoresEverythingAndCloseFlushes) {
  {
    TraceWriter writer(log_, {});
    for (int i = 0; i < 300; ++i) {
      EXPECT_TRUE(writer.submit(simple_record(i, "r" + std::to_string(i))));
    }
  }  // the destructor writes what is still queued
  auto n = log_->count();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 300U);
  EXPECT_EQ(request_ids({.limit = 1, .newest_first = true}), std::vector<std::string>{"r299"});
}

TEST_F(TraceLogTest, WriterAppliesAReviewLabelAfterTheTraceBeforeIt) {
  TraceWriter writer(log_, {});
  TraceRecord r = simple_record(1, "r1");
  r.ticket = "rev_aaaaaaaaaaaaaaaaaaaaaaaa";
  r.edge_answer_hash = answer_hash("Paris");
  ASSERT_TRUE(writer.submit(r));
  ASSERT_TRUE(writer.submit_review_label(r.ticket, "paris."));
  writer.flush();
  auto rows = log_->read({});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1U);
  EXPECT_EQ((*rows)[0].edge_good, std::optional<bool>(true));
  EXPECT_EQ((*rows)[0].label_source, "review");
  EXPECT_EQ(writer.written(), 1U);
  EXPECT_EQ(writer.failed(), 0U);
}

TEST_F(TraceLogTest, AFullQueueDropsAndCountsInsteadOfBlocking) {
  constexpr size_t kCapacity = 16;
  constexpr int kSubmitted = kCapacity + 400;
  TraceWriter writer(log_, {.queue_capacity = kCapacity});
  int refused = 0;
  {
    // Another user holds the database: the writer cannot write, submit() must not wait.
    Connection busy = db_->acquire();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kSubmitted; ++i) {
      refused += writer.submit(simple_record(i, "r" + std::to_string(i))) ? 0 : 1;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  }
  writer.close();
  EXPECT_GT(refused, 0);
  EXPECT_EQ(writer.dropped(), static_cast<uint64_t>(refused));
  EXPECT_EQ(writer.written() + writer.dropped(), static_cast<uint64_t>(kSubmitted));
  auto n = log_->count();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, writer.written());
  EXPECT_FALSE(writer.submit(simple_record(1, "late")));  // closed
}

TEST_F(TraceLogTest, WriterPrunesPeriodicallyAndAtClose) {
  TraceWriter writer(log_, {.max_rows = 5, .prune_every = 4});
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(writer.submit(simple_record(i, "r" + std::to_string(i))));
    writer.flush();  // one batch per record: retention runs every 4 rows
    auto n = log_->count();
    ASSERT_TRUE(n);
    EXPECT_LE(*n, 5U + 3U) << "after " << i + 1;
  }
  writer.close();
  EXPECT_EQ(request_ids({}), (std::vector<std::string>{"r15", "r16", "r17", "r18", "r19"}));
}

TEST_F(TraceLogTest, ARecordTheDatabaseRefusesCostsOnlyItself) {
  TraceWriter writer(log_, {});
  {
    Connection busy = db_->acquire();  // queue all three, so they go in one batch
    ASSERT_TRUE(writer.submit(simple_record(1, "r1")));
    TraceRecord bad = simple_record(2, "r2");
    bad.tier = "sideways";
    ASSERT_TRUE(writer.submit(bad));
    ASSERT_TRUE(writer.submit(simple_record(3, "r3")));
  }
  writer.flush();
  EXPECT_EQ(writer.written(), 2U);
  EXPECT_EQ(writer.failed(), 1U);
  EXPECT_EQ(request_ids({}), (std::vector<std::string>{"r1", "r3"}));
}

}  // namespace
}  // namespace tandem::store
