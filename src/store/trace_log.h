#pragma once
// The routing traces: one row per request the gateway routed, in the routing database. A row
// holds what the router saw and did — signals, decision, tiers, tokens, cost, latency, the
// edge's confidence — and, once known, whether the edge's answer was good (the label). It
// never holds prompt or answer text: the edge's answer is kept only as the sha256 of its
// normalised form (common/answer_match.h), enough to compare it with a reviewer's answer.
// `tandem replay` re-decides recorded rows under a new configuration; `tandem calibrate
// --traces` fits per-kind confidence weights on the labelled ones.
//
// The store knows nothing of the router: every field is a plain type, named as the router
// names it (tier, pattern and kind names, reason codes, detector names).
//
// Thread-safety: every method may be called from any thread; the Database serialises them.
// append() costs an SQLite write: the gateway calls it from TraceWriter's thread, never from
// the request path.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace tandem::store {

// Limits on what a trace stores; anything larger is refused with kInvalidArgument.
inline constexpr size_t kMaxTraceNameBytes = 1024;  // each string field, each list entry
inline constexpr size_t kMaxTraceListItems = 256;   // each list, features included

// What the request itself said (headers, the API key's policy), as routing::RequestHints.
struct TraceHints {
  bool privacy_header = false;  // X-Tandem-Privacy: local-only
  bool key_local_only = false;  // the API key's policy
  bool review_header = false;   // X-Tandem-Review: required
  std::optional<uint32_t> latency_budget_ms;
  std::string pattern;  // X-Tandem-Pattern, "" when none was requested
  std::vector<std::string> cloud_only_fields;

  bool operator==(const TraceHints&) const = default;
};

// The edge's token confidence when the decision was taken (the P1 cascade), as
// routing::ConfidenceSnapshot, plus the threshold it was compared with.
struct TraceConfidence {
  int64_t tokens = 0;
  double mean_logprob = 0.0;
  double min_logprob = 0.0;
  double mean_entropy = 0.0;
  double mean_margin = 0.0;
  double combined = 1.0;  // P(good) under the weights in force at the time
  double threshold = 0.0;

  bool operator==(const TraceConfidence&) const = default;
};

struct TraceRecord {
  int64_t id = 0;          // assigned by append(); increasing
  int64_t unix_ms = 0;     // when the request finished
  std::string request_id;  // the response id the client saw ("chatcmpl-...")
  std::string client;      // API key name, X-Tandem-Client or `user`; "" anonymous
  std::string model;       // the model the client asked for ("tandem" when routed)
  // "edge", "cloud", "cascade", "speculative", "collaborate", "review" or "none" (no tier).
  std::string pattern;
  std::string tier;  // the tier whose answer the client got: "edge", "cloud", "human", "none"
  std::string kind;  // the query kind ("multiple_choice", "math", "code", "factoid", "open")
  // The decision's reason codes in order ("privacy.detected", "ingress.simple", ...); for a
  // client-named model "model.edge" or "model.cloud" comes first.
  std::vector<std::string> reason_codes;
  std::vector<std::string> privacy_detectors;  // detectors that matched ("email", "pattern:x")
  std::vector<std::string> review_rules;       // review rules that matched ("keyword:legal")
  TraceHints hints;
  std::vector<float> features;  // the classifier's prompt features, in feature_names() order
  double complexity = 0.0;      // the classifier's P(cloud needed)
  std::optional<TraceConfidence> confidence;  // only when the edge's confidence was judged
  bool escalated = false;  // the edge answered first and a higher tier replaced its answer
  double cost_edge = 0.0;  // USD
  double cost_cloud = 0.0;
  std::optional<double> cost_all_cloud;  // the answer at the cloud model's prices, if known
  int64_t prompt_tokens = 0;
  int64_t edge_tokens = 0;   // completion tokens the edge wrote (discarded drafts included)
  int64_t cloud_tokens = 0;  // completion tokens the cloud wrote (verifications included)
  double latency_ms = 0.0;
  bool data_left_device = false;
  std::string edge_model;        // the edge model's name
  std::string edge_sha256;       // the edge model file's sha256: its version
  std::string cloud_model;       // the cloud upstream's model name
  std::string cloud_upstream;    // the upstream that answered, "" when none did
  double ttft_ms = 0.0;          // time to the first token the client received
  std::string ticket;            // review ticket id, "" when none
  std::string edge_answer_hash;  // answer_hash() of the edge's answer; "" when it wrote none
  // The label: whether the edge's answer was good, and who said so: "verification" (the P3
  // cloud verdict), "review" (a reviewer's answer compared with it), "shadow" (shadow mode).
  std::optional<bool> edge_good;
  std::string label_source;

