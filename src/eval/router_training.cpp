#include "eval/router_training.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>

#include <unistd.h>

#include "common/time_text.h"

namespace tandem::eval {

// The per-request routing code this offline work drives.
using namespace routing;  // NOLINT(google-build-using-namespace)

namespace {

constexpr size_t kParams = kFeatureCount + 1;  // bias first, then one weight per feature
constexpr size_t kFolds = 5;
constexpr size_t kTopFeatures = 10;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- Loading -------------------------------------------------------------------------------

struct Example {
  PromptFeatures features;
  double edge = 0;
  double cloud = 0;
  int label = 0;
  bool holdout = false;
  uint64_t hash = 0;
};

struct Dataset {
  std::vector<Example> examples;
  size_t rows_read = 0;
  size_t rows_skipped = 0;
};

Result<Dataset> load_dataset(const std::vector<std::string>& files, const std::string& edge,
                             const std::string& cloud, double holdout, uint64_t seed) {
  if (edge.empty() || cloud.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "both an edge and a cloud model are needed");
  }
  if (edge == cloud) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the edge and the cloud model are the same ('" + edge + "')");
  }
  auto loaded = load_trace_paths(files);
  if (!loaded) {
    return loaded.error();
  }
  const std::vector<TraceRow>& rows = loaded.value();
  if (auto present = require_models(rows, {{"edge", edge}, {"cloud", cloud}}); !present) {
    return present.error();
  }
  Dataset data;
  data.rows_read = rows.size();
  for (const auto& row : rows) {
    const auto edge_score = row.score(edge);
    const auto cloud_score = row.score(cloud);
    if (!edge_score || !cloud_score) {
      ++data.rows_skipped;
      continue;
    }
    Example example;
    example.features = extract_features(prompt_view(row));
    example.edge = *edge_score;
    example.cloud = *cloud_score;
    example.label = *cloud_score > *edge_score ? 1 : 0;
    example.hash = row_hash(row.id, seed);
    example.holdout = unit_interval(example.hash) < holdout;
    data.examples.push_back(example);
  }
  return data;
}

// ---- Metrics -------------------------------------------------------------------------------

// Mann-Whitney AUC with average ranks for ties. NaN when one class is absent.
double auc(const std::vector<double>& scores, const std::vector<int>& labels) {
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double positive_rank_sum = 0;
  size_t positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) {
      ++j;
    }
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) {
      if (labels[order[k]] == 1) {
        positive_rank_sum += average_rank;
        ++positives;
      }
    }
    i = j;
  }
  const size_t negatives = n - positives;
  if (positives == 0 || negatives == 0) {
    return kNaN;
  }
  const double p = static_cast<double>(positives);
  return (positive_rank_sum - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

double log_loss(const std::vector<double>& scores, const std::vector<int>& labels) {
  if (scores.empty()) {
    return kNaN;
  }
  double sum = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    const double p = std::clamp(scores[i], 1e-15, 1 - 1e-15);
    sum -= labels[i] == 1 ? std::log(p) : std::log(1 - p);
  }
  return sum / static_cast<double>(scores.size());
}

BinaryMetrics binary_metrics(const std::vector<double>& scores, const std::vector<int>& labels) {
  BinaryMetrics metrics;
  metrics.rows = scores.size();
  double positives = 0;
  for (int label : labels) {
    positives += label;
  }
  metrics.base_rate = scores.empty() ? kNaN : positives / static_cast<double>(scores.size());
  metrics.auc = auc(scores, labels);
  metrics.log_loss = log_loss(scores, labels);
  return metrics;
}

// The threshold that sends about `share` of these scores to the cloud (score >= threshold).
double threshold_for_share(std::vector<double> scores, double share) {
  if (scores.empty()) {
    return kNaN;
  }
  std::sort(scores.begin(), scores.end(), std::greater<>());
  const auto wanted = static_cast<size_t>(std::llround(share * static_cast<double>(scores.size())));
  return scores[std::clamp<size_t>(wanted, 1, scores.size()) - 1];
}

struct Scored {
  double score;
  const Example* example;
};

