#pragma once
// Training and evaluating the complexity classifier (complexity_model.h) on labelled routing
// traces ("routing trace v1": one JSON object per line with a prompt and, per model, the
// score of its answer). `tandem router train` and `tandem router eval` are thin wrappers.
//
// The label for an (edge, cloud) pair is "the cloud is needed": the cloud's score is higher
// than the edge's (ties: the edge suffices). The model is an L2-regularised logistic regression
// over standardised features, fitted by Newton's method: deterministic, no randomness beyond
// the seeded, hash-based train/holdout split. docs/ROUTER_TRAINING.md has the details.
//
// Thread-safety: free functions without shared state.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "eval/trace_data.h"
#include "routing/complexity_model.h"
#include "routing/prompt_features.h"

namespace tandem::eval {

using routing::ComplexityModel;
using routing::PromptFeatures;

struct TrainingOptions {
  std::vector<std::string> data_files;
  std::string edge;   // model name in the traces
  std::string cloud;  // model name in the traces
  // L2 penalty on the weights (objective: sum of log-losses + l2/2 * |w|^2). nullopt: chosen
  // from kL2Grid by 5-fold cross-validated log-loss on the training split.
  std::optional<double> l2;
  double holdout = 0.2;  // fraction of rows held out, in [0, 0.9]
  uint64_t seed = 0;     // salts the split hash
  std::vector<double> cloud_shares = {0.1, 0.2, 0.3, 0.4, 0.5};  // for suggested thresholds
};

inline constexpr double kL2Grid[] = {0.3, 1, 3, 10, 30, 100, 300, 1000};

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
  std::string edge;
  std::string cloud;
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
};

struct TrainingReport {
  TrainingOptions options;
  double l2 = 0;                       // the penalty used
  std::vector<L2Candidate> l2_search;  // empty when options.l2 was given
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
// usable rows, a label with one class only.
Result<TrainingReport> train_router(const TrainingOptions& options);

// Scores every row that has both models. Routing points use the thresholds suggested in the
// model's metadata when it has them, else thresholds for `cloud_shares` on these rows.
Result<EvaluationReport> evaluate_router(const ComplexityModel& model,
                                         const std::vector<std::string>& data_files,
                                         const std::string& edge, const std::string& cloud,
                                         const std::vector<double>& cloud_shares = {0.1, 0.2, 0.3,
                                                                                    0.4, 0.5});

nlohmann::ordered_json to_json(const BinaryMetrics& metrics);
nlohmann::ordered_json to_json(const EvaluationReport& report);
nlohmann::ordered_json to_json(const TrainingReport& report);

// Writes `content` to `path` through a temporary file in the same directory and a rename, so
// readers never see half a file.
Status write_file_atomically(const std::string& path, std::string_view content);

}  // namespace tandem::eval
