#include "store/trace_log.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include <sqlite3.h>

#include "common/answer_match.h"
#include "common/json_writer.h"

namespace tandem::store {
namespace {

using nlohmann::json;

// Column order of kInsertSql and kSelectColumns; read_row() and bind_row() follow it.
constexpr const char* kColumns =
    "unix_ms, request_id, client, model, pattern, tier, kind, reason_codes, privacy_detectors, "
    "review_rules, privacy_header, key_local_only, review_header, latency_budget_ms, "
    "requested_pattern, cloud_only_fields, features, complexity, confidence_tokens, "
    "confidence_mean_logprob, confidence_min_logprob, confidence_mean_entropy, "
    "confidence_mean_margin, confidence_combined, confidence_threshold, escalated, cost_edge, "
    "cost_cloud, cost_all_cloud, prompt_tokens, edge_tokens, cloud_tokens, latency_ms, "
    "data_left_device, edge_model, cloud_model, ticket, edge_answer_hash, edge_good, "
    "label_source, edge_sha256, cloud_upstream, ttft_ms";
constexpr int kColumnCount = 43;

const std::string& insert_sql() {
  static const std::string sql = [] {
    std::string placeholders;
    for (int i = 1; i <= kColumnCount; ++i) {
      placeholders += (i == 1 ? "?" : ", ?") + std::to_string(i);
    }
    return std::string("INSERT INTO traces (") + kColumns + ") VALUES (" + placeholders + ")";
  }();
  return sql;
}

// The three shapes of read()'s query; the text holds only placeholders, never values.
std::string select_sql(bool labelled_only, bool newest_first) {
  return std::string("SELECT id, ") + kColumns +
         " FROM traces WHERE unix_ms >= ?1 AND unix_ms < ?2" +
         (labelled_only ? " AND edge_good IS NOT NULL" : "") + " ORDER BY id " +
         (newest_first ? "DESC" : "ASC") + " LIMIT ?3";
}

constexpr const char* kLabelTicketSql =
    "UPDATE traces SET edge_good = (edge_answer_hash = ?2), label_source = 'review' "
    "WHERE ticket = ?1 AND ticket != '' AND edge_answer_hash != ''";
constexpr const char* kLabelRequestSql =
    "UPDATE traces SET edge_good = ?2, label_source = ?3 WHERE request_id = ?1";
constexpr const char* kCountSql = "SELECT count(*) FROM traces";

bool valid_source(const std::string& source) {
  return source == "verification" || source == "review" || source == "shadow";
}

Error invalid(const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument, "trace: " + message);
}

Status check_name(const std::string& value, const char* field) {
  if (value.size() > kMaxTraceNameBytes) {
    return invalid(std::string(field) + " is " + std::to_string(value.size()) +
                   " bytes; a trace keeps at most " + std::to_string(kMaxTraceNameBytes));
  }
  return {};
}

Status check_list(const std::vector<std::string>& values, const char* field) {
  if (values.size() > kMaxTraceListItems) {
    return invalid(std::string(field) + " has " + std::to_string(values.size()) +
                   " entries; a trace keeps at most " + std::to_string(kMaxTraceListItems));
  }
  for (const auto& value : values) {
    if (Status status = check_name(value, field); !status) {
      return status;
    }
  }
  return {};
}

Status check_finite(double value, const char* field) {
  if (!std::isfinite(value)) {
    return invalid(std::string(field) + " is not a finite number");
  }
  return {};
}

Status validate(const TraceRecord& r) {
  if (r.tier != "edge" && r.tier != "cloud" && r.tier != "human" && r.tier != "none") {
    return invalid("tier must be edge, cloud, human or none, not '" + r.tier + "'");
  }
  if (r.edge_good && !valid_source(r.label_source)) {
    return invalid("label_source must be verification, review or shadow, not '" + r.label_source +
                   "'");
  }
  if (!r.edge_good && !r.label_source.empty()) {
    return invalid("label_source '" + r.label_source + "' without a label (edge_good)");
  }
  const std::pair<const std::string*, const char*> names[] = {
      {&r.request_id, "request_id"},
      {&r.client, "client"},
      {&r.model, "model"},
      {&r.pattern, "pattern"},
      {&r.kind, "kind"},
      {&r.hints.pattern, "hints.pattern"},
      {&r.edge_model, "edge_model"},
      {&r.cloud_model, "cloud_model"},
      {&r.edge_sha256, "edge_sha256"},
      {&r.cloud_upstream, "cloud_upstream"},
      {&r.ticket, "ticket"},
      {&r.edge_answer_hash, "edge_answer_hash"}};
  for (const auto& [value, field] : names) {
    if (Status status = check_name(*value, field); !status) {
      return status;
    }
  }
  const std::pair<const std::vector<std::string>*, const char*> lists[] = {
      {&r.reason_codes, "reason_codes"},
      {&r.privacy_detectors, "privacy_detectors"},
      {&r.review_rules, "review_rules"},
      {&r.hints.cloud_only_fields, "hints.cloud_only_fields"}};
  for (const auto& [values, field] : lists) {
    if (Status status = check_list(*values, field); !status) {
      return status;
    }
  }
  if (r.features.size() > kMaxTraceListItems) {
    return invalid("features has " + std::to_string(r.features.size()) +
                   " values; a trace keeps at most " + std::to_string(kMaxTraceListItems));
  }
  for (float f : r.features) {
    if (!std::isfinite(f)) {
      return invalid("features hold a value that is not a finite number");
    }
  }
  const TraceConfidence c = r.confidence.value_or(TraceConfidence{});
  const std::pair<double, const char*> numbers[] = {
      {r.complexity, "complexity"},
      {r.cost_edge, "cost_edge"},
      {r.cost_cloud, "cost_cloud"},
      {r.cost_all_cloud.value_or(0.0), "cost_all_cloud"},
      {r.latency_ms, "latency_ms"},
      {r.ttft_ms, "ttft_ms"},
      {c.mean_logprob, "confidence.mean_logprob"},
      {c.min_logprob, "confidence.min_logprob"},
      {c.mean_entropy, "confidence.mean_entropy"},
      {c.mean_margin, "confidence.mean_margin"},
      {c.combined, "confidence.combined"},
      {c.threshold, "confidence.threshold"}};
  for (const auto& [value, field] : numbers) {
    if (Status status = check_finite(value, field); !status) {
      return status;
    }
  }
  return {};
}

// A JSON array of strings, as nlohmann's dump writes it (no spaces). A client-supplied field
// name may hold invalid UTF-8: it is replaced (U+FFFD) rather than failing the row.
std::string list_text(const std::vector<std::string>& values) {
  std::string out = "[";
  for (const std::string& value : values) {
    if (out.size() > 1) {
      out.push_back(',');
    }
    append_json_string(out, value);
  }
  out.push_back(']');
  return out;
}

// Shortest text that reads back as the same float, comma-separated.
std::string features_text(const std::vector<float>& features) {
  std::string out;
  char buffer[32];
  for (float f : features) {
    if (!out.empty()) {
      out.push_back(',');
    }
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), f);
    out.append(buffer, ec == std::errc() ? end : buffer);
  }
  return out;
}

