// The schema: every migration from an empty file to Database::kSchemaVersion, and the
// checks that leave a newer schema or another program's database alone.

#include <array>

#include "common/log.h"
#include "store/database.h"

namespace tandem::store {
namespace {

// PRAGMA application_id of a Tandem database ("TDM1"), so that a file belonging to another
// program is recognised and left alone.
constexpr int kApplicationId = 0x54444d31;

// Migrations, in order: kMigrations[v] takes a database from user_version v to v + 1. Each runs
// in the same transaction as the user_version bump, so a crash leaves the old version intact.
constexpr std::array<const char*, Database::kSchemaVersion> kMigrations = {
    // 0 -> 1: the review queue and the routing memory.
    R"sql(
CREATE TABLE review_tickets (
  -- seq orders tickets created in the same millisecond; ids are random and cannot.
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'rejected')),
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  client TEXT NOT NULL,
  model TEXT NOT NULL,
  request_json TEXT NOT NULL,
  prompt_text TEXT NOT NULL,
  reason TEXT NOT NULL,
  decision_json TEXT NOT NULL,
  draft_answer TEXT NOT NULL,
  draft_tier TEXT NOT NULL CHECK (draft_tier IN ('edge', 'cloud', '')),
  answer TEXT NOT NULL DEFAULT '',
  reviewer TEXT NOT NULL DEFAULT ''
);
CREATE INDEX review_tickets_by_time ON review_tickets (created_at_ms);
CREATE INDEX review_tickets_by_status_time ON review_tickets (status, created_at_ms);

CREATE TABLE consistency_routes (
  client TEXT NOT NULL,
  cluster_key INTEGER NOT NULL,  -- the uint64 key bit-cast to int64
  tier TEXT NOT NULL CHECK (tier IN ('edge', 'cloud', 'human')),
  reason TEXT NOT NULL,
  decided_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (client, cluster_key)
) WITHOUT ROWID;
CREATE INDEX consistency_routes_by_expiry ON consistency_routes (expires_at_ms);
)sql",
    // 1 -> 2: one row per routed request (store/trace_log.h); never prompt or answer text.
    R"sql(
CREATE TABLE traces (
  id INTEGER PRIMARY KEY,  -- increasing: retention deletes the lowest first
  unix_ms INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  client TEXT NOT NULL,
  model TEXT NOT NULL,
  pattern TEXT NOT NULL,
  tier TEXT NOT NULL CHECK (tier IN ('edge', 'cloud', 'human', 'none')),
  kind TEXT NOT NULL,
  reason_codes TEXT NOT NULL,       -- JSON array of strings
  privacy_detectors TEXT NOT NULL,  -- JSON array of strings
  review_rules TEXT NOT NULL,       -- JSON array of strings
  privacy_header INTEGER NOT NULL,
  key_local_only INTEGER NOT NULL,
  review_header INTEGER NOT NULL,
  latency_budget_ms INTEGER,        -- NULL: none
  requested_pattern TEXT NOT NULL,
  cloud_only_fields TEXT NOT NULL,  -- JSON array of strings
  features TEXT NOT NULL,           -- comma-separated floats, shortest round-trip form
  complexity REAL NOT NULL,
  confidence_tokens INTEGER,        -- NULL: no edge confidence (nor the columns below)
  confidence_mean_logprob REAL,
  confidence_min_logprob REAL,
  confidence_mean_entropy REAL,
  confidence_mean_margin REAL,
  confidence_combined REAL,
  confidence_threshold REAL,
  escalated INTEGER NOT NULL,
  cost_edge REAL NOT NULL,
  cost_cloud REAL NOT NULL,
  cost_all_cloud REAL,              -- NULL: no cloud prices known
  prompt_tokens INTEGER NOT NULL,
  edge_tokens INTEGER NOT NULL,
  cloud_tokens INTEGER NOT NULL,
  latency_ms REAL NOT NULL,
  data_left_device INTEGER NOT NULL,
  edge_model TEXT NOT NULL,
  cloud_model TEXT NOT NULL,
  ticket TEXT NOT NULL,
  edge_answer_hash TEXT NOT NULL,
  edge_good INTEGER CHECK (edge_good IN (0, 1)),  -- NULL: unlabelled
  label_source TEXT NOT NULL DEFAULT ''
);
CREATE INDEX traces_by_time ON traces (unix_ms);
CREATE INDEX traces_by_ticket ON traces (ticket) WHERE ticket != '';
)sql",
    // 2 -> 3: shadow mode's samples and traffic counts (store/shadow_log.h); no text.
    R"sql(
