#pragma once
// What-if on recorded traffic (`tandem replay`): every recorded request is decided again under
// a new configuration, by the same policy code the gateway runs (Router::decide), from the
// signals its trace kept — privacy and review findings by name, request hints, prompt features
// (scored again by the new configuration's ingress classifier), the query kind — and, for the
// P1 cascade, the edge's recorded confidence signals combined under the new per-kind weights
// and compared with the new per-kind threshold. The report says how the tier shares, the cost
// and the expected quality would move, and which requests would change tier.
//
// What cannot be replayed is said in the report's notes rather than guessed:
// - Health: both tiers are assumed up. Requests the original decision sent by a health or
//   capability rule (cloud.offline, edge.unavailable, cloud.not_configured, capability.*,
//   no_tier) keep their tier; so do requests that named a model, and requests that failed.
// - The consistency memory is not replayed: it depends on the order of live traffic.
// - Privacy and review rules are re-applied to the recorded findings only: a pattern or a
//   keyword list added by the new configuration needs the prompt text, which traces never keep.
// - A request newly sent to the cascade without recorded edge confidence cannot be judged; it
//   counts as an edge answer of unknown quality.
//
// The records are plain values: the routing library does not read the store (the CLI converts
// store::TraceRecord).
//
// Thread-safety: a Replayer is used from one thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "routing/confidence.h"
#include "routing/policy.h"
#include "routing/router.h"

namespace tandem::eval {

using routing::ConfidenceSnapshot;
using routing::QueryKind;
using routing::RequestHints;
using routing::Router;
using routing::RouteSignals;

// One recorded request, as its trace kept it.
struct RecordedRequest {
  std::string request_id;
  int64_t unix_ms = 0;
  std::string pattern;  // the pattern that ran ("cascade", "edge", ...)
  std::string tier;     // whose answer the client got: "edge", "cloud", "human", "none"
  bool escalated = false;
  std::string kind;  // query_kind_name(); an unknown name is recomputed from the features
  std::vector<std::string> reason_codes;
  std::vector<std::string> privacy_detectors;
  std::vector<std::string> review_rules;
  RequestHints hints;  // client included
  std::vector<float>
      features;             // read_recorded_features(); otherwise the recorded complexity is used
  double complexity = 0.0;  // the original classifier's score
  std::optional<ConfidenceSnapshot> confidence;  // the edge's signals when the cascade judged
  double cost_edge = 0.0;                        // USD, as recorded
  double cost_cloud = 0.0;
  std::optional<double> cost_all_cloud;  // the answer at the cloud's prices
  std::optional<bool> edge_good;         // the label, when one was recorded
};

struct TierShares {
  size_t edge = 0;
  size_t cloud = 0;
  size_t human = 0;
  size_t none = 0;
  size_t escalated = 0;  // of cloud + human: the edge answered first and was replaced
};

// A request whose tier changes.
struct ReplayChange {
  std::string request_id;
  std::string kind;
  std::string from_tier;  // "edge", "cloud", "human", "none"; "+escalated" when it was
  std::string to_tier;
  std::string reason;  // the new decision's first reason code ("ingress.simple", ...)
  std::string detail;  // for people: the new decision's reason, or the cascade's verdict
};

struct ReplayReport {
  size_t requests = 0;
  size_t redecided = 0;         // decided again under the new configuration
  size_t kept_health = 0;       // kept: a health or capability rule decided
  size_t kept_explicit = 0;     // kept: the client named a model
  size_t kept_failed = 0;       // kept: the request failed (tier none)
  size_t unjudged_cascade = 0;  // newly in the cascade without recorded edge confidence
  size_t features_missing = 0;  // the recorded complexity stood in for the new classifier
  TierShares before, after;
  double cost_before_usd = 0.0;
  double cost_after_usd = 0.0;
  size_t cost_unknown = 0;  // newly on the cloud without a recorded all-cloud cost (counted 0)
  // Mean expected quality over the requests with an estimate both before and after: a cloud
  // or human answer counts 1 (the reference), an edge answer its label when one was recorded,
  // else P(good) from its recorded confidence (the weights of the time before, the new ones
  // after); a request that failed counts 0.
  double quality_before = 0.0;
  double quality_after = 0.0;
  size_t quality_requests = 0;
  size_t labelled = 0;                // requests whose recorded label entered the estimate
  size_t changed = 0;                 // requests whose tier changes
  std::vector<ReplayChange> changes;  // the first max_changes, in record order
  std::vector<std::string> notes;     // what was not replayed, and why
};

class Replayer {
 public:
  // `router` is built from the new configuration (Router::create); `max_changes` bounds the
  // list of changed requests (all are counted).
  Replayer(std::shared_ptr<const Router> router, size_t max_changes);

  void add(const RecordedRequest& request);
  ReplayReport report() const;

 private:
  struct Outcome {
    std::string tier;
    bool escalated = false;
    double cost = 0.0;
    std::optional<double> quality;
    bool labelled = false;
    bool verified = false;  // P3: the cloud was called whatever it decided
  };
  // What is known of the edge's answer to a request: its quality (label, else confidence).
  struct EdgeAnswer {
    std::optional<double> quality;
    bool labelled = false;
    std::optional<double> confidence;  // P(good) under the new weights; none without tokens
  };
  Outcome before(const RecordedRequest& r) const;
  RouteSignals signals(const RecordedRequest& r, QueryKind kind);
  // The outcome of a request decided again under the new configuration; `reason` and
  // `detail` say why.
  Outcome redecide(const RecordedRequest& r, const Outcome& was, std::string& reason,
                   std::string& detail);
  static EdgeAnswer edge_answer(const RecordedRequest& r, const config::KindCascade& cascade,
                                double complexity);
  Outcome follow(routing::Pattern pattern, const RecordedRequest& r, QueryKind kind,
                 const config::KindCascade& cascade, EdgeAnswer& edge, std::string& detail);
  double cost_of(const RecordedRequest& r, const Outcome& was, const Outcome& now,
                 routing::Pattern pattern);
  // Adds the request's before and after to the report.
  void tally(const RecordedRequest& r, const Outcome& was, const Outcome& now,
             const std::string& reason, const std::string& detail);

  std::shared_ptr<const Router> router_;
  size_t max_changes_;
  ReplayReport report_;
  double quality_before_sum_ = 0.0;
  double quality_after_sum_ = 0.0;
};

nlohmann::json to_json(const ReplayReport& report);

}  // namespace tandem::eval