Result<std::vector<std::string>> parse_list(const std::string& text, int64_t id,
                                            const char* column) {
  const json parsed = json::parse(text, nullptr, false);
  std::vector<std::string> out;
  bool ok = parsed.is_array();
  for (size_t i = 0; ok && i < parsed.size(); ++i) {
    ok = parsed[i].is_string();
    if (ok) {
      out.push_back(parsed[i].get<std::string>());
    }
  }
  if (!ok) {
    return make_error(ErrorCode::kInternal, "trace " + std::to_string(id) + ": column " + column +
                                                " is not a JSON array of strings");
  }
  return out;
}

Result<std::vector<float>> parse_features(std::string_view text, int64_t id) {
  std::vector<float> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    float value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size()) {
      return make_error(ErrorCode::kInternal, "trace " + std::to_string(id) +
                                                  ": column features holds '" + std::string(item) +
                                                  "', not a number");
    }
    out.push_back(value);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

void bind_row(Statement& stmt, const TraceRecord& r) {
  int i = 0;
  // The record's own strings outlive the statement's run: bound without a copy.
  auto kept = [&](const std::string& value) { stmt.bind_static(++i, value); };
  auto text = [&](std::string_view value) { stmt.bind(++i, value); };
  auto integer = [&](int64_t value) { stmt.bind(++i, value); };
  auto real = [&](double value) { stmt.bind(++i, value); };
  auto null = [&] { stmt.bind_null(++i); };
  integer(r.unix_ms);
  kept(r.request_id);
  kept(r.client);
  kept(r.model);
  kept(r.pattern);
  kept(r.tier);
  kept(r.kind);
  text(list_text(r.reason_codes));
  text(list_text(r.privacy_detectors));
  text(list_text(r.review_rules));
  integer(r.hints.privacy_header ? 1 : 0);
  integer(r.hints.key_local_only ? 1 : 0);
  integer(r.hints.review_header ? 1 : 0);
  if (r.hints.latency_budget_ms) {
    integer(*r.hints.latency_budget_ms);
  } else {
    null();
  }
  kept(r.hints.pattern);
  text(list_text(r.hints.cloud_only_fields));
  text(features_text(r.features));
  real(r.complexity);
  if (r.confidence) {
    const TraceConfidence& c = *r.confidence;
    integer(c.tokens);
    for (double value :
         {c.mean_logprob, c.min_logprob, c.mean_entropy, c.mean_margin, c.combined, c.threshold}) {
      real(value);
    }
  } else {
    for (int n = 0; n < 7; ++n) {
      null();
    }
  }
  integer(r.escalated ? 1 : 0);
  real(r.cost_edge);
  real(r.cost_cloud);
  if (r.cost_all_cloud) {
    real(*r.cost_all_cloud);
  } else {
    null();
  }
  integer(r.prompt_tokens);
  integer(r.edge_tokens);
  integer(r.cloud_tokens);
  real(r.latency_ms);
  integer(r.data_left_device ? 1 : 0);
  kept(r.edge_model);
  kept(r.cloud_model);
  kept(r.ticket);
  kept(r.edge_answer_hash);
  if (r.edge_good) {
    integer(*r.edge_good ? 1 : 0);
  } else {
    null();
  }
  kept(r.label_source);
  kept(r.edge_sha256);
  kept(r.cloud_upstream);
  real(r.ttft_ms);
}