void fill_routing(const std::vector<Scored>& rows,
                  const std::vector<std::pair<double, double>>& share_thresholds,
                  EvaluationReport& report) {
  double edge_sum = 0;
  double cloud_sum = 0;
  std::vector<double> scores;
  std::vector<int> labels;
  for (const auto& row : rows) {
    edge_sum += row.example->edge;
    cloud_sum += row.example->cloud;
    scores.push_back(row.score);
    labels.push_back(row.example->label);
  }
  const double n = static_cast<double>(rows.size());
  report.metrics = binary_metrics(scores, labels);
  report.all_edge_quality = rows.empty() ? kNaN : edge_sum / n;
  report.all_cloud_quality = rows.empty() ? kNaN : cloud_sum / n;
  report.points.clear();
  if (rows.empty()) {
    return;
  }
  for (const auto& [share, threshold] : share_thresholds) {
    RoutingPoint point;
    point.target_share = share;
    point.threshold = threshold;
    double cloud_rows = 0;
    double quality_sum = 0;
    for (const auto& row : rows) {
      const bool to_cloud = row.score >= threshold;
      cloud_rows += to_cloud ? 1 : 0;
      quality_sum += to_cloud ? row.example->cloud : row.example->edge;
    }
    const double all_edge = report.all_edge_quality;
    const double all_cloud = report.all_cloud_quality;
    point.cloud_share = cloud_rows / n;
    point.quality = quality_sum / n;
    point.quality_kept = all_cloud > 0 ? point.quality / all_cloud : kNaN;
    point.gap_recovered =
        all_cloud != all_edge ? (point.quality - all_edge) / (all_cloud - all_edge) : kNaN;
    point.random_quality = all_edge + point.cloud_share * (all_cloud - all_edge);
    report.points.push_back(point);
  }
}

// ---- Fitting -------------------------------------------------------------------------------

using Params = std::array<double, kParams>;

// Standardised, clipped rows (exactly what ComplexityModel::score computes) with a leading 1.
struct Design {
  std::vector<Params> x;
  std::vector<int> y;
};

Design make_design(const std::vector<const Example*>& examples,
                   const std::array<double, kFeatureCount>& means,
                   const std::array<double, kFeatureCount>& stds) {
  Design design;
  design.x.reserve(examples.size());
  for (const Example* example : examples) {
    Params row{};
    row[0] = 1.0;
    for (size_t i = 0; i < kFeatureCount; ++i) {
      const double z = (static_cast<double>(example->features.values[i]) - means[i]) / stds[i];
      row[i + 1] =
          std::clamp(z, -ComplexityModel::kMaxStandardised, ComplexityModel::kMaxStandardised);
    }
    design.x.push_back(row);
    design.y.push_back(example->label);
  }
  return design;
}

double dot(const Params& a, const Params& b) {
  double sum = 0;
  for (size_t i = 0; i < kParams; ++i) {
    sum += a[i] * b[i];
  }
  return sum;
}

// log(1 + exp(s)) - y s, without overflow.
double row_loss(double logit, int label) {
  return std::log1p(std::exp(-std::abs(logit))) + std::max(logit, 0.0) - label * logit;
}

double objective(const Design& design, const Params& theta, double l2) {
  double sum = 0;
  for (size_t r = 0; r < design.x.size(); ++r) {
    sum += row_loss(dot(design.x[r], theta), design.y[r]);
  }
  for (size_t i = 1; i < kParams; ++i) {
    sum += 0.5 * l2 * theta[i] * theta[i];
  }
  return sum;
}

