#pragma once
// Model version skew: the edge model and the cloud models change independently (a new GGUF is
// pushed to the device, a provider silently moves an alias to a new snapshot), and the
// agreement routing was tuned on quietly goes stale. This monitor keeps
//
//   - the edge model's identity (name, sha256, GGUF general.version), with every change of
//     sha256 and when it happened, and an optional policy: a minimum edge version and/or a
//     list of allowed sha256 (prefixes);
//   - per upstream, the model name its responses report, with every change and when;
//   - the last `history` canary runs: a fixed prompt set answered by both tiers, and how many
//     answers agreed.
//
// and turns them into alerts. Agreement of a run = agreed / (prompts - failed): prompts a tier
// failed to answer say nothing about agreement. A run with every prompt failed has no
// agreement and raises skew.canary_failed instead. Two agreement alerts, because they catch
// different things: an absolute floor (min_agreement), and a drop of the last run below the
// mean of the earlier runs kept (max_agreement_drop), which catches a version change that
// costs agreement while it is still above the floor. The mean is unweighted: each run is one
// measurement of the pair of models in service at the time.
//
// A model change (edge or cloud) alerts until the next canary run at or after it, which is
// the run that measures the new pair.
//
// Pure bookkeeping: no I/O, no clock (times come in with each call), strings bounded to
// kMaxSkewTextBytes, at most kMaxUpstreams upstreams and `history` runs kept.
//
// Thread-safety: every method may be called from any thread; one mutex guards all state.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::telemetry {

// Strings kept from callers (model names, versions, hashes) are cut to this many bytes.
inline constexpr size_t kMaxSkewTextBytes = 256;
// Further upstreams are not tracked (a configuration has a handful).
inline constexpr size_t kMaxUpstreams = 64;
// The most canary runs `history` may keep (a year of runs every five minutes).
inline constexpr size_t kMaxCanaryHistory = 100000;
// The shortest sha256 prefix allowed_edge_sha256 accepts: 48 bits, no accidental match.
inline constexpr size_t kMinShaPrefixHexDigits = 12;

// Compares two version strings: negative, zero or positive as `a` is older than, the same as or
// newer than `b`.
//   - A leading "v" or "V" is ignored, and so is build metadata from the first "+" on.
//   - The leading dotted numbers compare numerically, component by component, missing ones
//     counting as 0: "1.10" > "1.9", "2" == "2.0", "01.2" == "1.2"; any number of digits.
//   - Whatever follows the numbers (one separator "-", "." or "_" dropped: "1.2-rc1" -> "rc1")
//     decides only when the numbers are equal: no suffix is newer than any suffix, since a
//     suffix marks a pre-release ("1.2-rc1" < "1.2"); two suffixes compare as strings, their
//     runs of digits by value ("rc10" > "rc9").
//   - A string that is not a version (is_version false, "" included) is older than every
//     version; two such strings compare bytewise.
int compare_versions(std::string_view a, std::string_view b);

// Whether `text` reads as a version: after an optional "v"/"V", a digit first; at most
// kMaxSkewTextBytes bytes, all printable ASCII without spaces.
bool is_version(std::string_view text);

struct ModelVersion {
  std::string name;
  std::string sha256;
  std::string version;  // GGUF general.version, may be empty
};

struct SkewOptions {
  // Empty: no policy. Else the edge model's general.version must be at least this.
  std::string min_edge_version;
  // Empty: any. Else the edge model's sha256 must start with one of these (hex, any case, at
  // least kMinShaPrefixHexDigits digits).
  std::vector<std::string> allowed_edge_sha256;
  // A canary run's agreement below this alerts.
  double min_agreement = 0.6;
  // Alert when the last run's agreement is more than this below the mean of the earlier runs.
  double max_agreement_drop = 0.2;
  // Canary runs kept, 1 .. kMaxCanaryHistory.
  size_t history = 288;

  // Empty when valid; else a message naming the first offending field as spelled here.
  std::string validate() const;
};

struct CanaryRun {
  int64_t at_ms = 0;
  size_t prompts = 0;
  size_t agreed = 0;
  size_t failed = 0;  // prompts where a tier failed to answer
  std::string edge_sha256;
  std::string cloud_model;
};

// agreed / (prompts - failed); nullopt when no prompt was answered by both tiers. Counts that
// cannot be (failed > prompts, agreed > answered) are clamped first.
std::optional<double> canary_agreement(const CanaryRun& run);

