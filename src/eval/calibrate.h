#pragma once
// `tandem calibrate`: fits the cascade (the learned confidence combination per query kind and
// the thresholds) on a sample of labelled traffic for a target quality or cloud share, reports
// what to expect with a bootstrap confidence interval, checks it on the rows it did not fit
// on, and renders the result as configuration edits. docs/EVALUATION.md explains the method.
//
// Thread-safety: free functions without shared state.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.h"
#include "common/result.h"
#include "config/config.h"
#include "config/config_editor.h"
#include "eval/bootstrap.h"
#include "eval/calibration.h"
#include "eval/samples.h"

namespace tandem::eval {

struct CalibrateOptions {
  // Exactly one target: the share of the cloud's quality to keep, or the share of queries
  // the cloud may answer.
  std::optional<double> target_quality;
  std::optional<double> target_cloud_share;
  bool combined = false;          // also use the classifier's score (the `combined` policy)
  std::string per_kind = "auto";  // "on", "off", or "auto": per kind where it helps
  SignalSet signals;              // beyond the mean logprob (all four from server traces)
  double fit_share = 0.7;         // rows fitted on; the rest check the result (0 < x <= 1)
  uint64_t seed = 0;
  size_t bootstrap = 1000;
  config::CascadeConfig base;  // what the calibration starts from (the current configuration)
};

struct RealizedPoint {  // the calibrated cascade applied to a set of rows, as the server would
  size_t rows = 0;
  double quality = 0;
  double quality_vs_cloud = 0;
  double cloud_share = 0;
  double cost_saved = 0;  // vs all-cloud
};

struct VariantTrial {
  bool per_kind = false;
  double cloud_share = 0;  // at the target quality (or quality at the target share), fit rows
  double quality_vs_cloud = 0;
};

// What the target quality costs on a set of rows, in cloud share, for choices made knowing
// the rows' outcomes: the calibrated policy's own score with its threshold tuned on these very
// rows (hindsight: what a perfect threshold would have cost), and the oracle (the cloud
// exactly where it is better). The calibrated choice's excess over hindsight is its regret.
struct HindsightShares {
  std::optional<double> tuned;  // nullopt: the target is out of the policy's reach
  std::optional<double> oracle;
};

// The calibration redone without one task, applied to that task's rows: how far its promise
// holds on traffic of a kind it never saw.
struct LeftOutTaskCheck {
  std::string task;
  RealizedPoint realized;     // on the left-out task's rows
  double target = 0;          // what was asked: a share of the cloud's quality or a cloud share
  HindsightShares hindsight;  // with --target-quality
};

struct CalibrateResult {
  CalibrateOptions options;
  bool per_kind = false;
  std::vector<VariantTrial> variants;
  double margin = 0;  // escalate when cloud quality of the kind - P(edge good) >= margin
  Calibration calibration;
  config::CascadeConfig cascade;
  size_t fit_rows = 0;
  size_t check_rows = 0;
  Interval expected_quality_vs_cloud;  // on the fit rows, out of fold, with a 95% interval
  Interval expected_cloud_share;
  RealizedPoint check;                           // on the held-out rows (check_rows == 0: none)
  HindsightShares check_hindsight;               // on the held-out rows, with --target-quality
  std::vector<LeftOutTaskCheck> left_out_tasks;  // with check_left_out_tasks
  std::vector<std::string> notes;
};

// Reports one phase: each variant's cross-fit, the final fit and the bootstrap.
Result<CalibrateResult> calibrate(const std::vector<Sample>& samples,
                                  const CalibrateOptions& options,
                                  Progress& progress = no_progress());

// For each task of the samples (at least two tasks): calibrates on every other task's rows
// with the same options and applies the result to the left-out task's rows. Reports one step
// per task.
Result<std::vector<LeftOutTaskCheck>> check_left_out_tasks(const std::vector<Sample>& samples,
                                                           const CalibrateOptions& options,
                                                           Progress& progress = no_progress());

// The configuration edits that install the result (routing.cascade.*: threshold, weights and
// every query kind's threshold and weights).
std::vector<config::ConfigEdit> config_edits(const CalibrateResult& result);

// The cascade applied to rows exactly as the server applies it (routing::cascade_settings and
// routing::combined_confidence).
RealizedPoint apply_cascade(const config::CascadeConfig& cascade,
                            const std::vector<const Sample*>& rows);

nlohmann::ordered_json to_json(const CalibrateResult& result);
std::string to_text(const CalibrateResult& result);

}  // namespace tandem::eval