// Solves H d = g for a symmetric positive definite H (Cholesky). False if H is not.
bool solve_spd(std::array<Params, kParams> h, Params g, Params& d) {
  for (size_t j = 0; j < kParams; ++j) {
    double diagonal = h[j][j];
    for (size_t k = 0; k < j; ++k) {
      diagonal -= h[j][k] * h[j][k];
    }
    if (!(diagonal > 0)) {
      return false;
    }
    h[j][j] = std::sqrt(diagonal);
    for (size_t i = j + 1; i < kParams; ++i) {
      double value = h[i][j];
      for (size_t k = 0; k < j; ++k) {
        value -= h[i][k] * h[j][k];
      }
      h[i][j] = value / h[j][j];
    }
  }
  for (size_t i = 0; i < kParams; ++i) {  // L z = g
    for (size_t k = 0; k < i; ++k) {
      g[i] -= h[i][k] * g[k];
    }
    g[i] /= h[i][i];
  }
  for (size_t i = kParams; i-- > 0;) {  // L^T d = z
    for (size_t k = i + 1; k < kParams; ++k) {
      g[i] -= h[k][i] * g[k];
    }
    g[i] /= h[i][i];
  }
  d = g;
  return true;
}

// Newton's method with step halving on the penalised log-likelihood; the bias is not
// penalised. Converges in about ten steps; deterministic for a given design.
Params fit_logistic(const Design& design, double l2) {
  Params theta{};
  double current = objective(design, theta, l2);
  for (int iteration = 0; iteration < 100; ++iteration) {
    Params gradient{};
    std::array<Params, kParams> hessian{};
    for (size_t r = 0; r < design.x.size(); ++r) {
      const Params& x = design.x[r];
      const double p = 1.0 / (1.0 + std::exp(-dot(x, theta)));
      const double residual = p - design.y[r];
      const double curvature = p * (1 - p);
      for (size_t i = 0; i < kParams; ++i) {
        gradient[i] += residual * x[i];
        const double cx = curvature * x[i];
        for (size_t j = 0; j <= i; ++j) {
          hessian[i][j] += cx * x[j];
        }
      }
    }
    for (size_t i = 0; i < kParams; ++i) {
      for (size_t j = 0; j < i; ++j) {
        hessian[j][i] = hessian[i][j];
      }
    }
    hessian[0][0] += 1e-9;  // keeps the bias direction invertible when p(1-p) underflows
    for (size_t i = 1; i < kParams; ++i) {
      gradient[i] += l2 * theta[i];
      hessian[i][i] += l2;
    }
    Params step{};
    if (!solve_spd(hessian, gradient, step)) {
      break;
    }
    double scale = 1.0;
    Params next{};
    double next_value = current;
    for (int halving = 0; halving < 40; ++halving) {
      for (size_t i = 0; i < kParams; ++i) {
        next[i] = theta[i] - scale * step[i];
      }
      next_value = objective(design, next, l2);
      if (next_value <= current) {
        break;
      }
      scale /= 2;
    }
    if (next_value > current) {
      break;  // no descent left: converged to rounding
    }
    double largest = 0;
    for (size_t i = 0; i < kParams; ++i) {
      largest = std::max(largest, std::abs(next[i] - theta[i]));
    }
    theta = next;
    current = next_value;
    if (largest < 1e-10) {
      break;
    }
  }
  return theta;
}

double predict(const Params& theta, const Params& x) {
  return 1.0 / (1.0 + std::exp(-dot(theta, x)));
}

// Out-of-fold log-loss and AUC for each candidate penalty; folds by row hash.
std::vector<L2Candidate> search_l2(const Design& design, const std::vector<uint64_t>& hashes) {
  std::vector<size_t> fold(design.x.size());
  for (size_t r = 0; r < fold.size(); ++r) {
    fold[r] = fold_of(hashes[r], kFolds);
  }
  std::vector<L2Candidate> candidates;
  for (double l2 : kL2Grid) {
    std::vector<double> predictions(design.x.size(), 0.5);
    for (size_t k = 0; k < kFolds; ++k) {
      Design train;
      for (size_t r = 0; r < design.x.size(); ++r) {
        if (fold[r] != k) {
          train.x.push_back(design.x[r]);
          train.y.push_back(design.y[r]);
        }
      }
      const Params theta = fit_logistic(train, l2);
      for (size_t r = 0; r < design.x.size(); ++r) {
        if (fold[r] == k) {
          predictions[r] = predict(theta, design.x[r]);
        }
      }
    }
    candidates.push_back({l2, log_loss(predictions, design.y), auc(predictions, design.y)});
  }
  return candidates;
}