// What one upstream's responses have reported as their model.
struct CloudModelSeen {
  std::string upstream;
  std::string model;          // the latest reported
  int64_t first_seen_ms = 0;  // when `model` was first reported (since the last change)
  int64_t last_seen_ms = 0;
  uint64_t changes = 0;        // how many times the reported model changed
  std::string previous_model;  // before the last change; empty without one
  int64_t changed_at_ms = 0;   // the last change; 0 without one
  bool unverified = false;     // changed, and no canary run since: alerting
};

class SkewMonitor {
 public:
  // Options are expected to have passed validate(); out-of-range numbers are clamped (NaN to
  // the default). A policy that does not validate fails closed: invalid allowed_edge_sha256
  // entries match nothing, and a min_edge_version that is not a version is met by no model.
  explicit SkewMonitor(SkewOptions options);

  // The edge model now in service. A sha256 different from the previous one (compared without
  // regard to case) is an edge version change, recorded with `now_ms`; the first call is not.
  void set_edge(const ModelVersion& edge, int64_t now_ms);

  // The model name an upstream's response reported. A change from the previous one is a cloud
  // version change, alerting until the next canary run after it. An empty model is ignored
  // (the upstream did not say); so are upstreams beyond kMaxUpstreams.
  void observe_cloud(const std::string& upstream, const std::string& reported_model,
                     int64_t now_ms);

  // One canary run. Runs are kept in the order recorded, the oldest dropped beyond `history`;
  // a run at or after a model change clears that change's alert.
  void record_canary(const CanaryRun& run);

  struct EdgeCheck {
    bool allowed = true;
    // Empty when allowed; else what is wrong, naming the policy, e.g. "edge model version 1.2
    // is below operations.version.min_edge_version 1.3". Several problems are joined by
    // "; ".
    std::string problem;
  };

  // The edge model against the policy. Allowed when there is no policy; not allowed when there
  // is one and no edge model has been set yet.
  EdgeCheck check_edge() const;

  struct Alert {
    // "skew.edge_version"         the edge model fails the policy (check_edge)
    // "skew.edge_changed"         the edge sha256 changed; no canary run since
    // "skew.cloud_model_changed"  an upstream reported a new model; no canary run since
    // "skew.canary_failed"        the last run had no prompt answered by both tiers
    // "skew.low_agreement"        the last run's agreement is below min_agreement
    // "skew.agreement_drop"       ...or more than max_agreement_drop below the earlier mean
    std::string code;
    std::string detail;
    // When the condition began: the change for *_changed; the edge model's set time for
    // edge_version (0 while none is known); the first run of the trailing streak for
    // canary_failed and low_agreement; the last run for agreement_drop.
    int64_t since_ms = 0;
  };

  struct Snapshot {
    ModelVersion edge;
    int64_t edge_since_ms = 0;  // when this edge model was set
    uint64_t edge_changes = 0;
    std::string previous_edge_sha256;
    std::vector<CloudModelSeen> cloud;     // by upstream name
    std::vector<CanaryRun> history;        // oldest first
    std::optional<double> last_agreement;  // the last run's; nullopt if it had none
    // Mean agreement of the runs before the last (those with one): the baseline the drop is
    // measured against.
    std::optional<double> mean_agreement;
    std::vector<Alert> alerts;  // in the order of the codes above
    EdgeCheck edge_check;
  };

  // Everything above, taken under one lock: O(history + upstreams).
  Snapshot snapshot() const;

 private:
  EdgeCheck check_edge_locked() const;
  // The alerts snapshot() adds to `out` (which holds the state already). Hold mutex_.
  void model_alerts_locked(Snapshot& out) const;
  void canary_alerts_locked(Snapshot& out) const;

  SkewOptions options_;
  // allowed_edge_sha256 lower-cased, invalid entries left out; the policy stays on (and then
  // fails closed) when the configured list was not empty.
  std::vector<std::string> allowed_sha_;
  bool sha_policy_ = false;
  mutable std::mutex mutex_;
  bool edge_set_ = false;                        // guarded by mutex_
  ModelVersion edge_;                            // guarded by mutex_
  int64_t edge_since_ms_ = 0;                    // guarded by mutex_
  uint64_t edge_changes_ = 0;                    // guarded by mutex_
  std::string previous_edge_sha256_;             // guarded by mutex_
  bool edge_unverified_ = false;                 // guarded by mutex_: changed, no canary run since
  std::map<std::string, CloudModelSeen> cloud_;  // guarded by mutex_
  std::deque<CanaryRun> history_;                // guarded by mutex_
};

}  // namespace tandem::telemetry
