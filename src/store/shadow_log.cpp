#include "store/shadow_log.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <utility>

namespace tandem::store {
namespace {

constexpr size_t kMaxRecentLimit = 1000;

constexpr const char* kInsertSql =
    "INSERT INTO shadow_samples (unix_ms, kind, outcome, agreed, f1, edge_tokens, "
    "edge_confidence, mean_logprob, min_logprob, mean_entropy, mean_margin, edge_ms, cloud_ms) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
constexpr const char* kTrafficSql =
    "INSERT INTO shadow_traffic (kind, hour_ms, requests, shadowed) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT (kind, hour_ms) DO UPDATE SET requests = requests + excluded.requests, "
    "shadowed = shadowed + excluded.shadowed";
// Rows are only ever deleted from the oldest end, so seqs stay contiguous and the newest
// max_rows are exactly those above max(seq) - max_rows: two index lookups, no scan.
constexpr const char* kTrimSql =
    "DELETE FROM shadow_samples WHERE seq <= (SELECT max(seq) FROM shadow_samples) - ?1";
constexpr const char* kExpireTrafficSql = "DELETE FROM shadow_traffic WHERE hour_ms < ?1";
constexpr const char* kSampleTotalsSql =
    "SELECT kind, sum(outcome = 'compared'), sum(agreed), sum(outcome = 'edge_busy'), "
    "sum(outcome = 'edge_failed'), total(f1), total(edge_confidence), total(edge_ms), "
    "total(cloud_ms), sum(edge_tokens), min(unix_ms), max(unix_ms) "
    "FROM shadow_samples WHERE unix_ms >= ?1 GROUP BY kind";
constexpr const char* kTrafficTotalsSql =
    "SELECT kind, sum(requests), sum(shadowed) FROM shadow_traffic WHERE hour_ms >= ?1 "
    "GROUP BY kind";
constexpr const char* kRecentSql =
    "SELECT unix_ms, kind, outcome, agreed, f1, edge_tokens, edge_confidence, mean_logprob, "
    "min_logprob, mean_entropy, mean_margin, edge_ms, cloud_ms FROM shadow_samples "
    "ORDER BY seq DESC LIMIT ?1";
constexpr const char* kCountSql = "SELECT count(*) FROM shadow_samples";

Status invalid(const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument, "shadow log: " + message);
}

Status check_kind(const std::string& kind) {
  if (kind.empty() || kind.size() > kMaxShadowKindBytes) {
    return invalid("a query kind must have 1 to " + std::to_string(kMaxShadowKindBytes) +
                   " characters, not " + std::to_string(kind.size()));
  }
  for (char c : kind) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) {
      return invalid("query kind '" + kind + "' may hold only lower-case letters and '_'");
    }
  }
  return {};
}

Status check_range(const char* name, double value, double low, double high) {
  if (!std::isfinite(value) || value < low || value > high) {
    return invalid(std::string(name) + " must be a number between " + std::to_string(low) +
                   " and " + std::to_string(high) + ", not " + std::to_string(value));
  }
  return {};
}

Status check(const ShadowSample& s) {
  if (Status status = check_kind(s.kind); !status) {
    return status;
  }
  constexpr double kHuge = 1e12;
  const std::pair<const char*, std::pair<double, double>> ranges[] = {
      {"f1", {0.0, 1.0}},
      {"edge_confidence", {0.0, 1.0}},
      {"mean_logprob", {-kHuge, 0.0}},
      {"min_logprob", {-kHuge, 0.0}},
      {"mean_entropy", {0.0, kHuge}},
      {"mean_margin", {0.0, kHuge}},
      {"edge_ms", {0.0, kHuge}},
      {"cloud_ms", {0.0, kHuge}}};
  const double values[] = {s.f1,           s.edge_confidence, s.mean_logprob, s.min_logprob,
                           s.mean_entropy, s.mean_margin,     s.edge_ms,      s.cloud_ms};
  for (size_t i = 0; i < std::size(values); ++i) {
    const auto& [name, range] = ranges[i];
    if (Status status = check_range(name, values[i], range.first, range.second); !status) {
      return status;
    }
  }
  if (s.edge_tokens < 0) {
    return invalid("edge_tokens must not be negative");
  }
  if (s.outcome != ShadowOutcome::kCompared && s.agreed) {
    return invalid(std::string("a sample with outcome ") + shadow_outcome_name(s.outcome) +
                   " cannot have agreed");
  }
  return {};
}

