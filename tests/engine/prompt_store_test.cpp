#include "engine/prompt_store.h"

#include <gtest/gtest.h>

namespace tandem::engine {
namespace {

PromptStore::Entry entry(std::vector<int32_t> tokens, size_t state_bytes) {
  PromptStore::Entry e;
  e.tokens = std::move(tokens);
  e.state.assign(state_bytes, 0xAB);
  return e;
}

TEST(PromptStoreTest, TakesTheEntrySharingTheLongestPrefix) {
  PromptStore store(1 << 20);
  ASSERT_TRUE(store.put(entry({1, 2, 3, 4}, 100)));
  ASSERT_TRUE(store.put(entry({1, 2, 9, 9, 9}, 100)));
  EXPECT_EQ(store.longest_shared({1, 2, 3, 4, 5}), 4U);
  auto taken = store.take({1, 2, 3, 4, 5}, 3);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->tokens, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(taken->state.size(), 100U);
  EXPECT_EQ(store.entries(), 1U);  // taken out: the KV lives in a slot now
}

TEST(PromptStoreTest, NothingIsTakenBelowTheMinimumShared) {
  PromptStore store(1 << 20);
  ASSERT_TRUE(store.put(entry({1, 2, 3, 4}, 10)));
  EXPECT_FALSE(store.take({1, 2, 7}, 3).has_value());
  EXPECT_FALSE(store.take({5}, 1).has_value());
  EXPECT_EQ(store.entries(), 1U);
}

TEST(PromptStoreTest, StaysWithinItsLimitDroppingTheLeastRecentlyStored) {
  const size_t per_entry = 1000 + 3 * sizeof(int32_t);
  PromptStore store(3 * per_entry);
  ASSERT_TRUE(store.put(entry({1, 1, 1}, 1000)));
  ASSERT_TRUE(store.put(entry({2, 2, 2}, 1000)));
  ASSERT_TRUE(store.put(entry({3, 3, 3}, 1000)));
  EXPECT_EQ(store.bytes(), 3 * per_entry);
  ASSERT_TRUE(store.put(entry({4, 4, 4}, 1000)));
  EXPECT_EQ(store.entries(), 3U);
  EXPECT_LE(store.bytes(), store.limit());
  EXPECT_EQ(store.longest_shared({1, 1, 1}), 0U);  // the oldest went
  EXPECT_EQ(store.longest_shared({2, 2, 2}), 3U);
  EXPECT_EQ(store.longest_shared({4, 4, 4}), 3U);
}

TEST(PromptStoreTest, AnEntryLargerThanTheLimitIsRefusedAndEvictsNothing) {
  PromptStore store(500);
  ASSERT_TRUE(store.put(entry({1, 2}, 100)));
  EXPECT_FALSE(store.put(entry({3, 4}, 1000)));
  EXPECT_EQ(store.entries(), 1U);
  EXPECT_FALSE(store.put(entry({}, 10)));
}

TEST(PromptStoreTest, ALongerConversationReplacesItsOwnPrefix) {
  PromptStore store(1 << 20);
  ASSERT_TRUE(store.put(entry({1, 2, 3}, 100)));
  ASSERT_TRUE(store.put(entry({1, 2, 3, 4, 5}, 200)));
  EXPECT_EQ(store.entries(), 1U);
  EXPECT_EQ(store.bytes(), 200 + 5 * sizeof(int32_t));
  // A prefix of what is held adds nothing.
  EXPECT_FALSE(store.put(entry({1, 2, 3}, 100)));
  EXPECT_EQ(store.entries(), 1U);
}

TEST(PromptStoreTest, CommonPrefixLength) {
  EXPECT_EQ(common_prefix_length({}, {1}), 0U);
  EXPECT_EQ(common_prefix_length({1, 2, 3}, {1, 2, 4}), 2U);
  EXPECT_EQ(common_prefix_length({1, 2}, {1, 2, 3}), 2U);
  EXPECT_EQ(common_prefix_length({1, 2, 3}, {1, 2}), 2U);
}

}  // namespace
}  // namespace tandem::engine
