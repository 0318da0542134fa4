#pragma once
// The review queue in Redis, for several gateway replicas (and `tandem review`) sharing one
// queue. Semantics are those of ReviewQueue, identical to SqliteReviewQueue: the same checks,
// ids, ordering and messages.
//
// Layout, under the client's prefix P:
//   P rq:t:<id>        a hash with the ticket's fields, and `order` (its index member)
//   P rq:seq           a counter: the creation sequence, which breaks ties in created_at_ms
//   P rq:i:all         a sorted set of every ticket's order member
//   P rq:i:<status>    the same for each status (pending, answered, rejected)
// Index members all score 0 and sort by their bytes: 16 hex digits of created_at_ms (sign bit
// flipped, so negative times sort first), 16 of the sequence, then the id; ZREVRANGE therefore
// lists newest first, the later created first within a millisecond, exactly for every int64.
//
// Atomicity: create(), answer()/reject() and list() are each one Lua script, which Redis runs
// without interleaving any other command. The resolving script changes a ticket only while its
// status is "pending", so of several concurrent answers from any replicas exactly one wins, and
// the others get the winner's name and time in the same message the SQLite queue gives.
//
// Durability: tickets never expire, but they survive a Redis restart only as far as the
// server's persistence (AOF with appendfsync everysec or always) keeps them; the SQLite queue
// commits before create() returns.
//
// Thread-safety: as the RedisClient it holds (any thread; calls share its connection).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/redis_client.h"
#include "store/review_queue.h"

namespace tandem::store {

class RedisReviewQueue final : public ReviewQueue {
 public:
  // Keys go under client->prefix(); replicas that share a prefix share the queue.
  explicit RedisReviewQueue(std::shared_ptr<RedisClient> client);

  const char* backend() const override { return "redis"; }
  Result<ReviewTicket> create(const NewTicket& ticket, int64_t now_ms) override;
  Result<ReviewTicket> get(const std::string& id) override;
  Result<std::vector<ReviewTicket>> list(const std::string& status, size_t limit) override;
  Result<ReviewTicket> answer(const std::string& id, const std::string& text,
                              const std::string& reviewer, int64_t now_ms) override;
  Result<ReviewTicket> reject(const std::string& id, const std::string& note,
                              const std::string& reviewer, int64_t now_ms) override;
  Result<size_t> count(const std::string& status) override;

 private:
  Result<ReviewTicket> resolve(const std::string& id, std::string_view new_status,
                               const std::string& text, const std::string& reviewer,
                               int64_t now_ms);
  std::string ticket_key(const std::string& id) const;
  std::string index_key(std::string_view status) const;  // "" for all

  std::shared_ptr<RedisClient> client_;
};

}  // namespace tandem::store
