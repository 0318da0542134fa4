#pragma once
// `tandem eval`: replays labelled traces through the server's routing code and reports each
// policy's cost-quality curve with RouteLLM's metrics, beside the random and oracle routers.
// docs/EVALUATION.md defines every number.
//
// Thread-safety: free functions without shared state.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.h"
#include "common/result.h"
#include "config/config.h"
#include "eval/curve.h"

namespace tandem::eval {

// Policies by name. `confidence`: the raw single-threshold cascade on the edge's own
// confidence; `learned`: the per-kind calibrated cascade; `classifier`: the ingress classifier
// alone (prompt only); `combined`: the calibrated cascade with the classifier's score as one
// more signal; `gated`: the default pattern, the classifier's gate at its configured threshold
// in front of the raw cascade (gated_policy.h); `length` (longer prompts to the cloud first),
// `random`, `oracle`: baselines.
inline constexpr const char* kPolicyNames[] = {"confidence", "learned", "classifier", "combined",
                                               "gated",      "length",  "random",     "oracle"};

struct EvalOptions {
  std::vector<std::string> data;  // files or directories
  std::string edge;
  std::string mid;  // empty: two tiers
  std::string cloud;
  std::string policy;  // empty: every policy
  // With a configuration: its classifier and cascade weights are used as configured (not
  // fitted), and the configured thresholds' operating point is reported.
  std::optional<config::GatewayConfig> config;
  bool edge_cost_zero = false;
  bool by_task = false;
  // Cross-fit the learned policies leaving one task out (each task's rows scored by a fit
  // that never saw the task) instead of 5 folds by row id.
  bool left_out_tasks = false;
  uint64_t seed = 0;
};

struct PolicyResult {
  std::string name;
  bool available = true;
  std::string unavailable_reason;
  std::string weights;  // "cross-fitted", "configured", "shipped"...
  CostModel cost_model = CostModel::kOneTier;
  std::vector<CurvePoint> curve;
  CurveSummary summary;
};

// The configured thresholds' result on the data (`--config`).
struct OperatingPoint {
  double quality = 0;
  double quality_vs_cloud = 0;
  double cloud_share = 0;
  double edge_share = 0;
  double review_share = 0;  // queries the policy hands to a human (not in the quality)
  double cost_usd = 0;
  double all_cloud_cost_usd = 0;
  std::vector<std::pair<std::string, size_t>> patterns;  // how many queries took each pattern
};

struct Breakdown {  // one task's rows
  std::string task;
  size_t rows = 0;
  std::vector<std::pair<std::string, size_t>> kinds;  // query kinds the router saw
  std::vector<PolicyResult> policies;
};

struct EvalReport {
  EvalOptions options;
  size_t rows_read = 0;
  size_t rows_used = 0;
  size_t rows_skipped = 0;
  size_t rows_without_cost = 0;
  double edge_quality = 0;
  double mid_quality = 0;
  double cloud_quality = 0;
  std::vector<PolicyResult> policies;  // asked for, in kPolicyNames order; baselines last
  std::optional<PolicyResult> three_tier;
  std::optional<OperatingPoint> operating;
  std::vector<Breakdown> tasks;
  std::vector<std::string> notes;  // caveats worth reading (in-sample weights, ...)
};

// Reports its phases: reading the traces, routing each prompt, cross-fitting the policies.
Result<EvalReport> evaluate(const EvalOptions& options, Progress& progress = no_progress());

nlohmann::ordered_json to_json(const EvalReport& report);
std::string to_text(const EvalReport& report);

}  // namespace tandem::eval
