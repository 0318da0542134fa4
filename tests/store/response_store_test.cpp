// The response store: kept and read back, replaced by id, expired, bounded in rows, deleted,
// and kept across a restart of the database file.

#include "store/response_store.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace tandem::store {
namespace {

using testing::TempDir;

constexpr int64_t kHourMs = 3600 * 1000;

StoredResponse response(const std::string& id) {
  return {id, R"({"id":")" + id + R"("})", R"([{"role":"user","content":"hi"}])"};
}

std::shared_ptr<Database> memory_database() {
  auto db = Database::open(":memory:");
  EXPECT_TRUE(db) << db.error().message;
  return *db;
}

TEST(ResponseStoreTest, KeepsAResponseAndReadsItBack) {
  auto db = memory_database();
  ResponseStore store(*db, 10, std::chrono::hours(1));
  ASSERT_TRUE(store.put(response("resp_a"), 1000));
  auto got = store.get("resp_a", 2000);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->response, response("resp_a").response);
  EXPECT_EQ((*got)->conversation, response("resp_a").conversation);
  auto missing = store.get("resp_b", 2000);
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
}

TEST(ResponseStoreTest, AnExpiredResponseIsGoneAndIsDeletedByTheNextPut) {
  auto db = memory_database();
  ResponseStore store(*db, 10, std::chrono::hours(1));
  ASSERT_TRUE(store.put(response("resp_old"), 0));
  EXPECT_TRUE(store.get("resp_old", kHourMs - 1)->has_value());
  EXPECT_FALSE(store.get("resp_old", kHourMs)->has_value());
  ASSERT_TRUE(store.put(response("resp_new"), kHourMs));
  auto connection = db->acquire();
  EXPECT_EQ(connection.query_int64("SELECT count(*) FROM stored_responses").value(), 1);
}

TEST(ResponseStoreTest, KeepsAtMostMaxRowsTheNewest) {
  auto db = memory_database();
  ResponseStore store(*db, 3, std::chrono::hours(1));
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(store.put(response("resp_" + std::to_string(i)), 1000 + i));
  }
  {
    auto connection = db->acquire();
    EXPECT_EQ(connection.query_int64("SELECT count(*) FROM stored_responses").value(), 3);
  }
  EXPECT_FALSE(store.get("resp_6", 2000)->has_value());
  for (int i = 7; i < 10; ++i) {
    EXPECT_TRUE(store.get("resp_" + std::to_string(i), 2000)->has_value()) << i;
  }
}

TEST(ResponseStoreTest, APutWithTheSameIdReplacesAndRemoveSaysWhetherThereWasOne) {
  auto db = memory_database();
  ResponseStore store(*db, 10, std::chrono::hours(1));
  ASSERT_TRUE(store.put(response("resp_a"), 1000));
  StoredResponse changed = response("resp_a");
  changed.conversation = "[]";
  ASSERT_TRUE(store.put(changed, 1000));
  EXPECT_EQ(store.get("resp_a", 1000).value()->conversation, "[]");
  EXPECT_TRUE(store.remove("resp_a").value());
  EXPECT_FALSE(store.remove("resp_a").value());
  EXPECT_FALSE(store.get("resp_a", 1000)->has_value());
}

TEST(ResponseStoreTest, SurvivesARestartOfTheDatabaseFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("routing.db");
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db) << db.error().message;
    ResponseStore store(**db, 10, std::chrono::hours(1));
    ASSERT_TRUE(store.put(response("resp_a"), 1000));
  }
  auto db = Database::open(path);
  ASSERT_TRUE(db) << db.error().message;
  ResponseStore store(**db, 10, std::chrono::hours(1));
  EXPECT_TRUE(store.get("resp_a", 2000)->has_value());
}

}  // namespace
}  // namespace tandem::store