Status check(const ShadowTraffic& t) {
  if (Status status = check_kind(t.kind); !status) {
    return status;
  }
  if (t.hour_ms < 0 || t.hour_ms % kShadowHourMs != 0) {
    return invalid("a traffic bucket must start on the hour, not at " + std::to_string(t.hour_ms));
  }
  if (t.requests < 0 || t.shadowed < 0 || t.shadowed > t.requests) {
    return invalid("traffic counts must satisfy 0 <= shadowed <= requests (got " +
                   std::to_string(t.shadowed) + " of " + std::to_string(t.requests) + ")");
  }
  return {};
}

ShadowOutcome outcome_from(const std::string& name) {
  if (name == "edge_busy") {
    return ShadowOutcome::kEdgeBusy;
  }
  if (name == "edge_failed") {
    return ShadowOutcome::kEdgeFailed;
  }
  return ShadowOutcome::kCompared;
}

// Inserts the samples; returns the newest one's time (0 for none).
Result<int64_t> insert_samples(Connection& connection, const std::vector<ShadowSample>& samples) {
  int64_t newest_ms = 0;
  auto stmt = connection.prepare(kInsertSql);
  if (!stmt) {
    return stmt.error();
  }
  for (const auto& s : samples) {
    stmt->reset();
    stmt->bind(1, s.unix_ms);
    stmt->bind(2, s.kind);
    stmt->bind(3, std::string_view(shadow_outcome_name(s.outcome)));
    stmt->bind(4, int64_t{s.agreed ? 1 : 0});
    stmt->bind(5, s.f1);
    stmt->bind(6, int64_t{s.edge_tokens});
    stmt->bind(7, s.edge_confidence);
    stmt->bind(8, s.mean_logprob);
    stmt->bind(9, s.min_logprob);
    stmt->bind(10, s.mean_entropy);
    stmt->bind(11, s.mean_margin);
    stmt->bind(12, s.edge_ms);
    stmt->bind(13, s.cloud_ms);
    if (Status status = stmt->run(); !status) {
      return status.error();
    }
    newest_ms = std::max(newest_ms, s.unix_ms);
  }
  return newest_ms;
}

// Adds the traffic counts to their hourly buckets; returns the newest bucket (0 for none).
Result<int64_t> add_traffic(Connection& connection, const std::vector<ShadowTraffic>& traffic) {
  int64_t newest_ms = 0;
  auto stmt = connection.prepare(kTrafficSql);
  if (!stmt) {
    return stmt.error();
  }
  for (const auto& t : traffic) {
    stmt->reset();
    stmt->bind(1, t.kind);
    stmt->bind(2, t.hour_ms);
    stmt->bind(3, t.requests);
    stmt->bind(4, t.shadowed);
    if (Status status = stmt->run(); !status) {
      return status.error();
    }
    newest_ms = std::max(newest_ms, t.hour_ms);
  }
  return newest_ms;
}

// Keeps the newest `max_rows` samples (when samples were added) and the traffic buckets of the
// retention window before `newest_ms`.
Status trim(Connection& connection, bool samples_added, uint64_t max_rows, int64_t newest_ms) {
  if (samples_added) {
    auto trim = connection.prepare(kTrimSql);
    if (!trim) {
      return trim.error();
    }
    trim->bind(1, static_cast<int64_t>(max_rows));
    if (Status status = trim->run(); !status) {
      return status;
    }
  }
  auto expire = connection.prepare(kExpireTrafficSql);
  if (!expire) {
    return expire.error();
  }
  expire->bind(1, newest_ms - kShadowTrafficRetentionMs);
  return expire->run();
}

}  // namespace

const char* shadow_outcome_name(ShadowOutcome outcome) {
  switch (outcome) {
    case ShadowOutcome::kCompared:
      return "compared";
    case ShadowOutcome::kEdgeBusy:
      return "edge_busy";
    case ShadowOutcome::kEdgeFailed:
      return "edge_failed";
  }
  return "compared";
}

ShadowLog::ShadowLog(std::shared_ptr<Database> db, uint64_t max_rows)
    : db_(std::move(db)), max_rows_(max_rows == 0 ? 1 : max_rows) {}

