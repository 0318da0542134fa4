#pragma once
// Internal to the store library: the argument checks and helpers that the SQLite and Redis
// backends of the review queue and the routing memory share, so that both refuse exactly the
// same input with exactly the same messages, and draw ticket ids from one generator. The review
// queue's are defined in review_queue.cpp, the routing memory's in consistency_memory.cpp.
//
// Thread-safety: every function is pure or, for new_ticket_id(), uses only getrandom().

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/review_queue.h"

namespace tandem::store::internal {

// ---- review queue ----

// A fresh ticket id, "rev_" + 24 lower-case hex digits from getrandom(); kInternal when the
// kernel cannot supply randomness.
Result<std::string> new_ticket_id();

// `text` in single quotes, cut to 64 bytes plus "…", so a caller's huge value cannot flood a
// message.
std::string quoted(std::string_view text);

// kInvalidArgument "not a review ticket id: '…'" unless is_review_ticket_id(id).
Status check_ticket_id(std::string_view id);

// What create() refuses: a field over its size limit, a draft_tier other than edge/cloud/"".
Status check_new_ticket(const NewTicket& ticket);

// The ticket create() stores and returns: pending, created and updated at now_ms.
ReviewTicket pending_ticket(std::string id, const NewTicket& ticket, int64_t now_ms);

// list()'s and count()'s filter: "" or one of the three statuses.
Status check_status_filter(const std::string& status);

// list()'s limit: 1..kMaxTicketListLimit.
Status check_list_limit(size_t limit);

// answer()'s refusal of a blank answer (checked before anything else, as the SQLite queue
// always has).
Status check_answer_text(const std::string& id, const std::string& text);

// What answer()/reject() refuse before looking at the ticket: a malformed id, an empty or
// oversized reviewer, an oversized answer or note. `new_status` is "answered" or "rejected".
Status check_resolution(const std::string& id, std::string_view new_status, const std::string& text,
                        const std::string& reviewer);

// The refusal of a second answer or rejection: kInvalidArgument "ticket rev_… was already
// <status> by <reviewer> at <UTC time>".
Error already_resolved(const std::string& id, const std::string& status,
                       const std::string& reviewer, int64_t updated_at_ms);

// kNotFound "no review ticket rev_…".
Error no_such_ticket(const std::string& id);

// "2026-11-30T04:50:01.123Z", for messages people read.
std::string format_utc(int64_t ms);

// ---- routing memory ----

// At most kMaxClusterKeys keys.
Status check_cluster_keys(const std::vector<uint64_t>& keys);

// A client id of at most 1 KiB.
Status check_memory_client(const std::string& client);

// remember()'s tier (edge/cloud/human), positive ttl and reason of at most 64 KiB.
Status check_route(const std::string& tier, const std::string& reason, int64_t ttl_ms);

// Every check lookup() makes, in order: the keys, the client.
Status check_lookup(const std::string& client, const std::vector<uint64_t>& keys);

// Every check remember() makes, in order: the keys, the client, the route.
Status check_remember(const std::string& client, const std::vector<uint64_t>& keys,
                      const std::string& tier, const std::string& reason, int64_t ttl_ms);

// now_ms + ttl_ms, saturating at INT64_MAX instead of overflowing ("remember for ever").
int64_t route_expiry(int64_t now_ms, int64_t ttl_ms);

}  // namespace tandem::store::internal
