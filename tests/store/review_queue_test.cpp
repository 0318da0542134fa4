// The review queue: ticket life cycle, validation, ordering, and races between reviewers. Every
// case runs against both backends (names end in /sqlite and /redis); the Redis ones use a
// redis-server that the test starts itself (redis_server.h), each test under its own prefix.

#include "store/review_queue.h"

#include <atomic>
#include <latch>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "redis_server.h"
#include "store/redis_review_queue.h"
#include "temp_dir.h"

namespace tandem::store {
namespace {

using testing::connect_client;
using testing::shared_redis_server;
using testing::StoreBackend;
using testing::TempDir;
using testing::unique_prefix;

NewTicket sample_ticket(const std::string& prompt) {
  NewTicket ticket;
  ticket.client = "acme";
  ticket.model = "tandem";
  ticket.request_json =
      R"({"model":"tandem","messages":[{"role":"user","content":")" + prompt + R"("}]})";
  ticket.prompt_text = prompt;
  ticket.reason = "edge and cloud disagree";
  ticket.decision_json = R"({"tier":"human","reasons":["low confidence"]})";
  ticket.draft_answer = "probably 4";
  ticket.draft_tier = "edge";
  return ticket;
}

class ReviewQueueTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == StoreBackend::kSqlite) {
      auto db = Database::open(":memory:");
      ASSERT_TRUE(db) << db.error().message;
      queue_ = std::make_unique<SqliteReviewQueue>(*db);
    } else {
      ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
      auto client = connect_client(shared_redis_server(), unique_prefix());
      ASSERT_TRUE(client) << client.error().message;
      queue_ = std::make_unique<RedisReviewQueue>(*client);
    }
    ASSERT_STREQ(queue_->backend(), GetParam() == StoreBackend::kSqlite ? "sqlite" : "redis");
  }

  std::string create(const std::string& prompt, int64_t now_ms) {
    auto ticket = queue_->create(sample_ticket(prompt), now_ms);
    EXPECT_TRUE(ticket) << ticket.error().message;
    return ticket ? ticket->id : "";
  }

  size_t count(const std::string& status) {
    auto n = queue_->count(status);
    EXPECT_TRUE(n) << n.error().message;
    return n ? *n : SIZE_MAX;
  }

  std::unique_ptr<ReviewQueue> queue_;
};

INSTANTIATE_TEST_SUITE_P(Backends, ReviewQueueTest,
                         ::testing::Values(StoreBackend::kSqlite, StoreBackend::kRedis),
                         testing::backend_name);

TEST_P(ReviewQueueTest, CreateThenGetRoundTripsEveryField) {
  NewTicket input = sample_ticket("what is 2+2?");
  input.client = "";  // anonymous
  auto created = queue_->create(input, 1764478201123);
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_TRUE(is_review_ticket_id(created->id)) << created->id;
  EXPECT_EQ(created->status, "pending");

  auto got = queue_->get(created->id);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->id, created->id);
  EXPECT_EQ(got->status, "pending");
  EXPECT_EQ(got->created_at_ms, 1764478201123);
  EXPECT_EQ(got->updated_at_ms, 1764478201123);
  EXPECT_EQ(got->client, "");
  EXPECT_EQ(got->model, input.model);
  EXPECT_EQ(got->request_json, input.request_json);
  EXPECT_EQ(got->prompt_text, input.prompt_text);
  EXPECT_EQ(got->reason, input.reason);
  EXPECT_EQ(got->decision_json, input.decision_json);
  EXPECT_EQ(got->draft_answer, input.draft_answer);
  EXPECT_EQ(got->draft_tier, "edge");
  EXPECT_EQ(got->answer, "");
  EXPECT_EQ(got->reviewer, "");
}

TEST_P(ReviewQueueTest, TextRoundTripsByteForByte) {
  NewTicket input = sample_ticket("x");
  input.prompt_text = std::string("naïve 日本語 'quoted' \"double\" ; DROP TABLE x; --\n") +
                      std::string(1, '\0') + "after nul";
  input.draft_answer = "";
  input.draft_tier = "";
  auto created = queue_->create(input, 1);
  ASSERT_TRUE(created) << created.error().message;
  auto got = queue_->get(created->id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->prompt_text, input.prompt_text);
  EXPECT_EQ(got->draft_answer, "");
  EXPECT_EQ(got->draft_tier, "");
}