std::string utc_now() {
  return utc_iso8601(std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count());
}

nlohmann::ordered_json number(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json to_json(const RoutingPoint& point) {
  return {{"target_cloud_share", number(point.target_share)},
          {"threshold", number(point.threshold)},
          {"cloud_share", number(point.cloud_share)},
          {"quality", number(point.quality)},
          {"quality_kept", number(point.quality_kept)},
          {"gap_recovered", number(point.gap_recovered)},
          {"random_router_quality", number(point.random_quality)}};
}

}  // namespace

// ---- Public --------------------------------------------------------------------------------

Result<TrainingReport> train_router(const TrainingOptions& options) {
  if (!(options.holdout >= 0 && options.holdout <= 0.9)) {
    return make_error(ErrorCode::kInvalidArgument, "holdout must be in [0, 0.9]");
  }
  if (options.l2 && !(*options.l2 >= 0 && std::isfinite(*options.l2))) {
    return make_error(ErrorCode::kInvalidArgument, "l2 must be a finite number >= 0");
  }
  auto loaded =
      load_dataset(options.data_files, options.edge, options.cloud, options.holdout, options.seed);
  if (!loaded) {
    return loaded.error();
  }
  const Dataset& data = loaded.value();
  std::vector<const Example*> train;
  std::vector<const Example*> holdout;
  for (const auto& example : data.examples) {
    (example.holdout ? holdout : train).push_back(&example);
  }
  if (train.size() < 2 * kFolds) {
    return make_error(ErrorCode::kInvalidArgument,
                      "too few rows with both '" + options.edge + "' and '" + options.cloud +
                          "' to train on: " + std::to_string(train.size()) +
                          " in the training split");
  }
  size_t positives = 0;
  for (const Example* example : train) {
    positives += static_cast<size_t>(example->label);
  }
  if (positives == 0 || positives == train.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      std::string("every training row has the same label (the cloud is ") +
                          (positives == 0 ? "never" : "always") + " better): nothing to learn");
  }

  TrainingReport report;
  report.options = options;
  report.rows_read = data.rows_read;
  report.rows_used = data.examples.size();
  report.rows_skipped = data.rows_skipped;

  std::array<double, kFeatureCount> means{};
  std::array<double, kFeatureCount> stds{};
  for (size_t i = 0; i < kFeatureCount; ++i) {
    double sum = 0;
    for (const Example* example : train) {
      sum += example->features.values[i];
    }
    means[i] = sum / static_cast<double>(train.size());
    double squares = 0;
    for (const Example* example : train) {
      const double d = example->features.values[i] - means[i];
      squares += d * d;
    }
    stds[i] = std::sqrt(squares / static_cast<double>(train.size()));
    if (stds[i] < 1e-9) {
      stds[i] = 1.0;  // constant here: its weight stays 0 (penalised, no gradient)
      report.constant_features.emplace_back(feature_names()[i]);
    }
  }

  const Design design = make_design(train, means, stds);
  if (options.l2) {
    report.l2 = *options.l2;
  } else {
    std::vector<uint64_t> hashes;
    hashes.reserve(train.size());
    for (const Example* example : train) {
      hashes.push_back(example->hash);
    }
    report.l2_search = search_l2(design, hashes);
    const L2Candidate* best = &report.l2_search.front();
    for (const auto& candidate : report.l2_search) {
      // Ties go to the stronger penalty (listed later): the simpler model.
      if (candidate.cv_log_loss <= best->cv_log_loss) {
        best = &candidate;
      }
    }
    report.l2 = best->l2;
  }
  const Params theta = fit_logistic(design, report.l2);
  std::array<double, kFeatureCount> weights{};
  for (size_t i = 0; i < kFeatureCount; ++i) {
    weights[i] = theta[i + 1];
  }

  // Metrics through ComplexityModel::score, the code path that routes real requests.
  const ComplexityModel unlabelled =
      ComplexityModel::from_parameters(means, stds, weights, theta[0], nlohmann::json::object());
  auto score_all = [&](const std::vector<const Example*>& examples) {
    std::vector<Scored> scored;
    scored.reserve(examples.size());
    for (const Example* example : examples) {
      scored.push_back({unlabelled.score(example->features), example});
    }
    return scored;
  };
  const auto train_scored = score_all(train);
  const auto holdout_scored = score_all(holdout);
  std::vector<double> train_scores;
  train_scores.reserve(train_scored.size());
  for (const auto& row : train_scored) {
    train_scores.push_back(row.score);
  }
  std::vector<std::pair<double, double>> thresholds;
  for (double share : options.cloud_shares) {
    thresholds.emplace_back(share, threshold_for_share(train_scores, share));
  }
  EvaluationReport train_routing;
  fill_routing(train_scored, thresholds, train_routing);
  report.train = train_routing.metrics;
  report.holdout_routing.data_files = options.data_files;
  report.holdout_routing.edge = options.edge;
  report.holdout_routing.cloud = options.cloud;
  report.holdout_routing.rows_read = holdout.size();
  fill_routing(holdout_scored, thresholds, report.holdout_routing);
  report.holdout = report.holdout_routing.metrics;

  std::vector<size_t> order(kFeatureCount);
  for (size_t i = 0; i < kFeatureCount; ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return std::abs(weights[a]) > std::abs(weights[b]); });
  for (size_t k = 0; k < std::min(kTopFeatures, order.size()); ++k) {
    report.top_features.emplace_back(std::string(feature_names()[order[k]]), weights[order[k]]);
  }

  nlohmann::ordered_json metadata;
  metadata["trainer"] = "tandem router train";
  metadata["created_at"] = utc_now();
  metadata["edge"] = options.edge;
  metadata["cloud"] = options.cloud;
  metadata["label"] = "1 when the cloud's score is higher than the edge's (ties: the edge)";
  metadata["data"] = options.data_files;
  metadata["rows"] = {{"read", report.rows_read},
                      {"used", report.rows_used},
                      {"skipped", report.rows_skipped},
                      {"train", train.size()},
                      {"holdout", holdout.size()}};
  metadata["split"] = {
      {"holdout", options.holdout}, {"seed", options.seed}, {"by", "hash of the row id"}};
  metadata["l2"] = report.l2;
  metadata["l2_selection"] = options.l2 ? "given" : "5-fold cross-validated log-loss";
  metadata["base_rate"] = number(report.train.base_rate);
  metadata["metrics"] = {{"train", to_json(report.train)}, {"holdout", to_json(report.holdout)}};
  auto& suggested = metadata["thresholds"] = nlohmann::ordered_json::array();
  for (const auto& [share, threshold] : thresholds) {
    suggested.push_back({{"cloud_share", share}, {"threshold", number(threshold)}});
  }
  metadata["holdout_routing"] = {
      {"all_edge_quality", number(report.holdout_routing.all_edge_quality)},
      {"all_cloud_quality", number(report.holdout_routing.all_cloud_quality)}};
  metadata["feature_names"] = feature_names();

  report.model = ComplexityModel::from_parameters(means, stds, weights, theta[0],
                                                  nlohmann::json::parse(metadata.dump()));
  report.weights_file = report.model->to_json();
  report.weights_file["metadata"] = metadata;  // keeps the readable key order
  report.weights_file["metadata"]["version"] = std::string(report.model->version());
  return report;
}