  bool operator==(const TraceRecord&) const = default;
};

// Which rows read() returns: unix_ms in [since_ms, until_ms), at most `limit` (0: all), oldest
// first (or newest first).
struct TraceQuery {
  int64_t since_ms = 0;
  int64_t until_ms = std::numeric_limits<int64_t>::max();
  size_t limit = 0;
  bool labelled_only = false;  // only rows with edge_good set
  bool newest_first = false;
};

class TraceLog {
 public:
  explicit TraceLog(std::shared_ptr<Database> db);

  // Stores a record (its id is ignored) and returns the id assigned. kInvalidArgument, naming
  // the field, for a tier outside edge/cloud/human/none, a label without a source (or a source
  // other than verification/review/shadow), a string over kMaxTraceNameBytes, a list over
  // kMaxTraceListItems, or a feature or number that is not finite.
  Result<int64_t> append(const TraceRecord& record);
  // Stores several records in one transaction; all or none.
  Status append_all(const std::vector<TraceRecord>& records);
  // append() on a connection the caller holds, e.g. inside its own transaction (the writer
  // thread stores a whole batch of traces, audit rows and labels in one).
  Result<int64_t> append(Connection& connection, const TraceRecord& record);
  // Whether append() would accept `record` (the same checks, no write).
  static Status check(const TraceRecord& record);
  // The database the log writes to: callers sharing one may share a transaction.
  const std::shared_ptr<Database>& database() const { return db_; }

  // A reviewer answered `ticket` with `answer_text`: the traces of that ticket that hold an
  // edge answer are labelled edge_good = (answer_hash(answer_text) == edge_answer_hash), source
  // "review" (replacing an earlier label: a person outranks a machine). Returns how many rows
  // were labelled: 0 when no trace has that ticket or its edge wrote no answer.
  Result<size_t> label_by_ticket(const std::string& ticket, std::string_view answer_text);
  // The same with the answer already hashed (answer_hash()), so that no answer text needs to
  // wait in a queue.
  Result<size_t> label_by_ticket_hash(const std::string& ticket, const std::string& answer_hash);
  Result<size_t> label_by_ticket_hash(Connection& connection, const std::string& ticket,
                                      const std::string& answer_hash);
  // Labels the traces of one request (shadow mode compares answers itself). `source` as
  // TraceRecord::label_source. Returns how many rows were labelled.
  Result<size_t> label_by_request(const std::string& request_id, bool edge_good,
                                  const std::string& source);

  Result<std::vector<TraceRecord>> read(const TraceQuery& query);
  // read() one row at a time, without holding them all: `visit` returns false to stop early.
  // The connection is held meanwhile; `visit` must not call back into this TraceLog.
  Status scan(const TraceQuery& query, const std::function<bool(TraceRecord&&)>& visit);

  Result<size_t> count();

  // Retention: deletes the oldest rows beyond the newest `max_rows`; returns how many.
  Result<size_t> prune(uint64_t max_rows);

 private:
  std::shared_ptr<Database> db_;
};

// Opens an existing database that holds traces, for readers (`tandem replay`, `tandem
// calibrate --traces`): never creates a file, and fails, naming the path, when it does not
// exist, is not a Tandem database, or predates traces (no `traces` table) — instead of quietly
// migrating it into an empty one.
Result<std::shared_ptr<Database>> open_trace_database(const std::string& path);

}  // namespace tandem::store
