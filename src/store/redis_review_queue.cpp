#include "store/redis_review_queue.h"

#include <cinttypes>
#include <cstdio>
#include <utility>

#include "store/backend_checks.h"

namespace tandem::store {
namespace {

// A ticket's hash fields, in the order read_ticket() expects; the scripts receive them as
// arguments, so this list is the only place that names them.
constexpr const char* kFields[] = {"id",     "status",        "created",      "updated",
                                   "client", "model",         "request_json", "prompt_text",
                                   "reason", "decision_json", "draft_answer", "draft_tier",
                                   "answer", "reviewer"};
constexpr size_t kFieldCount = sizeof(kFields) / sizeof(kFields[0]);

// The scripts are function-local statics, built on first use rather than before main(), where
// a failed allocation could not be caught.

// KEYS: ticket, sequence, index of all, index of pending. ARGV: the order member's creation
// part, the id, then field/value pairs. Returns the sequence number.
const RedisScript& create_script() {
  static const RedisScript script{"review_create", R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('ERR review ticket id already taken')
end
local seq = redis.call('INCR', KEYS[2])
local order = ARGV[1] .. string.format('%016x', seq) .. ARGV[2]
redis.call('HSET', KEYS[1], 'order', order, unpack(ARGV, 3))
redis.call('ZADD', KEYS[3], 0, order)
redis.call('ZADD', KEYS[4], 0, order)
return seq
)lua"};
  return script;
}

// KEYS: ticket, index of pending, index of the new status. ARGV: new status, text, reviewer,
// now_ms, then the fields to return. The status test and the update happen in one script, so
// exactly one of concurrent resolutions changes the ticket.
const RedisScript& resolve_script() {
  static const RedisScript script{"review_resolve", R"lua(
local current = redis.call('HMGET', KEYS[1], 'status', 'reviewer', 'updated')
if not current[1] then
  return {'missing'}
end
if current[1] ~= 'pending' then
  return {'resolved', current[1], current[2], current[3]}
end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'answer', ARGV[2], 'reviewer', ARGV[3],
           'updated', ARGV[4])
local order = redis.call('HGET', KEYS[1], 'order')
redis.call('ZREM', KEYS[2], order)
redis.call('ZADD', KEYS[3], 0, order)
return {'ok', redis.call('HMGET', KEYS[1], unpack(ARGV, 5))}
)lua"};
  return script;
}

// KEYS: an index. ARGV: limit, the ticket key prefix, then the fields to return. One script,
// so that a listing is a consistent snapshot (no ticket appears under a status it just left).
// An index member is created (16 hex digits) + sequence (16) + id: the id starts at byte 33.
const RedisScript& list_script() {
  static const RedisScript script{"review_list", R"lua(
local members = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
local out = {}
for i, member in ipairs(members) do
  out[i] = redis.call('HMGET', ARGV[2] .. string.sub(member, 33), unpack(ARGV, 3))
end
return out
)lua"};
  return script;
}

// The creation part of an index member: created_at_ms with its sign bit flipped, in 16 hex
// digits, so that byte order is numeric order for every int64.
std::string order_prefix(int64_t created_at_ms) {
  const uint64_t biased = static_cast<uint64_t>(created_at_ms) ^ (uint64_t{1} << 63);
  char text[17];
  std::snprintf(text, sizeof(text), "%016" PRIx64, biased);
  return std::string(text, 16);
}

Error damaged(std::string_view what) {
  return make_error(ErrorCode::kInternal,
                    "redis holds a damaged review ticket (" + std::string(what) + ")");
}

Result<int64_t> to_int64(const RedisReply& reply, std::string_view what) {
  const auto value = reply.as_int64();
  if (!value) {
    return damaged(what);
  }
  return *value;
}

// A ticket from HMGET of kFields; nullopt-like kNotFound when the hash does not exist.
Result<ReviewTicket> read_ticket(const RedisReply& reply, const std::string& id) {
  if (!reply.is_array() || reply.elements.size() != kFieldCount) {
    return damaged("unexpected reply shape");
  }
  const auto& f = reply.elements;
  if (f[0].is_nil()) {
    return internal::no_such_ticket(id);
  }
  for (const RedisReply& field : f) {
    if (!field.is_string()) {
      return damaged("a missing field");
    }
  }
  ReviewTicket ticket;
  ticket.id = f[0].text;
  ticket.status = f[1].text;
  auto created = to_int64(f[2], "created");
  auto updated = to_int64(f[3], "updated");
  if (!created || !updated) {
    return created ? updated.error() : created.error();
  }
  ticket.created_at_ms = *created;
  ticket.updated_at_ms = *updated;
  ticket.client = f[4].text;
  ticket.model = f[5].text;
  ticket.request_json = f[6].text;
  ticket.prompt_text = f[7].text;
  ticket.reason = f[8].text;
  ticket.decision_json = f[9].text;
  ticket.draft_answer = f[10].text;
  ticket.draft_tier = f[11].text;
  ticket.answer = f[12].text;
  ticket.reviewer = f[13].text;
  return ticket;
}

}  // namespace

RedisReviewQueue::RedisReviewQueue(std::shared_ptr<RedisClient> client)
    : client_(std::move(client)) {}

std::string RedisReviewQueue::ticket_key(const std::string& id) const {
  return client_->key("rq:t:" + id);
}

std::string RedisReviewQueue::index_key(std::string_view status) const {
  return client_->key("rq:i:" + std::string(status.empty() ? "all" : status));
}