Result<EvaluationReport> evaluate_router(const ComplexityModel& model,
                                         const std::vector<std::string>& data_files,
                                         const std::string& edge, const std::string& cloud,
                                         const std::vector<double>& cloud_shares) {
  auto loaded = load_dataset(data_files, edge, cloud, 0.0, 0);
  if (!loaded) {
    return loaded.error();
  }
  const Dataset& data = loaded.value();
  EvaluationReport report;
  report.data_files = data_files;
  report.edge = edge;
  report.cloud = cloud;
  report.rows_read = data.rows_read;
  report.rows_skipped = data.rows_skipped;
  std::vector<Scored> scored;
  std::vector<double> scores;
  for (const auto& example : data.examples) {
    scored.push_back({model.score(example.features), &example});
    scores.push_back(scored.back().score);
  }
  std::vector<std::pair<double, double>> thresholds;
  const auto suggested = model.metadata().find("thresholds");
  if (suggested != model.metadata().end() && suggested->is_array() && !suggested->empty()) {
    for (const auto& entry : *suggested) {
      if (entry.is_object() && entry.contains("cloud_share") && entry.contains("threshold") &&
          entry["cloud_share"].is_number() && entry["threshold"].is_number()) {
        thresholds.emplace_back(entry["cloud_share"].get<double>(),
                                entry["threshold"].get<double>());
      }
    }
  } else {
    for (double share : cloud_shares) {
      thresholds.emplace_back(share, threshold_for_share(scores, share));
    }
  }
  fill_routing(scored, thresholds, report);
  return report;
}