CREATE TABLE shadow_samples (
  seq INTEGER PRIMARY KEY,  -- increasing: the bound on rows deletes the lowest first
  unix_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('compared', 'edge_busy', 'edge_failed')),
  agreed INTEGER NOT NULL CHECK (agreed IN (0, 1)),
  f1 REAL NOT NULL,
  edge_tokens INTEGER NOT NULL,
  edge_confidence REAL NOT NULL,
  mean_logprob REAL NOT NULL,
  min_logprob REAL NOT NULL,
  mean_entropy REAL NOT NULL,
  mean_margin REAL NOT NULL,
  edge_ms REAL NOT NULL,
  cloud_ms REAL NOT NULL
);
CREATE INDEX shadow_samples_by_time ON shadow_samples (unix_ms);

CREATE TABLE shadow_traffic (
  kind TEXT NOT NULL,
  hour_ms INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  shadowed INTEGER NOT NULL,
  PRIMARY KEY (kind, hour_ms)
) WITHOUT ROWID;
)sql",
    // 3 -> 4: the audit of what was sent to which cloud (store/audit_log.h), and the model
    // identities and time to first token on every trace.
    R"sql(
CREATE TABLE cloud_audit (
  id INTEGER PRIMARY KEY,
  unix_ms INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  client TEXT NOT NULL,
  upstream TEXT NOT NULL,
  model TEXT NOT NULL,
  purpose TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  content_mode TEXT NOT NULL CHECK (content_mode IN ('none', 'redacted', 'full')),
  content TEXT NOT NULL,
  redactions INTEGER NOT NULL,
  redacted_detectors TEXT NOT NULL
);
CREATE INDEX cloud_audit_by_time ON cloud_audit (unix_ms);
ALTER TABLE traces ADD COLUMN edge_sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE traces ADD COLUMN cloud_upstream TEXT NOT NULL DEFAULT '';
ALTER TABLE traces ADD COLUMN ttft_ms REAL NOT NULL DEFAULT 0;
)sql",
    // 4 -> 5: responses of POST /v1/responses, kept for previous_response_id.
    R"sql(
CREATE TABLE stored_responses (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  expires_ms INTEGER NOT NULL,
  response TEXT NOT NULL,     -- the Response object, JSON
  conversation TEXT NOT NULL  -- the chat messages the next turn continues, JSON
);
CREATE INDEX stored_responses_by_expiry ON stored_responses (expires_ms);
)sql",
    // 5 -> 6: the same tables, with every CHECK on a list of strings written as comparisons.
    // SQLite evaluates `x IN ('a', 'b', 'c')` by building a temporary index of the list for
    // each statement run: a b-tree opened, filled and dropped per inserted row, which was a
    // third of a trace row's cost. `x = 'a' OR x = 'b' OR ...` accepts exactly the same values
    // at no such cost. A CHECK cannot be altered in place, so each table is rebuilt as SQLite
    // documents (create, copy, drop, rename, index); its columns keep their order, ids and rows.
    R"sql(
CREATE TABLE review_tickets_v6 (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL CHECK (status = 'pending' OR status = 'answered' OR status = 'rejected'),
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  client TEXT NOT NULL,
  model TEXT NOT NULL,
  request_json TEXT NOT NULL,
  prompt_text TEXT NOT NULL,
  reason TEXT NOT NULL,
  decision_json TEXT NOT NULL,
  draft_answer TEXT NOT NULL,
  draft_tier TEXT NOT NULL CHECK (draft_tier = 'edge' OR draft_tier = 'cloud' OR draft_tier = ''),
  answer TEXT NOT NULL DEFAULT '',
  reviewer TEXT NOT NULL DEFAULT ''
);
INSERT INTO review_tickets_v6 SELECT * FROM review_tickets;
DROP TABLE review_tickets;
ALTER TABLE review_tickets_v6 RENAME TO review_tickets;
CREATE INDEX review_tickets_by_time ON review_tickets (created_at_ms);
CREATE INDEX review_tickets_by_status_time ON review_tickets (status, created_at_ms);

