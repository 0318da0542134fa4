#include "store/review_queue.h"

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <utility>

#include <sys/random.h>

#include "store/backend_checks.h"

namespace tandem::store {
namespace {

constexpr std::string_view kIdPrefix = "rev_";
constexpr size_t kIdRandomBytes = 12;  // 96 bits: unguessable, and collisions never happen

// Every query reads the columns in this order; read_ticket() depends on it.
#define TANDEM_TICKET_COLUMNS                                                            \
  "id, status, created_at_ms, updated_at_ms, client, model, request_json, prompt_text, " \
  "reason, decision_json, draft_answer, draft_tier, answer, reviewer"

constexpr const char* kInsertSql =
    "INSERT INTO review_tickets (" TANDEM_TICKET_COLUMNS
    ") VALUES (?1, 'pending', ?2, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, '', '')";
constexpr const char* kGetSql =
    "SELECT " TANDEM_TICKET_COLUMNS " FROM review_tickets WHERE id = ?1";
constexpr const char* kListAllSql = "SELECT " TANDEM_TICKET_COLUMNS
                                    " FROM review_tickets ORDER BY created_at_ms DESC, seq DESC "
                                    "LIMIT ?1";
constexpr const char* kListStatusSql =
    "SELECT " TANDEM_TICKET_COLUMNS
    " FROM review_tickets WHERE status = ?1 ORDER BY created_at_ms DESC, seq DESC LIMIT ?2";
// The status condition makes the check-and-set one atomic statement, so of two reviewers (in
// any threads or processes) exactly one changes the row.
constexpr const char* kResolveSql =
    "UPDATE review_tickets SET status = ?2, answer = ?3, reviewer = ?4, updated_at_ms = ?5 "
    "WHERE id = ?1 AND status = 'pending' RETURNING " TANDEM_TICKET_COLUMNS;
constexpr const char* kCountAllSql = "SELECT count(*) FROM review_tickets";
constexpr const char* kCountStatusSql = "SELECT count(*) FROM review_tickets WHERE status = ?1";

#undef TANDEM_TICKET_COLUMNS

ReviewTicket read_ticket(const Statement& stmt) {
  ReviewTicket ticket;
  ticket.id = stmt.column_text(0);
  ticket.status = stmt.column_text(1);
  ticket.created_at_ms = stmt.column_int64(2);
  ticket.updated_at_ms = stmt.column_int64(3);
  ticket.client = stmt.column_text(4);
  ticket.model = stmt.column_text(5);
  ticket.request_json = stmt.column_text(6);
  ticket.prompt_text = stmt.column_text(7);
  ticket.reason = stmt.column_text(8);
  ticket.decision_json = stmt.column_text(9);
  ticket.draft_answer = stmt.column_text(10);
  ticket.draft_tier = stmt.column_text(11);
  ticket.answer = stmt.column_text(12);
  ticket.reviewer = stmt.column_text(13);
  return ticket;
}

// One ticket by id on a connection the caller holds; kNotFound naming the id.
Result<ReviewTicket> fetch_ticket(Connection& connection, const std::string& id) {
  auto stmt = connection.prepare(kGetSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, id);
  auto row = stmt->step();
  if (!row) {
    return row.error();
  }
  if (!*row) {
    return internal::no_such_ticket(id);
  }
  return read_ticket(*stmt);
}

}  // namespace

bool is_review_ticket_id(std::string_view id) {
  if (id.size() != kIdPrefix.size() + 2 * kIdRandomBytes || id.substr(0, 4) != kIdPrefix) {
    return false;
  }
  for (char c : id.substr(kIdPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

// ---- checks shared with the Redis queue (store/backend_checks.h) ----

namespace internal {
namespace {

Status check_size(std::string_view field, const std::string& value, size_t max) {
  if (value.size() > max) {
    return make_error(ErrorCode::kInvalidArgument,
                      std::string(field) + " is " + std::to_string(value.size()) +
                          " bytes; a review ticket keeps at most " + std::to_string(max));
  }
  return {};
}

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

Result<std::string> new_ticket_id() {
  unsigned char bytes[kIdRandomBytes];
  size_t filled = 0;
  while (filled < sizeof(bytes)) {
    const ssize_t got = ::getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      return make_error(ErrorCode::kInternal,
                        "cannot draw a random ticket id: " + errno_message(errno));
    }
    filled += static_cast<size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(kIdPrefix);
  for (unsigned char byte : bytes) {
    id.push_back(kHex[byte >> 4]);
    id.push_back(kHex[byte & 0xf]);
  }
  return id;
}

std::string quoted(std::string_view text) {
  constexpr size_t kMaxEcho = 64;
  if (text.size() <= kMaxEcho) {
    return "'" + std::string(text) + "'";
  }
  return "'" + std::string(text.substr(0, kMaxEcho)) + "…'";
}

Status check_ticket_id(std::string_view id) {
  if (!is_review_ticket_id(id)) {
    return make_error(ErrorCode::kInvalidArgument, "not a review ticket id: " + quoted(id));
  }
  return {};
}

Status check_new_ticket(const NewTicket& ticket) {
  const std::pair<std::string_view, const std::string*> names[] = {{"client", &ticket.client},
                                                                   {"model", &ticket.model}};
  for (const auto& [field, value] : names) {
    if (Status status = check_size(field, *value, kMaxTicketNameBytes); !status) {
      return status;
    }
  }
  const std::pair<std::string_view, const std::string*> texts[] = {
      {"reason", &ticket.reason},
      {"decision_json", &ticket.decision_json},
      {"draft_answer", &ticket.draft_answer}};
  for (const auto& [field, value] : texts) {
    if (Status status = check_size(field, *value, kMaxTicketTextBytes); !status) {
      return status;
    }
  }
  const std::pair<std::string_view, const std::string*> requests[] = {
      {"request_json", &ticket.request_json}, {"prompt_text", &ticket.prompt_text}};
  for (const auto& [field, value] : requests) {
    if (Status status = check_size(field, *value, kMaxTicketRequestBytes); !status) {
      return status;
    }
  }
  if (ticket.draft_tier != "edge" && ticket.draft_tier != "cloud" && !ticket.draft_tier.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "draft_tier must be edge, cloud or empty, not " + quoted(ticket.draft_tier));
  }
  return {};
}

ReviewTicket pending_ticket(std::string id, const NewTicket& ticket, int64_t now_ms) {
  ReviewTicket stored;
  stored.id = std::move(id);
  stored.status = "pending";
  stored.created_at_ms = stored.updated_at_ms = now_ms;
  stored.client = ticket.client;
  stored.model = ticket.model;
  stored.request_json = ticket.request_json;
  stored.prompt_text = ticket.prompt_text;
  stored.reason = ticket.reason;
  stored.decision_json = ticket.decision_json;
  stored.draft_answer = ticket.draft_answer;
  stored.draft_tier = ticket.draft_tier;
  return stored;
}

Status check_status_filter(const std::string& status) {
  if (status.empty() || status == "pending" || status == "answered" || status == "rejected") {
    return {};
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "unknown ticket status " + quoted(status) +
                        " (expected pending, answered, rejected or empty for all)");
}

Status check_list_limit(size_t limit) {
  if (limit < 1 || limit > kMaxTicketListLimit) {
    return make_error(ErrorCode::kInvalidArgument, "list limit must be 1.." +
                                                       std::to_string(kMaxTicketListLimit) +
                                                       ", not " + std::to_string(limit));
  }
  return {};
}

Status check_answer_text(const std::string& id, const std::string& text) {
  if (is_blank(text)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the answer to ticket " + quoted(id) + " is empty; write the answer text");
  }
  return {};
}

Status check_resolution(const std::string& id, std::string_view new_status, const std::string& text,
                        const std::string& reviewer) {
  if (Status status = check_ticket_id(id); !status) {
    return status;
  }
  if (reviewer.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "a reviewer name is required to resolve ticket " + id);
  }
  if (Status status = check_size("reviewer", reviewer, kMaxTicketNameBytes); !status) {
    return status;
  }
  return check_size(new_status == "answered" ? "answer" : "rejection note", text,
                    kMaxTicketTextBytes);
}

Error already_resolved(const std::string& id, const std::string& status,
                       const std::string& reviewer, int64_t updated_at_ms) {
  return make_error(ErrorCode::kInvalidArgument, "ticket " + id + " was already " + status +
                                                     " by " + reviewer + " at " +
                                                     format_utc(updated_at_ms));
}

Error no_such_ticket(const std::string& id) {
  return make_error(ErrorCode::kNotFound, "no review ticket " + id);
}

std::string format_utc(int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  if (gmtime_r(&seconds, &tm) == nullptr) {
    return std::to_string(ms) + " ms";
  }
  char text[40];
  const size_t n = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  char millis[8];
  std::snprintf(millis, sizeof(millis), ".%03dZ", static_cast<int>(ms % 1000));
  return std::string(text, n) + millis;
}

}  // namespace internal

// ---- SqliteReviewQueue ----

SqliteReviewQueue::SqliteReviewQueue(std::shared_ptr<Database> db) : db_(std::move(db)) {}

Result<ReviewTicket> SqliteReviewQueue::create(const NewTicket& ticket, int64_t now_ms) {
  if (Status status = internal::check_new_ticket(ticket); !status) {
    return status.error();
  }
  auto id = internal::new_ticket_id();
  if (!id) {
    return id.error();
  }

  Connection connection = db_->acquire();
  auto stmt = connection.prepare(kInsertSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, *id);
  stmt->bind(2, now_ms);
  stmt->bind(3, ticket.client);
  stmt->bind(4, ticket.model);
  stmt->bind(5, ticket.request_json);
  stmt->bind(6, ticket.prompt_text);
  stmt->bind(7, ticket.reason);
  stmt->bind(8, ticket.decision_json);
  stmt->bind(9, ticket.draft_answer);
  stmt->bind(10, ticket.draft_tier);
  if (Status status = stmt->run(); !status) {
    return status.error();
  }

  ReviewTicket stored = internal::pending_ticket(std::move(*id), ticket, now_ms);
  return stored;
}

Result<ReviewTicket> SqliteReviewQueue::get(const std::string& id) {
  if (Status status = internal::check_ticket_id(id); !status) {
    return status.error();
  }
  Connection connection = db_->acquire();
  return fetch_ticket(connection, id);
}

Result<std::vector<ReviewTicket>> SqliteReviewQueue::list(const std::string& status, size_t limit) {
  if (Status valid = internal::check_status_filter(status); !valid) {
    return valid.error();
  }
  if (Status valid = internal::check_list_limit(limit); !valid) {
    return valid.error();
  }
  Connection connection = db_->acquire();
  auto stmt = connection.prepare(status.empty() ? kListAllSql : kListStatusSql);
  if (!stmt) {
    return stmt.error();
  }
  if (status.empty()) {
    stmt->bind(1, static_cast<int64_t>(limit));
  } else {
    stmt->bind(1, status);
    stmt->bind(2, static_cast<int64_t>(limit));
  }
  std::vector<ReviewTicket> tickets;
  for (;;) {
    auto row = stmt->step();
    if (!row) {
      return row.error();
    }
    if (!*row) {
      return tickets;
    }
    tickets.push_back(read_ticket(*stmt));
  }
}

Result<ReviewTicket> SqliteReviewQueue::answer(const std::string& id, const std::string& text,
                                               const std::string& reviewer, int64_t now_ms) {
  if (Status status = internal::check_answer_text(id, text); !status) {
    return status.error();
  }
  return resolve(id, "answered", text, reviewer, now_ms);
}

Result<ReviewTicket> SqliteReviewQueue::reject(const std::string& id, const std::string& note,
                                               const std::string& reviewer, int64_t now_ms) {
  return resolve(id, "rejected", note, reviewer, now_ms);
}

Result<ReviewTicket> SqliteReviewQueue::resolve(const std::string& id, std::string_view new_status,
                                                const std::string& text,
                                                const std::string& reviewer, int64_t now_ms) {
  if (Status status = internal::check_resolution(id, new_status, text, reviewer); !status) {
    return status.error();
  }

  Connection connection = db_->acquire();
  {
    auto stmt = connection.prepare(kResolveSql);
    if (!stmt) {
      return stmt.error();
    }
    stmt->bind(1, id);
    stmt->bind(2, new_status);
    stmt->bind(3, text);
    stmt->bind(4, reviewer);
    stmt->bind(5, now_ms);
    auto row = stmt->step();
    if (!row) {
      return row.error();
    }
    if (*row) {
      ReviewTicket ticket = read_ticket(*stmt);
      // Finish the statement so its autocommit transaction commits before we report success.
      if (Status status = stmt->run(); !status) {
        return status.error();
      }
      return ticket;
    }
  }

  // Nothing changed: say why — no such ticket, or someone resolved it first.
  auto found = fetch_ticket(connection, id);
  if (!found) {
    return found.error();
  }
  const ReviewTicket& current = found.value();
  return internal::already_resolved(id, current.status, current.reviewer, current.updated_at_ms);
}

Result<size_t> SqliteReviewQueue::count(const std::string& status) {
  if (Status valid = internal::check_status_filter(status); !valid) {
    return valid.error();
  }
  Connection connection = db_->acquire();
  auto stmt = connection.prepare(status.empty() ? kCountAllSql : kCountStatusSql);
  if (!stmt) {
    return stmt.error();
  }
  if (!status.empty()) {
    stmt->bind(1, status);
  }
  auto row = stmt->step();
  if (!row) {
    return row.error();
  }
  return static_cast<size_t>(*row ? stmt->column_int64(0) : 0);
}

}  // namespace tandem::store