Status ShadowLog::append(const std::vector<ShadowSample>& samples,
                         const std::vector<ShadowTraffic>& traffic) {
  for (const auto& s : samples) {
    if (Status status = check(s); !status) {
      return status;
    }
  }
  for (const auto& t : traffic) {
    if (Status status = check(t); !status) {
      return status;
    }
  }
  if (samples.empty() && traffic.empty()) {
    return {};
  }
  Connection connection = db_->acquire();
  // One transaction: a batch is one commit (one fsync at most), and all of it or none.
  auto transaction = Transaction::begin(connection);
  if (!transaction) {
    return transaction.error();
  }
  auto newest_sample_ms = insert_samples(connection, samples);
  if (!newest_sample_ms) {
    return newest_sample_ms.error();
  }
  auto newest_traffic_ms = add_traffic(connection, traffic);
  if (!newest_traffic_ms) {
    return newest_traffic_ms.error();
  }
  const int64_t newest_ms = std::max(newest_sample_ms.value(), newest_traffic_ms.value());
  if (Status status = trim(connection, !samples.empty(), max_rows_, newest_ms); !status) {
    return status;
  }
  return transaction->commit();
}

Result<std::vector<ShadowKindTotals>> ShadowLog::totals(int64_t since_unix_ms) {
  std::map<std::string, ShadowKindTotals> by_kind;
  Connection connection = db_->acquire();
  {
    auto stmt = connection.prepare(kSampleTotalsSql);
    if (!stmt) {
      return stmt.error();
    }
    stmt->bind(1, since_unix_ms);
    const Status visited = stmt->each_row([&](const Statement& row) {
      ShadowKindTotals& t = by_kind[row.column_text(0)];
      t.compared = row.column_int64(1);
      t.agreed = row.column_int64(2);
      t.edge_busy = row.column_int64(3);
      t.edge_failed = row.column_int64(4);
      t.sum_f1 = row.column_double(5);
      t.sum_edge_confidence = row.column_double(6);
      t.sum_edge_ms = row.column_double(7);
      t.sum_cloud_ms = row.column_double(8);
      t.sum_edge_tokens = row.column_int64(9);
      t.first_unix_ms = row.column_int64(10);
      t.last_unix_ms = row.column_int64(11);
    });
    if (!visited) {
      return visited.error();
    }
  }
  {
    // A bucket counts when it starts at or after the cut: at most the hour before `since`
    // is left out, never a request from before it counted.
    auto stmt = connection.prepare(kTrafficTotalsSql);
    if (!stmt) {
      return stmt.error();
    }
    stmt->bind(1, since_unix_ms);
    const Status visited = stmt->each_row([&](const Statement& row) {
      ShadowKindTotals& t = by_kind[row.column_text(0)];
      t.requests = row.column_int64(1);
      t.shadowed = row.column_int64(2);
    });
    if (!visited) {
      return visited.error();
    }
  }
  std::vector<ShadowKindTotals> out;
  out.reserve(by_kind.size());
  for (auto& [kind, totals] : by_kind) {
    totals.kind = kind;
    out.push_back(std::move(totals));
  }
  return out;
}

Result<std::vector<ShadowSample>> ShadowLog::recent(size_t limit) {
  if (limit == 0 || limit > kMaxRecentLimit) {
    return make_error(ErrorCode::kInvalidArgument, "shadow log: limit must be between 1 and " +
                                                       std::to_string(kMaxRecentLimit) + ", not " +
                                                       std::to_string(limit));
  }
  Connection connection = db_->acquire();
  auto stmt = connection.prepare(kRecentSql);
  if (!stmt) {
    return stmt.error();
  }
  stmt->bind(1, static_cast<int64_t>(limit));
  std::vector<ShadowSample> out;
  const Status visited = stmt->each_row([&](const Statement& row) {
    ShadowSample s;
    s.unix_ms = row.column_int64(0);
    s.kind = row.column_text(1);
    s.outcome = outcome_from(row.column_text(2));
    s.agreed = row.column_int64(3) != 0;
    s.f1 = row.column_double(4);
    s.edge_tokens = static_cast<int>(row.column_int64(5));
    s.edge_confidence = row.column_double(6);
    s.mean_logprob = row.column_double(7);
    s.min_logprob = row.column_double(8);
    s.mean_entropy = row.column_double(9);
    s.mean_margin = row.column_double(10);
    s.edge_ms = row.column_double(11);
    s.cloud_ms = row.column_double(12);
    out.push_back(std::move(s));
  });
  if (!visited) {
    return visited.error();
  }
  return out;
}

Result<size_t> ShadowLog::count() {
  Connection connection = db_->acquire();
  auto count = connection.query_int64(kCountSql);
  if (!count) {
    return count.error();
  }
  return static_cast<size_t>(count.value());
}

}  // namespace tandem::store