CREATE TABLE consistency_routes_v6 (
  client TEXT NOT NULL,
  cluster_key INTEGER NOT NULL,
  tier TEXT NOT NULL CHECK (tier = 'edge' OR tier = 'cloud' OR tier = 'human'),
  reason TEXT NOT NULL,
  decided_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (client, cluster_key)
) WITHOUT ROWID;
INSERT INTO consistency_routes_v6 SELECT * FROM consistency_routes;
DROP TABLE consistency_routes;
ALTER TABLE consistency_routes_v6 RENAME TO consistency_routes;
CREATE INDEX consistency_routes_by_expiry ON consistency_routes (expires_at_ms);

CREATE TABLE traces_v6 (
  id INTEGER PRIMARY KEY,
  unix_ms INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  client TEXT NOT NULL,
  model TEXT NOT NULL,
  pattern TEXT NOT NULL,
  tier TEXT NOT NULL CHECK (tier = 'edge' OR tier = 'cloud' OR tier = 'human' OR tier = 'none'),
  kind TEXT NOT NULL,
  reason_codes TEXT NOT NULL,
  privacy_detectors TEXT NOT NULL,
  review_rules TEXT NOT NULL,
  privacy_header INTEGER NOT NULL,
  key_local_only INTEGER NOT NULL,
  review_header INTEGER NOT NULL,
  latency_budget_ms INTEGER,
  requested_pattern TEXT NOT NULL,
  cloud_only_fields TEXT NOT NULL,
  features TEXT NOT NULL,
  complexity REAL NOT NULL,
  confidence_tokens INTEGER,
  confidence_mean_logprob REAL,
  confidence_min_logprob REAL,
  confidence_mean_entropy REAL,
  confidence_mean_margin REAL,
  confidence_combined REAL,
  confidence_threshold REAL,
  escalated INTEGER NOT NULL,
  cost_edge REAL NOT NULL,
  cost_cloud REAL NOT NULL,
  cost_all_cloud REAL,
  prompt_tokens INTEGER NOT NULL,
  edge_tokens INTEGER NOT NULL,
  cloud_tokens INTEGER NOT NULL,
  latency_ms REAL NOT NULL,
  data_left_device INTEGER NOT NULL,
  edge_model TEXT NOT NULL,
  cloud_model TEXT NOT NULL,
  ticket TEXT NOT NULL,
  edge_answer_hash TEXT NOT NULL,
  edge_good INTEGER CHECK (edge_good = 0 OR edge_good = 1),
  label_source TEXT NOT NULL DEFAULT '',
  edge_sha256 TEXT NOT NULL DEFAULT '',
  cloud_upstream TEXT NOT NULL DEFAULT '',
  ttft_ms REAL NOT NULL DEFAULT 0
);
INSERT INTO traces_v6 SELECT * FROM traces;
DROP TABLE traces;
ALTER TABLE traces_v6 RENAME TO traces;
CREATE INDEX traces_by_time ON traces (unix_ms);
CREATE INDEX traces_by_ticket ON traces (ticket) WHERE ticket != '';

CREATE TABLE shadow_samples_v6 (
  seq INTEGER PRIMARY KEY,
  unix_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  outcome TEXT NOT NULL
      CHECK (outcome = 'compared' OR outcome = 'edge_busy' OR outcome = 'edge_failed'),
  agreed INTEGER NOT NULL CHECK (agreed = 0 OR agreed = 1),
  f1 REAL NOT NULL,
  edge_tokens INTEGER NOT NULL,
  edge_confidence REAL NOT NULL,
  mean_logprob REAL NOT NULL,
  min_logprob REAL NOT NULL,
  mean_entropy REAL NOT NULL,
  mean_margin REAL NOT NULL,
  edge_ms REAL NOT NULL,
  cloud_ms REAL NOT NULL
);
INSERT INTO shadow_samples_v6 SELECT * FROM shadow_samples;
DROP TABLE shadow_samples;
ALTER TABLE shadow_samples_v6 RENAME TO shadow_samples;
CREATE INDEX shadow_samples_by_time ON shadow_samples (unix_ms);

