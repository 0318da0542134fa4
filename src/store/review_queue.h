#pragma once
// The human tier: queries that neither the edge nor the cloud answers confidently (or that a
// rule sends to a person) wait here as tickets until a reviewer answers or rejects them. The
// client receives `pending_review` and the ticket id, and polls.
//
// ReviewQueue is the interface; two backends implement it with identical semantics:
// SqliteReviewQueue (below: one gateway, or a gateway and `tandem review` sharing a file) and
// RedisReviewQueue (store/redis_review_queue.h: several gateway replicas sharing one Redis).
//
// Thread-safety: every method of every implementation may be called from any thread, and
// answer()/reject() are atomic even across processes sharing the store.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace tandem::store {

// Size limits on what a ticket stores; larger values are refused with kInvalidArgument rather
// than truncated, so nothing a reviewer sees differs from what the client sent.
inline constexpr size_t kMaxTicketRequestBytes = 4u << 20;  // request_json, prompt_text
inline constexpr size_t kMaxTicketTextBytes = 1u << 20;     // reason, decision, drafts, answers
inline constexpr size_t kMaxTicketNameBytes = 1024;         // client, model, reviewer
inline constexpr size_t kMaxTicketListLimit = 1000;

struct NewTicket {
  std::string client;         // client id / api key name ("" anonymous)
  std::string model;          // the public model the client asked for
  std::string request_json;   // the client's request body (kept to answer it later)
  std::string prompt_text;    // the last user message, for reviewers' listing
  std::string reason;         // why it needs a human
  std::string decision_json;  // the routing decision record so far
  std::string draft_answer;   // the best machine answer so far (may be empty)
  std::string draft_tier;     // "edge" / "cloud" / ""
};

struct ReviewTicket {
  std::string id;      // "rev_" + 24 lower-case hex digits (96 bits from getrandom())
  std::string status;  // "pending" | "answered" | "rejected"
  int64_t created_at_ms = 0, updated_at_ms = 0;
  std::string client, model, request_json, prompt_text, reason, decision_json, draft_answer,
      draft_tier;
  std::string answer;  // the reviewer's answer (answered) or rejection note (rejected)
  std::string reviewer;
};

// Whether `id` has the form of a ticket id: rev_[0-9a-f]{24}.
bool is_review_ticket_id(std::string_view id);

class ReviewQueue {
 public:
  virtual ~ReviewQueue() = default;

  // "sqlite" or "redis": which store holds the tickets, for logs and /health.
  virtual const char* backend() const = 0;

  // Stores a new pending ticket with a fresh random id; it is stored before create() returns.
  // kInvalidArgument for a field over its size limit or a draft_tier other than "edge",
  // "cloud" or "".
  virtual Result<ReviewTicket> create(const NewTicket& ticket, int64_t now_ms) = 0;

  // kInvalidArgument for a malformed id; kNotFound naming the id when there is no such ticket.
  virtual Result<ReviewTicket> get(const std::string& id) = 0;

  // Newest first (ties in the creation time: the later created first). `status` is "" for
  // all, or one status; `limit` is 1..kMaxTicketListLimit; anything else is kInvalidArgument.
  // Tickets come whole, request_json included.
  virtual Result<std::vector<ReviewTicket>> list(const std::string& status, size_t limit) = 0;

  // Answers a pending ticket with `text` (not blank) on behalf of `reviewer` (not empty).
  // A ticket that was already answered or rejected is refused with kInvalidArgument — not
  // retryable, the request conflicts with the ticket's state — and the message "ticket rev_…
  // was already answered by <reviewer> at <UTC time>" (or "rejected"). kNotFound when there is
  // no such ticket. Exactly one of several concurrent answers succeeds.
  virtual Result<ReviewTicket> answer(const std::string& id, const std::string& text,
                                      const std::string& reviewer, int64_t now_ms) = 0;

  // Rejects a pending ticket; `note` (may be empty) tells the client why. Errors as answer().
  virtual Result<ReviewTicket> reject(const std::string& id, const std::string& note,
                                      const std::string& reviewer, int64_t now_ms) = 0;

  // Tickets with `status` ("" for all); kInvalidArgument for an unknown status.
  virtual Result<size_t> count(const std::string& status) = 0;
};

// Tickets in SQLite, committed before create() returns, so none is lost across restarts. The
// Database serialises calls; answer()/reject() are one conditional UPDATE, atomic across
// processes sharing the file.
class SqliteReviewQueue final : public ReviewQueue {
 public:
  explicit SqliteReviewQueue(std::shared_ptr<Database> db);

  const char* backend() const override { return "sqlite"; }
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

  std::shared_ptr<Database> db_;
};

}  // namespace tandem::store
