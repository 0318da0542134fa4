#pragma once
// Shadow mode's measurements ("start in the cloud, move to the edge"): while the cloud answers,
// the edge answers a sampled share of the same queries beside it, and each such sample leaves
// one row here — when, the query's kind, whether the two answers agreed, and the edge's
// confidence and speed. Never prompt or answer text. A second table counts every routed
// request per kind and hour, so that a report can say what share of the traffic a kind is.
//
// Rows are bounded: beyond max_rows samples the oldest are deleted as new ones arrive, and
// traffic buckets older than kShadowTrafficRetentionMs are dropped.
//
// Thread-safety: every method may be called from any thread; the Database serialises them.
// The gateway writes from a background thread (server/gateway_shadow.h), never the request path.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace tandem::store {

inline constexpr uint64_t kDefaultMaxShadowRows = 100000;
inline constexpr int64_t kShadowHourMs = 3600 * 1000;
inline constexpr int64_t kShadowTrafficRetentionMs = 400LL * 24 * kShadowHourMs;
inline constexpr size_t kMaxShadowKindBytes = 64;

// What became of a sampled query.
enum class ShadowOutcome {
  // Both tiers answered; `agreed` and `f1` say how alike the answers were.
  kCompared,
  // The edge had no free slot: the sample was skipped rather than queued behind real work.
  kEdgeBusy,
  // The edge could not answer (prompt too long for its context, engine error).
  kEdgeFailed,
};
const char* shadow_outcome_name(ShadowOutcome outcome);  // "compared", "edge_busy", ...

struct ShadowSample {
  int64_t unix_ms = 0;
  std::string kind;  // routing::query_kind_name(): lower case letters and '_'
  ShadowOutcome outcome = ShadowOutcome::kCompared;
  // kCompared only (zero otherwise):
  bool agreed = false;         // the normalised final answers are equal
  double f1 = 0.0;             // token-overlap F1 of the two answers, 0..1
  int edge_tokens = 0;         // tokens the edge generated
  double edge_confidence = 0;  // the cascade's combined confidence, 0..1
  double mean_logprob = 0.0, min_logprob = 0.0, mean_entropy = 0.0, mean_margin = 0.0;
  double edge_ms = 0.0;   // the edge's answer: submitted -> finished
  double cloud_ms = 0.0;  // the client's answer: request start -> finished
};

// Requests of one kind in one hour bucket: all `model: tandem` requests routed while shadow mode
// was on, and those of them the cloud answered because of it (the others stayed where a rule
// put them: the edge for private data, a human...).
struct ShadowTraffic {
  std::string kind;
  int64_t hour_ms = 0;  // the bucket's start, a multiple of kShadowHourMs
  int64_t requests = 0;
  int64_t shadowed = 0;  // at most `requests`
};

// Everything the report needs about one kind, summed over the rows since some time.
struct ShadowKindTotals {
  std::string kind;
  int64_t compared = 0;
  int64_t agreed = 0;
  int64_t edge_busy = 0;
  int64_t edge_failed = 0;
  double sum_f1 = 0.0;  // over compared samples, as the sums below
  double sum_edge_confidence = 0.0;
  double sum_edge_ms = 0.0;
  double sum_cloud_ms = 0.0;
  int64_t sum_edge_tokens = 0;
  int64_t requests = 0;  // traffic buckets starting at or after the cut
  int64_t shadowed = 0;
  int64_t first_unix_ms = 0;  // the oldest sample counted; 0 when none
  int64_t last_unix_ms = 0;
};

class ShadowLog {
 public:
  explicit ShadowLog(std::shared_ptr<Database> db, uint64_t max_rows = kDefaultMaxShadowRows);

  // Stores the samples and adds the traffic counts, in one transaction; then deletes the
  // oldest samples beyond max_rows and traffic older than the retention. kInvalidArgument,
  // storing nothing, for an empty or malformed kind, a value out of range or not finite
  // (f1 or confidence outside 0..1, negative tokens or times), shadowed > requests.
  Status append(const std::vector<ShadowSample>& samples,
                const std::vector<ShadowTraffic>& traffic);

  // Per kind (sorted by name) since `since_unix_ms` (0: everything kept): samples taken at or
  // after it, and traffic buckets starting at or after it. Kinds with neither are absent.
  Result<std::vector<ShadowKindTotals>> totals(int64_t since_unix_ms);

  // The newest samples first, at most `limit` (1..1000).
  Result<std::vector<ShadowSample>> recent(size_t limit);

  // Samples stored now.
  Result<size_t> count();

 private:
  std::shared_ptr<Database> db_;
  uint64_t max_rows_;
};

}  // namespace tandem::store