CREATE TABLE cloud_audit_v6 (
  id INTEGER PRIMARY KEY,
  unix_ms INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  client TEXT NOT NULL,
  upstream TEXT NOT NULL,
  model TEXT NOT NULL,
  purpose TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  content_mode TEXT NOT NULL
      CHECK (content_mode = 'none' OR content_mode = 'redacted' OR content_mode = 'full'),
  content TEXT NOT NULL,
  redactions INTEGER NOT NULL,
  redacted_detectors TEXT NOT NULL
);
INSERT INTO cloud_audit_v6 SELECT * FROM cloud_audit;
DROP TABLE cloud_audit;
ALTER TABLE cloud_audit_v6 RENAME TO cloud_audit;
CREATE INDEX cloud_audit_by_time ON cloud_audit (unix_ms);
)sql",
};

Result<int64_t> read_pragma(Connection& connection, const char* sql) {
  auto stmt = connection.prepare(sql);
  if (!stmt) {
    return stmt.error();
  }
  auto row = stmt->step();
  if (!row) {
    return row.error();
  }
  return *row ? stmt->column_int64(0) : 0;
}

// Refuses a schema newer than this binary's (it would be altered blindly) and a file that
// another application marked as its own.
Status check_schema_owner(Connection& connection, const std::string& path, int64_t version) {
  if (version > Database::kSchemaVersion) {
    return make_error(ErrorCode::kInvalidArgument,
                      "database " + path + ": database schema version " + std::to_string(version) +
                          " is newer than this tandem supports (" +
                          std::to_string(Database::kSchemaVersion) + ")");
  }
  auto application = read_pragma(connection, "PRAGMA application_id");
  if (!application) {
    return application.error();
  }
  if (*application != 0 && *application != kApplicationId) {
    return make_error(ErrorCode::kInvalidArgument,
                      "database " + path + " belongs to another application (application_id " +
                          std::to_string(*application) + "); refusing to alter it");
  }
  return {};
}

// A version-0 file with tables is some other program's database, not an empty one.
Status check_no_foreign_tables(Connection& connection, const std::string& path) {
  auto tables = connection.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
      "LIMIT 1");
  if (!tables) {
    return tables.error();
  }
  auto row = tables->step();
  if (!row) {
    return row.error();
  }
  if (*row) {
    return make_error(ErrorCode::kInvalidArgument,
                      "database " + path + " already has tables (e.g. '" + tables->column_text(0) +
                          "') but no tandem schema; refusing to alter it");
  }
  return {};
}

// Runs the migrations after `from_version` and stamps the file with the new version and the
// application id, inside the caller's transaction.
Status apply_migrations(Connection& connection, const std::string& path, int64_t from_version) {
  for (int64_t v = from_version; v < Database::kSchemaVersion; ++v) {
    if (Status status = connection.exec(kMigrations[static_cast<size_t>(v)]); !status) {
      return make_error(status.error().code, "cannot migrate database " + path + " to version " +
                                                 std::to_string(v + 1) + ": " +
                                                 status.error().message);
    }
  }
  // PRAGMA takes no parameters; these are our own constants, not values from outside.
  const std::string set_version =
      "PRAGMA user_version = " + std::to_string(Database::kSchemaVersion);
  const std::string set_application = "PRAGMA application_id = " + std::to_string(kApplicationId);
  if (Status status = connection.exec(set_version.c_str()); !status) {
    return status;
  }
  return connection.exec(set_application.c_str());
}

}  // namespace

Status Database::migrate() {
  Connection connection = acquire();
  auto version = read_pragma(connection, "PRAGMA user_version");
  if (!version) {
    return version.error();
  }
  if (Status status = check_schema_owner(connection, path_, *version); !status) {
    return status;
  }
  if (*version == kSchemaVersion) {
    return {};
  }

  auto transaction = Transaction::begin(connection);
  if (!transaction) {
    return transaction.error();
  }
  // Another process may have migrated between the read above and taking the write lock.
  version = read_pragma(connection, "PRAGMA user_version");
  if (!version) {
    return version.error();
  }
  if (*version == 0) {
    if (Status status = check_no_foreign_tables(connection, path_); !status) {
      return status;
    }
  }
  const int64_t from_version = *version;
  if (Status status = apply_migrations(connection, path_, from_version); !status) {
    return status;
  }
  if (Status status = transaction->commit(); !status) {
    return status;
  }
  // Test databases in memory are created by the hundred; only a real file's migration is news.
  log_event(path_ == ":memory:" ? LogLevel::kDebug : LogLevel::kInfo, "store", "schema_migrated",
            {{"path", path_},
             {"from_version", std::to_string(from_version)},
             {"version", std::to_string(kSchemaVersion)}});
  return {};
}

}  // namespace tandem::store
