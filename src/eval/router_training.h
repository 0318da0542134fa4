#pragma once
// Training and evaluating the complexity classifier (complexity_model.h) on labelled routing
// traces ("routing trace v1": one JSON object per line with a prompt and, per model, the
// score of its answer). `tandem router train` and `tandem router eval` are thin wrappers.
//
// The label for an (edge, cloud) pair is "the cloud is needed": the cloud's score is higher
// than the edge's (ties: the edge suffices). Data from several sources may carry different
// pairs: each row is labelled by the first pair it has both models of. The model is a logistic
// regression over standardised features that starts from the framework's prior
// (router_prior.h) and fits the data's correction under an L2 penalty (router_fit.h). What
// generalises is measured by leaving one task, then one source, out (left_out.h); the penalty
// is chosen by the left-out tasks' APGR, never by in-distribution fit; each left-out slice's
// difference from the baselines comes with a paired-bootstrap interval. Deterministic: no
// randomness beyond the seeded, hash-based split and the seeded bootstrap. docs/ROUTER_TRAINING.md
// has the details.
//
// Thread-safety: free functions without shared state.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/progress.h"
#include "common/result.h"
#include "eval/left_out.h"
#include "eval/pair_ordering.h"
#include "eval/router_fit.h"
#include "eval/router_prior.h"
#include "eval/trace_data.h"
#include "routing/complexity_model.h"
#include "routing/prompt_features.h"