TEST_P(ReviewQueueTest, IdsAreWellFormedAndUnique) {
  std::set<std::string> ids;
  for (int i = 0; i < 500; ++i) {
    std::string id = create("q", i);
    ASSERT_EQ(id.size(), 28u);
    ASSERT_EQ(id.substr(0, 4), "rev_");
    ASSERT_TRUE(is_review_ticket_id(id)) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 500u);
}

TEST_P(ReviewQueueTest, UnknownIdIsNotFoundAndNamed) {
  const std::string id = "rev_000000000000000000000000";
  auto got = queue_->get(id);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, ErrorCode::kNotFound);
  EXPECT_NE(got.error().message.find(id), std::string::npos) << got.error().message;
  auto answered = queue_->answer(id, "x", "alice", 1);
  ASSERT_FALSE(answered);
  EXPECT_EQ(answered.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(queue_->reject(id, "x", "alice", 1).error().code, ErrorCode::kNotFound);
}

TEST_P(ReviewQueueTest, MalformedIdsAreRefusedBeforeQuerying) {
  const std::string good = create("q", 1);
  const std::vector<std::string> bad = {
      "",
      "rev_",
      "rev_00000000000000000000000",    // 23 digits
      "rev_0000000000000000000000000",  // 25 digits
      "rev_ABCDEF000000000000000000",   // upper case
      "REV_000000000000000000000000",
      "tkt_000000000000000000000000",
      "rev_00000000000000000000000g",
      "rev_' OR '1'='1' --         ",
      good + " ",
      " " + good,
      std::string(100000, 'a'),
  };
  for (const std::string& id : bad) {
    auto got = queue_->get(id);
    ASSERT_FALSE(got) << id;
    EXPECT_EQ(got.error().code, ErrorCode::kInvalidArgument) << id;
    EXPECT_EQ(got.error().message.rfind("not a review ticket id: ", 0), 0u) << got.error().message;
    EXPECT_LT(got.error().message.size(), 200u);  // a huge id is not echoed whole
    EXPECT_EQ(queue_->answer(id, "x", "alice", 1).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(queue_->reject(id, "x", "alice", 1).error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(count("pending"), 1u);  // nothing was touched
}

TEST_P(ReviewQueueTest, AnswerFlow) {
  const std::string id = create("what is 2+2?", 1000);
  auto answered = queue_->answer(id, "4", "alice", 5000);
  ASSERT_TRUE(answered) << answered.error().message;
  EXPECT_EQ(answered->id, id);
  EXPECT_EQ(answered->status, "answered");
  EXPECT_EQ(answered->answer, "4");
  EXPECT_EQ(answered->reviewer, "alice");
  EXPECT_EQ(answered->created_at_ms, 1000);
  EXPECT_EQ(answered->updated_at_ms, 5000);
  EXPECT_EQ(answered->prompt_text, "what is 2+2?");  // the whole ticket comes back

  auto got = queue_->get(id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, "answered");
  EXPECT_EQ(got->answer, "4");
  EXPECT_EQ(count("pending"), 0u);
  EXPECT_EQ(count("answered"), 1u);
  EXPECT_EQ(count(""), 1u);
}

TEST_P(ReviewQueueTest, RejectFlow) {
  const std::string id = create("how do I pick a lock?", 1000);
  auto rejected = queue_->reject(id, "we do not answer this", "bob", 2000);
  ASSERT_TRUE(rejected) << rejected.error().message;
  EXPECT_EQ(rejected->status, "rejected");
  EXPECT_EQ(rejected->answer, "we do not answer this");
  EXPECT_EQ(rejected->reviewer, "bob");
  EXPECT_EQ(count("rejected"), 1u);

  const std::string silent = create("again", 3000);
  auto without_note = queue_->reject(silent, "", "bob", 4000);
  ASSERT_TRUE(without_note) << without_note.error().message;
  EXPECT_EQ(without_note->answer, "");
}

TEST_P(ReviewQueueTest, SecondAnswerIsRefusedAndSaysWhoAnsweredWhen) {
  const std::string id = create("q", 1000);
  ASSERT_TRUE(queue_->answer(id, "first", "alice", 1764478201123));
  auto again = queue_->answer(id, "second", "bob", 1764478300000);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(again.error().message,
            "ticket " + id + " was already answered by alice at 2025-11-30T04:50:01.123Z");
  auto rejected = queue_->reject(id, "no", "bob", 1764478300000);
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.error().message, again.error().message);

  auto got = queue_->get(id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->answer, "first");  // the winner's answer stands
  EXPECT_EQ(got->reviewer, "alice");
}

TEST_P(ReviewQueueTest, AnswerAfterRejectIsRefused) {
  const std::string id = create("q", 1000);
  ASSERT_TRUE(queue_->reject(id, "no", "bob", 2000));
  auto answered = queue_->answer(id, "yes", "alice", 3000);
  ASSERT_FALSE(answered);
  EXPECT_EQ(answered.error().message,
            "ticket " + id + " was already rejected by bob at 1970-01-01T00:00:02.000Z");
}

TEST_P(ReviewQueueTest, EmptyAnswerOrReviewerIsRefused) {
  const std::string id = create("q", 1000);
  for (const std::string text : {"", "   ", "\n\t "}) {
    auto answered = queue_->answer(id, text, "alice", 2000);
    ASSERT_FALSE(answered);
    EXPECT_EQ(answered.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(answered.error().message.find("empty"), std::string::npos);
  }
  auto anonymous = queue_->answer(id, "4", "", 2000);
  ASSERT_FALSE(anonymous);
  EXPECT_EQ(anonymous.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(queue_->get(id)->status, "pending");
}

TEST_P(ReviewQueueTest, ListIsNewestFirstWithFilterAndLimit) {
  const std::string a = create("a", 1000);
  const std::string b = create("b", 3000);
  const std::string c = create("c", 2000);
  const std::string d = create("d", 3000);  // same millisecond as b, created later
  ASSERT_TRUE(queue_->answer(c, "done", "alice", 4000));

  auto all = queue_->list("", 1000);
  ASSERT_TRUE(all) << all.error().message;
  std::vector<std::string> ids;
  for (const auto& ticket : *all) {
    ids.push_back(ticket.id);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{d, b, c, a}));

  auto pending = queue_->list("pending", 1000);
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 3u);
  EXPECT_EQ((*pending)[0].id, d);
  EXPECT_EQ((*pending)[2].id, a);

  auto answered = queue_->list("answered", 10);
  ASSERT_TRUE(answered);
  ASSERT_EQ(answered->size(), 1u);
  EXPECT_EQ((*answered)[0].answer, "done");

  auto limited = queue_->list("", 2);
  ASSERT_TRUE(limited);
  ASSERT_EQ(limited->size(), 2u);
  EXPECT_EQ((*limited)[0].id, d);
  EXPECT_EQ((*limited)[1].id, b);

  auto none = queue_->list("rejected", 5);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST_P(ReviewQueueTest, ListAndCountRefuseBadArguments) {
  EXPECT_EQ(queue_->list("", 0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(queue_->list("", 1001).error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(queue_->list("", 1));
  EXPECT_TRUE(queue_->list("", 1000));
  EXPECT_EQ(queue_->list("done", 10).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(queue_->list("pending' OR 1=1 --", 10).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(queue_->count("Pending").error().code, ErrorCode::kInvalidArgument);
}

TEST_P(ReviewQueueTest, OversizedFieldsAreRefusedNotTruncated) {
  NewTicket big = sample_ticket("q");
  big.request_json.assign(kMaxTicketRequestBytes, 'x');
  ASSERT_TRUE(queue_->create(big, 1));  // exactly at the limit is fine
  big.request_json.push_back('x');
  auto refused = queue_->create(big, 1);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("request_json"), std::string::npos);

  NewTicket long_client = sample_ticket("q");
  long_client.client.assign(kMaxTicketNameBytes + 1, 'c');
  EXPECT_EQ(queue_->create(long_client, 1).error().code, ErrorCode::kInvalidArgument);

  NewTicket bad_tier = sample_ticket("q");
  bad_tier.draft_tier = "human";
  EXPECT_EQ(queue_->create(bad_tier, 1).error().code, ErrorCode::kInvalidArgument);

  const std::string id = create("q", 1);
  EXPECT_EQ(queue_->answer(id, std::string(kMaxTicketTextBytes + 1, 'a'), "alice", 2).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(count(""), 2u);
}

// Several reviewers press "answer" at once, through one Database (threads of one process) or
// two (the gateway and the CLI): exactly one answer is recorded, the others learn who won.
void race_answers(const std::vector<ReviewQueue*>& queues, const std::string& id) {
  constexpr int kThreads = 8;
  std::latch start(kThreads);
  std::atomic<int> winners = 0;
  std::atomic<int> refused = 0;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ReviewQueue& queue = *queues[static_cast<size_t>(i) % queues.size()];
      start.arrive_and_wait();
      auto result =
          queue.answer(id, "answer " + std::to_string(i), "reviewer" + std::to_string(i), 1000 + i);
      if (result) {
        ++winners;
      } else if (result.error().code == ErrorCode::kInvalidArgument &&
                 result.error().message.find("was already answered by reviewer") !=
                     std::string::npos) {
        ++refused;
      } else {
        ADD_FAILURE() << result.error().message;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(refused.load(), kThreads - 1);
  auto ticket = queues[0]->get(id);
  ASSERT_TRUE(ticket);
  EXPECT_EQ(ticket->status, "answered");
  EXPECT_EQ(ticket->answer, "answer " + ticket->reviewer.substr(8));
}

// Independent handles on one store, each with a connection of its own: the gateway and the
// CLI on one SQLite file, or gateway replicas on one Redis (one RedisClient each).
class ReviewQueueConcurrency : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == StoreBackend::kSqlite) {
      ASSERT_TRUE(dir_.ok());
    } else {
      ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
      prefix_ = unique_prefix();
    }
  }

  // A new handle on the test's store; null (and a failure) when it cannot be opened.
  std::unique_ptr<ReviewQueue> open_handle() {
    if (GetParam() == StoreBackend::kSqlite) {
      auto db = Database::open(dir_.file("tandem.db"));
      if (!db) {
        ADD_FAILURE() << db.error().message;
        return nullptr;
      }
      return std::make_unique<SqliteReviewQueue>(*db);
    }
    auto client = connect_client(shared_redis_server(), prefix_);
    if (!client) {
      ADD_FAILURE() << client.error().message;
      return nullptr;
    }
    return std::make_unique<RedisReviewQueue>(*client);
  }

  TempDir dir_;
  std::string prefix_;
};

INSTANTIATE_TEST_SUITE_P(Backends, ReviewQueueConcurrency,
                         ::testing::Values(StoreBackend::kSqlite, StoreBackend::kRedis),
                         testing::backend_name);

TEST_P(ReviewQueueConcurrency, ConcurrentAnswersExactlyOneWins) {
  auto queue = open_handle();
  ASSERT_TRUE(queue);
  for (int round = 0; round < 5; ++round) {
    auto ticket = queue->create(sample_ticket("race"), round);
    ASSERT_TRUE(ticket);
    race_answers({queue.get()}, ticket->id);
  }
}

TEST_P(ReviewQueueConcurrency, ConcurrentAnswersAcrossConnectionsExactlyOneWins) {
  std::vector<std::unique_ptr<ReviewQueue>> handles;
  std::vector<ReviewQueue*> queues;
  for (int i = 0; i < 4; ++i) {
    handles.push_back(open_handle());
    ASSERT_TRUE(handles.back());
    queues.push_back(handles.back().get());
  }
  for (int round = 0; round < 5; ++round) {
    auto ticket = queues[0]->create(sample_ticket("race"), round);
    ASSERT_TRUE(ticket);
    race_answers(queues, ticket->id);
  }
}

TEST_P(ReviewQueueConcurrency, ConcurrentCreatesAreAllStoredWithUniqueIds) {
  auto handle = open_handle();
  ASSERT_TRUE(handle);
  ReviewQueue& queue = *handle;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 50;
  std::latch start(kThreads);
  std::vector<std::vector<std::string>> ids(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kPerThread; ++i) {
        auto ticket = queue.create(sample_ticket("t" + std::to_string(t)), 1000 + i);
        if (!ticket) {
          ADD_FAILURE() << ticket.error().message;
          return;
        }
        ids[static_cast<size_t>(t)].push_back(ticket->id);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  std::set<std::string> unique;
  for (const auto& per_thread : ids) {
    unique.insert(per_thread.begin(), per_thread.end());
  }
  EXPECT_EQ(unique.size(), static_cast<size_t>(kThreads * kPerThread));
  auto count = queue.count("pending");
  ASSERT_TRUE(count);
  EXPECT_EQ(*count, static_cast<size_t>(kThreads * kPerThread));
  for (const std::string& id : unique) {
    ASSERT_TRUE(queue.get(id)) << id;
  }
}

}  // namespace
}  // namespace tandem::store
