#include "store/audit_log.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace tandem::store {
namespace {

constexpr const char* kInsertSql =
    "INSERT INTO cloud_audit (unix_ms, request_id, client, upstream, model, purpose, bytes, "
    "sha256, content_mode, content, redactions, redacted_detectors) VALUES "
    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
constexpr const char* kSelectSql =
    "SELECT id, unix_ms, request_id, client, upstream, model, purpose, bytes, sha256, "
    "content_mode, content, redactions, redacted_detectors FROM cloud_audit WHERE unix_ms >= ?1 "
    "AND unix_ms < ?2 AND (?3 = '' OR upstream = ?3) ORDER BY id DESC LIMIT ?4";

bool one_of(const std::string& value, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](const char* option) { return value == option; });
}

Status validate(const AuditRecord& r) {
  if (!one_of(r.purpose, {"answer", "verify", "continue", "shadow", "canary", "embeddings"})) {
    return make_error(ErrorCode::kInvalidArgument,
                      "audit purpose must be answer, verify, continue, shadow, canary or "
                      "embeddings, not '" +
                          r.purpose + "'");
  }
  if (!one_of(r.content_mode, {"none", "redacted", "full"})) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "audit content_mode must be none, redacted or full, not '" + r.content_mode + "'");
  }
  if (r.content_mode == "none" && !r.content.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "audit content must be empty when content_mode is none");
  }
  if (r.content.size() > kMaxAuditContentBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "audit content is " + std::to_string(r.content.size()) +
                          " bytes; the limit is " + std::to_string(kMaxAuditContentBytes));
  }
  return {};
}

bool matches(const AuditRecord& r, const AuditQuery& query) {
  return r.unix_ms >= query.since_ms && r.unix_ms < query.until_ms &&
         (query.upstream.empty() || r.upstream == query.upstream);
}

}  // namespace

AuditLog::AuditLog(std::shared_ptr<Database> db) : db_(std::move(db)) {}

std::shared_ptr<AuditLog> AuditLog::in_memory(size_t max_rows) {
  auto log = std::make_shared<AuditLog>(nullptr);
  log->memory_ = std::make_unique<Memory>(std::max<size_t>(max_rows, 1));
  return log;
}

bool AuditLog::persistent() const {
  return db_ != nullptr && db_->path() != ":memory:";
}

Result<int64_t> AuditLog::append(const AuditRecord& r) {
  if (memory_) {
    return append_in_memory(r);
  }
  Connection connection = db_->acquire();
  return append(connection, r);
}

Result<int64_t> AuditLog::append(AuditRecord&& r) {
  if (memory_) {
    return append_in_memory(std::move(r));
  }
  return append(static_cast<const AuditRecord&>(r));
}

Result<int64_t> AuditLog::append_in_memory(AuditRecord row) {
  if (Status status = validate(row); !status) {
    return status.error();
  }
  std::lock_guard lock(memory_->mutex);
  row.id = memory_->next_id++;
  memory_->rows.push_back(std::move(row));
  if (memory_->rows.size() > memory_->max_rows) {
    memory_->rows.pop_front();
  }
  return memory_->rows.back().id;
}

std::vector<AuditRecord> AuditLog::read_in_memory(const AuditQuery& query) {
  std::vector<AuditRecord> out;
  std::lock_guard lock(memory_->mutex);
  for (auto row = memory_->rows.rbegin(); row != memory_->rows.rend() && out.size() < query.limit;
       ++row) {
    if (matches(*row, query)) {
      out.push_back(*row);
    }
  }
  return out;
}

Status AuditLog::check(const AuditRecord& record) {
  return validate(record);
}

Result<int64_t> AuditLog::append(Connection& connection, const AuditRecord& r) {
  if (memory_) {
    return make_error(ErrorCode::kInternal, "the audit in memory takes rows through append()");
  }
  if (Status status = validate(r); !status) {
    return status.error();
  }
  auto stmt = connection.prepare(kInsertSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, r.unix_ms);
  stmt->bind_static(2, r.request_id);
  stmt->bind_static(3, r.client);
  stmt->bind_static(4, r.upstream);
  stmt->bind_static(5, r.model);
  stmt->bind_static(6, r.purpose);
  stmt->bind(7, r.bytes);
  stmt->bind_static(8, r.sha256);
  stmt->bind_static(9, r.content_mode);
  stmt->bind_static(10, r.content);
  stmt->bind(11, r.redactions);
  stmt->bind(12, nlohmann::json(r.redacted_detectors).dump());
  if (Status status = stmt->run(); !status) {
    return status.error();
  }
  return connection.last_insert_rowid();
}

Result<std::vector<AuditRecord>> AuditLog::read(const AuditQuery& query) {
  if (query.limit < 1 || query.limit > 10000) {
    return make_error(ErrorCode::kInvalidArgument, "audit limit must be between 1 and 10000");
  }
  if (memory_) {
    return read_in_memory(query);
  }
  Connection connection = db_->acquire();
  auto stmt = connection.prepare(kSelectSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, query.since_ms);
  stmt->bind(2, query.until_ms);
  stmt->bind(3, query.upstream);
  stmt->bind(4, static_cast<int64_t>(query.limit));
  std::vector<AuditRecord> out;
  Status status = stmt->each_row([&](const Statement& row) {
    AuditRecord r;
    r.id = row.column_int64(0);
    r.unix_ms = row.column_int64(1);
    r.request_id = row.column_text(2);
    r.client = row.column_text(3);
    r.upstream = row.column_text(4);
    r.model = row.column_text(5);
    r.purpose = row.column_text(6);
    r.bytes = row.column_int64(7);
    r.sha256 = row.column_text(8);
    r.content_mode = row.column_text(9);
    r.content = row.column_text(10);
    r.redactions = row.column_int64(11);
    const auto detectors = nlohmann::json::parse(row.column_text(12), nullptr, false);
    if (detectors.is_array()) {
      for (const auto& d : detectors) {
        if (d.is_string()) {
          r.redacted_detectors.push_back(d.get<std::string>());
        }
      }
    }
    out.push_back(std::move(r));
  });
  if (!status) {
    return status.error();
  }
  return out;
}

Result<size_t> AuditLog::count() {
  if (memory_) {
    std::lock_guard lock(memory_->mutex);
    return memory_->rows.size();
  }
  Connection connection = db_->acquire();
  auto n = connection.query_int64("SELECT count(*) FROM cloud_audit");
  if (!n) {
    return n.error();
  }
  return static_cast<size_t>(*n);
}

Result<size_t> AuditLog::prune(uint64_t max_rows) {
  if (memory_) {
    std::lock_guard lock(memory_->mutex);
    const size_t before = memory_->rows.size();
    while (memory_->rows.size() > max_rows) {
      memory_->rows.pop_front();
    }
    return before - memory_->rows.size();
  }
  return prune_oldest_rows(*db_, "cloud_audit", max_rows);
}

}  // namespace tandem::store