Result<TraceRecord> read_row(const Statement& stmt) {
  TraceRecord r;
  int i = 0;
  r.id = stmt.column_int64(i++);
  r.unix_ms = stmt.column_int64(i++);
  r.request_id = stmt.column_text(i++);
  r.client = stmt.column_text(i++);
  r.model = stmt.column_text(i++);
  r.pattern = stmt.column_text(i++);
  r.tier = stmt.column_text(i++);
  r.kind = stmt.column_text(i++);
  std::vector<std::string>* lists[] = {&r.reason_codes, &r.privacy_detectors, &r.review_rules};
  const char* list_columns[] = {"reason_codes", "privacy_detectors", "review_rules"};
  for (size_t n = 0; n < 3; ++n) {
    auto list = parse_list(stmt.column_text(i++), r.id, list_columns[n]);
    if (!list) {
      return list.error();
    }
    *lists[n] = std::move(list).value();
  }
  r.hints.privacy_header = stmt.column_int64(i++) != 0;
  r.hints.key_local_only = stmt.column_int64(i++) != 0;
  r.hints.review_header = stmt.column_int64(i++) != 0;
  if (!stmt.column_is_null(i)) {
    r.hints.latency_budget_ms = static_cast<uint32_t>(stmt.column_int64(i));
  }
  ++i;
  r.hints.pattern = stmt.column_text(i++);
  auto fields = parse_list(stmt.column_text(i++), r.id, "cloud_only_fields");
  if (!fields) {
    return fields.error();
  }
  r.hints.cloud_only_fields = std::move(fields).value();
  auto features = parse_features(stmt.column_text(i++), r.id);
  if (!features) {
    return features.error();
  }
  r.features = std::move(features).value();
  r.complexity = stmt.column_double(i++);
  if (!stmt.column_is_null(i)) {
    TraceConfidence c;
    c.tokens = stmt.column_int64(i);
    c.mean_logprob = stmt.column_double(i + 1);
    c.min_logprob = stmt.column_double(i + 2);
    c.mean_entropy = stmt.column_double(i + 3);
    c.mean_margin = stmt.column_double(i + 4);
    c.combined = stmt.column_double(i + 5);
    c.threshold = stmt.column_double(i + 6);
    r.confidence = c;
  }
  i += 7;
  r.escalated = stmt.column_int64(i++) != 0;
  r.cost_edge = stmt.column_double(i++);
  r.cost_cloud = stmt.column_double(i++);
  if (!stmt.column_is_null(i)) {
    r.cost_all_cloud = stmt.column_double(i);
  }
  ++i;
  r.prompt_tokens = stmt.column_int64(i++);
  r.edge_tokens = stmt.column_int64(i++);
  r.cloud_tokens = stmt.column_int64(i++);
  r.latency_ms = stmt.column_double(i++);
  r.data_left_device = stmt.column_int64(i++) != 0;
  r.edge_model = stmt.column_text(i++);
  r.cloud_model = stmt.column_text(i++);
  r.ticket = stmt.column_text(i++);
  r.edge_answer_hash = stmt.column_text(i++);
  if (!stmt.column_is_null(i)) {
    r.edge_good = stmt.column_int64(i) != 0;
  }
  ++i;
  r.label_source = stmt.column_text(i++);
  r.edge_sha256 = stmt.column_text(i++);
  r.cloud_upstream = stmt.column_text(i++);
  r.ttft_ms = stmt.column_double(i++);
  return r;
}