namespace tandem::eval {

using routing::ComplexityModel;
using routing::PromptFeatures;

struct ModelPair {
  std::string edge;   // model name in the traces
  std::string cloud;  // model name in the traces
};

// The cloud shares thresholds are suggested for, unless told otherwise.
inline const std::vector<double>& default_cloud_shares() {
  static const std::vector<double> shares = {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5};
  return shares;
}

struct TrainingOptions {
  std::vector<std::string> data_files;
  // Labelled rows from elsewhere, used beside the files: the gateway's own traces
  // (server_traces.h), where the label is the edge answer's judged quality.
  std::vector<TrainingExample> examples;
  // The model in service: scored as it is on the same left-out slices; the new weights are
  // accepted only when their left-out mean APGR is at least its.
  const ComplexityModel* incumbent = nullptr;
  // Prompt pairs, one plainly harder (task_training.h): the new weights are accepted only when
  // they keep common sense on them (pair_ordering.h), compared with `incumbent` or, without
  // one, the shipped weights. Empty: not checked.
  std::vector<PromptPair> common_sense;
  std::vector<ModelPair> pairs;  // a row is labelled by the first pair it has both models of
  // L2 penalty on the correction to the prior (objective: weighted sum of log-losses +
  // l2/2 * |w - prior|^2); kPriorOnly keeps the prior. nullopt: chosen from kL2Grid by the mean
  // APGR on left-out tasks (5-fold cross-validated log-loss when the data has fewer than
  // kMinLeftOutTasks tasks).
  std::optional<double> l2;
  std::string prior;     // a prior file; empty: the shipped prior; "none": no prior (toward 0)
  double holdout = 0.2;  // fraction of rows held out, in [0, 0.9]
  uint64_t seed = 0;     // salts the split hash
  size_t max_slice_rows = 2000;    // rows of one source's task used, chosen by hash; 0: all
  size_t slice_weight_rows = 500;  // a larger slice weighs as much as this many rows; 0: off
  std::vector<double> cloud_shares = default_cloud_shares();  // for suggested thresholds
};

inline constexpr double kL2Grid[] = {1, 10, 100, 1000, 10000, kPriorOnly};
inline constexpr size_t kMinLeftOutTasks = 3;

// A probabilistic classifier's quality on one set of rows.
struct BinaryMetrics {
  size_t rows = 0;
  double base_rate = 0;  // share of rows where the cloud is needed
  double auc = 0;        // NaN when one class is absent
  double log_loss = 0;
};

// What routing with one threshold (cloud when score >= threshold) gives on a set of rows.
struct RoutingPoint {
  double target_share = 0;  // the cloud share the threshold was chosen for
  double threshold = 0;
  double cloud_share = 0;     // realised on these rows
  double quality = 0;         // mean score of the routed answers
  double quality_kept = 0;    // quality / all-cloud quality
  double gap_recovered = 0;   // (quality - all edge) / (all cloud - all edge)
  double random_quality = 0;  // a random router with the same cloud share
};

struct EvaluationReport {
  std::vector<std::string> data_files;
  std::vector<ModelPair> pairs;
  size_t rows_read = 0;
  size_t rows_skipped = 0;  // missing the edge's or the cloud's score
  BinaryMetrics metrics;
  double all_edge_quality = 0;
  double all_cloud_quality = 0;
  std::vector<RoutingPoint> points;
};

struct L2Candidate {
  double l2 = 0;
  double cv_log_loss = 0;
  double cv_auc = 0;
  double left_out_apgr = 0;  // mean over left-out tasks; 0 when not measured
};

struct TrainingReport {
  TrainingOptions options;
  double l2 = 0;                       // the penalty used
  std::string l2_selection;            // how it was chosen
  std::vector<L2Candidate> l2_search;  // empty when options.l2 was given
  std::string prior_source;            // the prior file, "builtin" or "none"
  // Fitted without each task (source) in turn, scored on it; the task one also for the prior
  // alone. Empty when the data has fewer than kMinLeftOutTasks tasks (sources: one).
  LeftOutReport left_out_task;
  LeftOutReport left_out_task_prior;
  LeftOutReport left_out_source;
  // false: worse than the incumbent on the left-out tasks, or common sense lost
  bool accepted = true;
  std::optional<CommonSense> common_sense;  // when options.common_sense has pairs
  size_t rows_read = 0;
  size_t rows_used = 0;
  size_t rows_skipped = 0;  // missing the edge's or the cloud's score
  BinaryMetrics train;
  BinaryMetrics holdout;                       // rows == 0 when options.holdout == 0
  EvaluationReport holdout_routing;            // thresholds suggested on the training split
  std::vector<std::string> constant_features;  // no variation in the training split
  std::vector<std::pair<std::string, double>> top_features;  // by |weight|, largest first
  std::optional<ComplexityModel> model;                      // always set on success
  nlohmann::ordered_json weights_file;                       // what `--out` gets: model + metadata
};

// Loads the traces, splits, fits and evaluates. Errors: unreadable or malformed data (file:line),
// an edge or cloud model absent from the data (the message lists the models present), no
// usable rows, a label with one class only. Reports its phases: reading the traces, extracting
// features, one step per fit of the penalty search and of each left-out group, the final fits.
Result<TrainingReport> train_router(const TrainingOptions& options,
                                    Progress& progress = no_progress());

// Scores every row that has both models. Routing points use the thresholds suggested in the
// model's metadata when it has them, else thresholds for `cloud_shares` on these rows.
Result<EvaluationReport> evaluate_router(
    const ComplexityModel& model, const std::vector<std::string>& data_files,
    const std::vector<ModelPair>& pairs,
    const std::vector<double>& cloud_shares = default_cloud_shares(),
    Progress& progress = no_progress());

// "edge -> cloud; edge -> cloud", for messages and reports.
std::string describe(const std::vector<ModelPair>& pairs);

nlohmann::ordered_json to_json(const BinaryMetrics& metrics);
nlohmann::ordered_json to_json(const EvaluationReport& report);
nlohmann::ordered_json to_json(const TrainingReport& report);
nlohmann::ordered_json to_json(const LeftOutReport& report);

// Writes `content` to `path` through a temporary file in the same directory and a rename, so
// readers never see half a file.
Status write_file_atomically(const std::string& path, std::string_view content);

}  // namespace tandem::eval