Result<ReviewTicket> RedisReviewQueue::create(const NewTicket& ticket, int64_t now_ms) {
  if (Status status = internal::check_new_ticket(ticket); !status) {
    return status.error();
  }
  auto id = internal::new_ticket_id();
  if (!id) {
    return id.error();
  }
  ReviewTicket stored = internal::pending_ticket(std::move(*id), ticket, now_ms);

  const std::string now = std::to_string(now_ms);
  const std::vector<std::string> args = {order_prefix(now_ms),
                                         stored.id,
                                         "id",
                                         stored.id,
                                         "status",
                                         stored.status,
                                         "created",
                                         now,
                                         "updated",
                                         now,
                                         "client",
                                         stored.client,
                                         "model",
                                         stored.model,
                                         "request_json",
                                         stored.request_json,
                                         "prompt_text",
                                         stored.prompt_text,
                                         "reason",
                                         stored.reason,
                                         "decision_json",
                                         stored.decision_json,
                                         "draft_answer",
                                         stored.draft_answer,
                                         "draft_tier",
                                         stored.draft_tier,
                                         "answer",
                                         "",
                                         "reviewer",
                                         ""};
  auto reply = client_->eval(
      create_script(),
      {ticket_key(stored.id), client_->key("rq:seq"), index_key(""), index_key("pending")}, args);
  if (!reply) {
    return reply.error();
  }
  return stored;
}

Result<ReviewTicket> RedisReviewQueue::get(const std::string& id) {
  if (Status status = internal::check_ticket_id(id); !status) {
    return status.error();
  }
  std::vector<std::string> argv = {"HMGET", ticket_key(id)};
  for (const char* field : kFields) {
    argv.emplace_back(field);
  }
  auto reply = client_->command(argv);
  if (!reply) {
    return reply.error();
  }
  return read_ticket(*reply, id);
}

Result<std::vector<ReviewTicket>> RedisReviewQueue::list(const std::string& status, size_t limit) {
  if (Status valid = internal::check_status_filter(status); !valid) {
    return valid.error();
  }
  if (Status valid = internal::check_list_limit(limit); !valid) {
    return valid.error();
  }
  std::vector<std::string> args = {std::to_string(limit), client_->key("rq:t:")};
  for (const char* field : kFields) {
    args.emplace_back(field);
  }
  auto reply = client_->eval(list_script(), {index_key(status)}, args);
  if (!reply) {
    return reply.error();
  }
  if (!reply->is_array()) {
    return damaged("unexpected list reply");
  }
  std::vector<ReviewTicket> tickets;
  tickets.reserve(reply->elements.size());
  for (const RedisReply& entry : reply->elements) {
    auto ticket = read_ticket(entry, "");
    if (!ticket) {
      // An index entry without its hash cannot be made by the scripts; skip it rather than
      // failing the whole listing.
      if (ticket.error().code == ErrorCode::kNotFound) {
        continue;
      }
      return ticket.error();
    }
    tickets.push_back(std::move(ticket).value());
  }
  return tickets;
}

Result<ReviewTicket> RedisReviewQueue::answer(const std::string& id, const std::string& text,
                                              const std::string& reviewer, int64_t now_ms) {
  if (Status status = internal::check_answer_text(id, text); !status) {
    return status.error();
  }
  return resolve(id, "answered", text, reviewer, now_ms);
}

Result<ReviewTicket> RedisReviewQueue::reject(const std::string& id, const std::string& note,
                                              const std::string& reviewer, int64_t now_ms) {
  return resolve(id, "rejected", note, reviewer, now_ms);
}

Result<ReviewTicket> RedisReviewQueue::resolve(const std::string& id, std::string_view new_status,
                                               const std::string& text, const std::string& reviewer,
                                               int64_t now_ms) {
  if (Status status = internal::check_resolution(id, new_status, text, reviewer); !status) {
    return status.error();
  }
  std::vector<std::string> args = {std::string(new_status), text, reviewer, std::to_string(now_ms)};
  for (const char* field : kFields) {
    args.emplace_back(field);
  }
  auto reply = client_->eval(resolve_script(),
                             {ticket_key(id), index_key("pending"), index_key(new_status)}, args);
  if (!reply) {
    return reply.error();
  }
  const auto& parts = reply->elements;
  if (!reply->is_array() || parts.empty() || !parts[0].is_string()) {
    return damaged("unexpected resolve reply");
  }
  const std::string& outcome = parts[0].text;
  if (outcome == "missing") {
    return internal::no_such_ticket(id);
  }
  if (outcome == "resolved" && parts.size() == 4) {
    auto updated = to_int64(parts[3], "updated");
    if (!updated) {
      return updated.error();
    }
    return internal::already_resolved(id, parts[1].text, parts[2].text, *updated);
  }
  if (outcome == "ok" && parts.size() == 2) {
    return read_ticket(parts[1], id);
  }
  return damaged("unexpected resolve reply");
}

Result<size_t> RedisReviewQueue::count(const std::string& status) {
  if (Status valid = internal::check_status_filter(status); !valid) {
    return valid.error();
  }
  auto reply = client_->command({"ZCARD", index_key(status)});
  if (!reply) {
    return reply.error();
  }
  if (!reply->is_integer() || reply->integer < 0) {
    return damaged("unexpected count reply");
  }
  return static_cast<size_t>(reply->integer);
}

}  // namespace tandem::store