Result<int64_t> insert(Connection& connection, const TraceRecord& record) {
  auto stmt = connection.prepare(insert_sql());
  if (!stmt) {
    return stmt.error();
  }
  bind_row(*stmt, record);
  if (Status status = stmt->run(); !status) {
    return status.error();
  }
  return connection.last_insert_rowid();
}

}  // namespace

TraceLog::TraceLog(std::shared_ptr<Database> db) : db_(std::move(db)) {}

Result<int64_t> TraceLog::append(const TraceRecord& record) {
  Connection connection = db_->acquire();
  return append(connection, record);
}

Result<int64_t> TraceLog::append(Connection& connection, const TraceRecord& record) {
  if (Status status = validate(record); !status) {
    return status.error();
  }
  return insert(connection, record);
}

Status TraceLog::check(const TraceRecord& record) {
  return validate(record);
}

Status TraceLog::append_all(const std::vector<TraceRecord>& records) {
  for (const auto& record : records) {
    if (Status status = validate(record); !status) {
      return status;
    }
  }
  if (records.empty()) {
    return {};
  }
  Connection connection = db_->acquire();
  auto transaction = Transaction::begin(connection);
  if (!transaction) {
    return transaction.error();
  }
  for (const auto& record : records) {
    if (auto id = insert(connection, record); !id) {
      return id.error();
    }
  }
  return transaction->commit();
}

Result<size_t> TraceLog::label_by_ticket(const std::string& ticket, std::string_view answer_text) {
  return label_by_ticket_hash(ticket, answer_hash(answer_text));
}

Result<size_t> TraceLog::label_by_ticket_hash(const std::string& ticket,
                                              const std::string& answer_hash) {
  Connection connection = db_->acquire();
  return label_by_ticket_hash(connection, ticket, answer_hash);
}