nlohmann::ordered_json to_json(const BinaryMetrics& metrics) {
  return {{"rows", metrics.rows},
          {"base_rate", number(metrics.base_rate)},
          {"auc", number(metrics.auc)},
          {"log_loss", number(metrics.log_loss)}};
}

nlohmann::ordered_json to_json(const EvaluationReport& report) {
  nlohmann::ordered_json out;
  out["data"] = report.data_files;
  out["edge"] = report.edge;
  out["cloud"] = report.cloud;
  out["rows"] = {
      {"read", report.rows_read}, {"used", report.metrics.rows}, {"skipped", report.rows_skipped}};
  out["metrics"] = to_json(report.metrics);
  out["all_edge_quality"] = number(report.all_edge_quality);
  out["all_cloud_quality"] = number(report.all_cloud_quality);
  auto& points = out["routing"] = nlohmann::ordered_json::array();
  for (const auto& point : report.points) {
    points.push_back(to_json(point));
  }
  return out;
}

nlohmann::ordered_json to_json(const TrainingReport& report) {
  nlohmann::ordered_json out;
  out["data"] = report.options.data_files;
  out["edge"] = report.options.edge;
  out["cloud"] = report.options.cloud;
  out["rows"] = {{"read", report.rows_read},
                 {"used", report.rows_used},
                 {"skipped", report.rows_skipped},
                 {"train", report.train.rows},
                 {"holdout", report.holdout.rows}};
  out["l2"] = report.l2;
  auto& search = out["l2_search"] = nlohmann::ordered_json::array();
  for (const auto& candidate : report.l2_search) {
    search.push_back({{"l2", candidate.l2},
                      {"cv_log_loss", number(candidate.cv_log_loss)},
                      {"cv_auc", number(candidate.cv_auc)}});
  }
  out["train"] = to_json(report.train);
  out["holdout"] = to_json(report.holdout);
  out["holdout_routing"] = {{"all_edge_quality", number(report.holdout_routing.all_edge_quality)},
                            {"all_cloud_quality", number(report.holdout_routing.all_cloud_quality)},
                            {"thresholds", nlohmann::ordered_json::array()}};
  for (const auto& point : report.holdout_routing.points) {
    out["holdout_routing"]["thresholds"].push_back(to_json(point));
  }
  auto& top = out["top_features"] = nlohmann::ordered_json::array();
  for (const auto& [name, weight] : report.top_features) {
    top.push_back({{"feature", name}, {"weight", weight}});
  }
  out["constant_features"] = report.constant_features;
  out["version"] = report.model ? std::string(report.model->version()) : std::string();
  return out;
}

Status write_file_atomically(const std::string& path, std::string_view content) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      return make_error(ErrorCode::kNotFound, path + ": cannot create its temporary file " +
                                                  temporary + ": " + errno_message(errno));
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      const std::string reason = errno_message(errno);
      std::remove(temporary.c_str());
      return make_error(ErrorCode::kInternal, temporary + ": write failed: " + reason);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = errno_message(errno);
    std::remove(temporary.c_str());
    return make_error(ErrorCode::kInternal, path + ": cannot replace: " + reason);
  }
  return {};
}

}  // namespace tandem::eval