Result<size_t> TraceLog::label_by_ticket_hash(Connection& connection, const std::string& ticket,
                                              const std::string& answer_hash) {
  if (ticket.empty()) {
    return invalid("a review label needs a ticket id");
  }
  auto stmt = connection.prepare(kLabelTicketSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, ticket);
  stmt->bind(2, answer_hash);
  if (Status status = stmt->run(); !status) {
    return status.error();
  }
  return static_cast<size_t>(connection.changes());
}

Result<size_t> TraceLog::label_by_request(const std::string& request_id, bool edge_good,
                                          const std::string& source) {
  if (request_id.empty()) {
    return invalid("a label needs a request id");
  }
  if (!valid_source(source)) {
    return invalid("label_source must be verification, review or shadow, not '" + source + "'");
  }
  Connection connection = db_->acquire();
  auto stmt = connection.prepare(kLabelRequestSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, request_id);
  stmt->bind(2, int64_t{edge_good ? 1 : 0});
  stmt->bind(3, source);
  if (Status status = stmt->run(); !status) {
    return status.error();
  }
  return static_cast<size_t>(connection.changes());
}

Status TraceLog::scan(const TraceQuery& query, const std::function<bool(TraceRecord&&)>& visit) {
  Connection connection = db_->acquire();
  auto stmt = connection.prepare(select_sql(query.labelled_only, query.newest_first));
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, query.since_ms);
  stmt->bind(2, query.until_ms);
  // LIMIT -1 is SQLite's "no limit".
  stmt->bind(3, query.limit == 0 ? int64_t{-1} : static_cast<int64_t>(query.limit));
  for (;;) {
    auto row = stmt->step();
    if (!row) {
      return row.error();
    }
    if (!*row) {
      return {};
    }
    auto record = read_row(*stmt);
    if (!record) {
      return record.error();
    }
    if (!visit(std::move(record).value())) {
      return {};
    }
  }
}

Result<std::vector<TraceRecord>> TraceLog::read(const TraceQuery& query) {
  std::vector<TraceRecord> out;
  Status status = scan(query, [&out](TraceRecord&& record) {
    out.push_back(std::move(record));
    return true;
  });
  if (!status) {
    return status.error();
  }
  return out;
}

Result<size_t> TraceLog::count() {
  Connection connection = db_->acquire();
  auto count = connection.query_int64(kCountSql);
  if (!count) {
    return count.error();
  }
  return static_cast<size_t>(count.value());
}

Result<size_t> TraceLog::prune(uint64_t max_rows) {
  return prune_oldest_rows(*db_, "traces", max_rows);
}

Result<std::shared_ptr<Database>> open_trace_database(const std::string& path) {
  if (path.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "the traces database path is empty");
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return make_error(ErrorCode::kNotFound, "traces database " + path + " does not exist");
  }
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "traces database " + path + " is a directory, not a file");
  }
  // A read-only look first: Database::open would migrate an older file, adding an empty
  // traces table instead of saying that this file never had any.
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  SqlitePtr db(raw);
  if (rc != SQLITE_OK) {
    return make_error(ErrorCode::kNotFound,
                      "cannot open traces database " + path + ": " +
                          (db ? sqlite3_errmsg(db.get()) : sqlite3_errstr(rc)));
  }
  sqlite3_stmt* stmt_raw = nullptr;
  const int prepared =
      sqlite3_prepare_v2(db.get(),
                         "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = "
                         "'traces'",
                         -1, &stmt_raw, nullptr);
  StatementPtr stmt(stmt_raw);
  if (prepared != SQLITE_OK || sqlite3_step(stmt.get()) != SQLITE_ROW) {
    return make_error(ErrorCode::kInvalidArgument,
                      "cannot read traces database " + path + ": " + sqlite3_errmsg(db.get()));
  }
  if (sqlite3_column_int64(stmt.get(), 0) == 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      "database " + path +
                          " holds no traces table: it is not a tandem routing database, or was "
                          "written by a tandem without traces (see routing.traces in "
                          "docs/CONFIG.md)");
  }
  stmt.reset();
  db.reset();
  return Database::open(path);
}

}  // namespace tandem::store
