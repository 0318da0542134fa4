#include "eval/router_training.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <set>

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

using Example = TrainingExample;

struct Dataset {
  std::vector<Example> examples;
  size_t rows_read = 0;
  size_t rows_skipped = 0;
};

Status check_pairs(const std::vector<ModelPair>& pairs, const std::vector<TraceRow>& rows) {
  if (pairs.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "both an edge and a cloud model are needed");
  }
  for (const auto& pair : pairs) {
    if (pair.edge.empty() || pair.cloud.empty()) {
      return make_error(ErrorCode::kInvalidArgument, "both an edge and a cloud model are needed");
    }
    if (pair.edge == pair.cloud) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the edge and the cloud model are the same ('" + pair.edge + "')");
    }
    if (auto present = require_models(rows, {{"edge", pair.edge}, {"cloud", pair.cloud}});
        !present) {
      return present.error();
    }
  }
  return {};
}

// The source a row came from: its "source" field, else its file's name.
std::string source_of(const TraceRow& row) {
  if (!row.source.empty()) {
    return row.source;
  }
  const size_t colon = row.location.rfind(':');
  const std::string file = row.location.substr(0, colon);
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? file : file.substr(slash + 1);
}

// Rows of one slice (source and task) beyond `max_rows` are dropped by hash, and the rest
// weigh `weight_rows / rows` each when there are more than `weight_rows`: a 14,000-row file
// counts as much as a 500-row one, and costs no more to fit.
void balance_slices(std::vector<Example>& examples, size_t max_rows, size_t weight_rows) {
  std::map<std::string, std::vector<Example*>> slices;
  for (auto& example : examples) {
    slices[example.source + "/" + example.task].push_back(&example);
  }
  std::set<const Example*> dropped;
  for (auto& [name, rows] : slices) {
    if (max_rows > 0 && rows.size() > max_rows) {
      // Ordered by a remix of the hash: the split already used its low values.
      auto order = [](const Example* row) { return row->hash * 0x9e3779b97f4a7c15ULL; };
      std::sort(rows.begin(), rows.end(),
                [&](const Example* a, const Example* b) { return order(a) < order(b); });
      dropped.insert(rows.begin() + static_cast<std::ptrdiff_t>(max_rows), rows.end());
      rows.resize(max_rows);
    }
    const double weight = weight_rows > 0 && rows.size() > weight_rows
                              ? static_cast<double>(weight_rows) / static_cast<double>(rows.size())
                              : 1.0;
    for (Example* row : rows) {
      row->weight = weight;
    }
  }
  std::erase_if(examples, [&](const Example& example) { return dropped.contains(&example); });
}

Result<Dataset> load_dataset(const std::vector<std::string>& files,
                             const std::vector<ModelPair>& pairs, double holdout, uint64_t seed,
                             Progress& progress) {
  if (files.empty()) {
    return Dataset{};
  }
  auto loaded = load_trace_paths(files, progress);
  if (!loaded) {
    return loaded.error();
  }
  const std::vector<TraceRow>& rows = loaded.value();
  if (auto checked = check_pairs(pairs, rows); !checked) {
    return checked.error();
  }
  Dataset data;
  data.rows_read = rows.size();
  progress.phase("extracting prompt features", rows.size());
  size_t done = 0;
  for (const auto& row : rows) {
    progress.update(done++);  // here, since skipped rows leave the loop early
    const ModelPair* pair = nullptr;
    std::optional<double> edge_score;
    std::optional<double> cloud_score;
    for (const auto& candidate : pairs) {
      edge_score = row.score(candidate.edge);
      cloud_score = row.score(candidate.cloud);
      if (edge_score && cloud_score) {
        pair = &candidate;
        break;
      }
    }
    if (pair == nullptr) {
      ++data.rows_skipped;
      continue;
    }
    const PromptView view = prompt_view(row);
    Example example;
    example.features = extract_features(view);
    example.edge = *edge_score;
    example.cloud = *cloud_score;
    example.label = *cloud_score > *edge_score ? 1 : 0;
    example.hash = row_hash(row.id, seed);
    example.holdout = unit_interval(example.hash) < holdout;
    example.source = source_of(row);
    example.task = row.task.empty() ? "(no task)" : row.task;
    example.chars = static_cast<double>(view.last_user.size());
    example.turns = static_cast<double>(view.turns);
    data.examples.push_back(std::move(example));
  }
  progress.update(rows.size());
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

std::vector<double> scores_of(const ComplexityModel& model, const ExampleRefs& examples) {
  std::vector<double> scores;
  scores.reserve(examples.size());
  for (const Example* example : examples) {
    scores.push_back(model.score(example->features));
  }
  return scores;
}

std::vector<int> labels_of(const ExampleRefs& examples) {
  std::vector<int> labels;
  labels.reserve(examples.size());
  for (const Example* example : examples) {
    labels.push_back(example->label);
  }
  return labels;
}

// Out-of-fold log-loss and AUC of one penalty; folds by row hash.
void cross_validate(const ExampleRefs& train, const RouterPrior& prior, L2Candidate& candidate,
                    PhaseSteps& fits) {
  std::vector<double> predictions(train.size(), 0.5);
  for (size_t k = 0; k < kFolds; ++k) {
    ExampleRefs fit_rows;
    for (const Example* example : train) {
      if (fold_of(example->hash, kFolds) != k) {
        fit_rows.push_back(example);
      }
    }
    const auto fitted = fit_complexity_model(fit_rows, prior, candidate.l2);
    fits.step();
    for (size_t r = 0; r < train.size(); ++r) {
      if (fold_of(train[r]->hash, kFolds) == k) {
        predictions[r] = fitted.model.score(train[r]->features);
      }
    }
  }
  const auto labels = labels_of(train);
  candidate.cv_log_loss = log_loss(predictions, labels);
  candidate.cv_auc = auc(predictions, labels);
}

size_t distinct_tasks(const std::vector<Example>& examples) {
  std::set<std::string> tasks;
  for (const auto& example : examples) {
    tasks.insert(example.task);
  }
  return tasks.size();
}

// Fits with the prior and the penalty, counting each fit as a step of `fits`.
ModelFitter fitter(const RouterPrior& prior, double l2, PhaseSteps& fits) {
  return [&prior, l2, &fits](const ExampleRefs& rows) {
    auto model = fit_complexity_model(rows, prior, l2).model;
    fits.step();
    return model;
  };
}

// Each penalty of the grid, judged on left-out tasks when there are enough tasks to leave
// one out (the mean APGR over them; ties: the stronger penalty), else by cross-validated
// log-loss on the training split.
void search_l2(const Dataset& data, const ExampleRefs& train, const RouterPrior& prior,
               TrainingReport& report, Progress& progress) {
  const bool by_left_out = distinct_tasks(data.examples) >= kMinLeftOutTasks;
  const size_t fits_per_penalty = kFolds + (by_left_out ? left_out_fits(data.examples, "task") : 0);
  PhaseSteps fits(progress, "choosing the L2 penalty", std::size(kL2Grid) * fits_per_penalty);
  std::vector<LeftOutReport> left_out;  // per candidate, kept for the one chosen
  for (double l2 : kL2Grid) {
    L2Candidate candidate;
    candidate.l2 = l2;
    cross_validate(train, prior, candidate, fits);
    if (by_left_out) {
      left_out.push_back(leave_one_out(data.examples, "task", fitter(prior, l2, fits)));
      candidate.left_out_apgr = left_out.back().mean_model;
      if (std::isinf(l2)) {
        report.left_out_task_prior = left_out.back();
      }
    }
    report.l2_search.push_back(candidate);
  }
  size_t best = 0;
  for (size_t i = 1; i < report.l2_search.size(); ++i) {
    const L2Candidate& candidate = report.l2_search[i];
    const L2Candidate& chosen = report.l2_search[best];
    if (by_left_out ? candidate.left_out_apgr >= chosen.left_out_apgr
                    : candidate.cv_log_loss <= chosen.cv_log_loss) {
      best = i;
    }
  }
  report.l2 = report.l2_search[best].l2;
  if (by_left_out) {
    report.left_out_task = std::move(left_out[best]);
  }
  report.l2_selection =
      by_left_out ? "mean APGR on left-out tasks" : "5-fold cross-validated log-loss";
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

ExampleRefs all_rows(const std::vector<Example>& examples) {
  ExampleRefs rows;
  rows.reserve(examples.size());
  for (const auto& example : examples) {
    rows.push_back(&example);
  }
  return rows;
}

Result<RouterPrior> load_prior(const std::string& prior) {
  if (prior.empty()) {
    return RouterPrior::builtin();
  }
  if (prior == "none") {
    return RouterPrior::none();
  }
  return RouterPrior::load(prior);
}

nlohmann::ordered_json to_json(const std::vector<ModelPair>& pairs) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& pair : pairs) {
    out.push_back({{"edge", pair.edge}, {"cloud", pair.cloud}});
  }
  return out;
}

nlohmann::ordered_json l2_json(double l2) {
  return std::isinf(l2) ? nlohmann::ordered_json("prior-only") : nlohmann::ordered_json(l2);
}

nlohmann::ordered_json optional_number(const std::optional<double>& value) {
  return value ? number(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json summary_json(const LeftOutReport& report) {
  return {{"slices_counted", report.counted},
          {"mean_apgr", number(report.mean_model)},
          {"mean_length_apgr", number(report.mean_length)},
          {"mean_best_baseline_apgr", number(report.mean_best_baseline)},
          {"slices_at_least_best_baseline", report.at_least_baseline},
          {"mean_incumbent_apgr", optional_number(report.mean_incumbent)}};
}

}  // namespace

// ---- Public --------------------------------------------------------------------------------

std::string describe(const std::vector<ModelPair>& pairs) {
  std::string out;
  for (const auto& pair : pairs) {
    out += (out.empty() ? "" : "; ") + pair.edge + " -> " + pair.cloud;
  }
  return out;
}

Result<TrainingReport> train_router(const TrainingOptions& options, Progress& progress) {
  if (!(options.holdout >= 0 && options.holdout <= 0.9)) {
    return make_error(ErrorCode::kInvalidArgument, "holdout must be in [0, 0.9]");
  }
  if (options.l2 && !(*options.l2 >= 0 && !std::isnan(*options.l2))) {
    return make_error(ErrorCode::kInvalidArgument, "l2 must be a number >= 0 (or prior-only)");
  }
  auto prior = load_prior(options.prior);
  if (!prior) {
    return prior.error();
  }
  auto loaded =
      load_dataset(options.data_files, options.pairs, options.holdout, options.seed, progress);
  if (!loaded) {
    return loaded.error();
  }
  Dataset& data = loaded.value();
  for (TrainingExample example : options.examples) {
    example.holdout = unit_interval(example.hash) < options.holdout;
    data.examples.push_back(std::move(example));
    ++data.rows_read;
  }
  balance_slices(data.examples, options.max_slice_rows, options.slice_weight_rows);
  ExampleRefs train;
  ExampleRefs holdout;
  for (const auto& example : data.examples) {
    (example.holdout ? holdout : train).push_back(&example);
  }
  if (train.size() < 2 * kFolds) {
    return make_error(ErrorCode::kInvalidArgument,
                      "too few rows with both models of a pair (" + describe(options.pairs) +
                          ") to train on: " + std::to_string(train.size()) +
                          " in the training split");
  }
  const auto train_labels = labels_of(train);
  const auto positives =
      static_cast<size_t>(std::count(train_labels.begin(), train_labels.end(), 1));
  if (positives == 0 || positives == train.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      std::string("every training row has the same label (the cloud is ") +
                          (positives == 0 ? "never" : "always") + " better): nothing to learn");
  }

  TrainingReport report;
  report.options = options;
  report.prior_source = prior->source();
  report.rows_read = data.rows_read;
  report.rows_used = data.examples.size();
  report.rows_skipped = data.rows_skipped;
  if (options.l2) {
    report.l2 = *options.l2;
    report.l2_selection = "given";
  } else {
    search_l2(data, train, *prior, report, progress);
  }
  // With a given penalty nothing was searched: leave each task out for it and for the prior.
  if (distinct_tasks(data.examples) >= kMinLeftOutTasks && report.left_out_task.slices.empty()) {
    const bool with_prior = report.left_out_task_prior.slices.empty();
    PhaseSteps fits(progress, "leaving each task out",
                    left_out_fits(data.examples, "task") * (with_prior ? 2 : 1));
    report.left_out_task = leave_one_out(data.examples, "task", fitter(*prior, report.l2, fits));
    if (with_prior) {
      report.left_out_task_prior =
          leave_one_out(data.examples, "task", fitter(*prior, kPriorOnly, fits));
    }
  }
  {
    PhaseSteps fits(progress, "leaving each source out", left_out_fits(data.examples, "source"));
    report.left_out_source =
        leave_one_out(data.examples, "source", fitter(*prior, report.l2, fits));
  }
  if (options.incumbent != nullptr && !report.left_out_task.slices.empty()) {
    compare_incumbent(report.left_out_task, data.examples, *options.incumbent);
    report.accepted =
        report.left_out_task.mean_model >= report.left_out_task.mean_incumbent.value_or(0.0);
  }

  // The in-distribution figures: fitted on the training split, measured on the holdout,
  // through ComplexityModel::score, the code path that routes real requests. Then the model
  // that ships, fitted on every row.
  PhaseSteps final_fits(progress, "fitting the model", 2);
  const FittedModel fitted = fit_complexity_model(train, *prior, report.l2);
  final_fits.step();
  report.constant_features = fitted.constant_features;
  const ComplexityModel& unlabelled = fitted.model;
  auto score_all = [&](const ExampleRefs& examples) {
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
  report.holdout_routing.pairs = options.pairs;
  report.holdout_routing.rows_read = holdout.size();
  fill_routing(holdout_scored, thresholds, report.holdout_routing);
  report.holdout = report.holdout_routing.metrics;

  const auto& weights = unlabelled.weights();
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
  metadata["pairs"] = to_json(options.pairs);
  metadata["label"] = "1 when the cloud's score is higher than the edge's (ties: the edge)";
  metadata["data"] = options.data_files;
  metadata["prior"] = report.prior_source;
  metadata["rows"] = {{"read", report.rows_read},
                      {"used", report.rows_used},
                      {"skipped", report.rows_skipped},
                      {"train", train.size()},
                      {"holdout", holdout.size()}};
  metadata["split"] = {
      {"holdout", options.holdout}, {"seed", options.seed}, {"by", "hash of the row id"}};
  metadata["balance"] = {{"max_slice_rows", options.max_slice_rows},
                         {"slice_weight_rows", options.slice_weight_rows}};
  metadata["l2"] = l2_json(report.l2);
  metadata["l2_selection"] = report.l2_selection;
  metadata["base_rate"] = number(report.train.base_rate);
  metadata["metrics"] = {{"train", to_json(report.train)}, {"holdout", to_json(report.holdout)}};
  metadata["left_out"] = {{"task", summary_json(report.left_out_task)},
                          {"task_prior_only", summary_json(report.left_out_task_prior)},
                          {"source", summary_json(report.left_out_source)}};
  // The shipped model is fitted on all rows: the holdout only measured the procedure. Its
  // suggested thresholds are cloud shares of all rows.
  const ExampleRefs everything = all_rows(data.examples);
  const FittedModel final_fit = fit_complexity_model(everything, *prior, report.l2);
  final_fits.step();
  const std::vector<double> all_scores = scores_of(final_fit.model, everything);
  auto& suggested = metadata["thresholds"] = nlohmann::ordered_json::array();
  for (double share : options.cloud_shares) {
    const double threshold = threshold_for_share(all_scores, share);
    suggested.push_back({{"cloud_share", share}, {"threshold", number(threshold)}});
  }
  metadata["holdout_routing"] = {
      {"all_edge_quality", number(report.holdout_routing.all_edge_quality)},
      {"all_cloud_quality", number(report.holdout_routing.all_cloud_quality)}};
  metadata["feature_names"] = feature_names();

  report.model = ComplexityModel::from_parameters(final_fit.model.means(), final_fit.model.stds(),
                                                  final_fit.model.weights(), final_fit.model.bias(),
                                                  nlohmann::json::parse(metadata.dump()));
  report.weights_file = report.model->to_json();
  report.weights_file["metadata"] = metadata;  // keeps the readable key order
  report.weights_file["metadata"]["version"] = std::string(report.model->version());
  return report;
}

Result<EvaluationReport> evaluate_router(const ComplexityModel& model,
                                         const std::vector<std::string>& data_files,
                                         const std::vector<ModelPair>& pairs,
                                         const std::vector<double>& cloud_shares,
                                         Progress& progress) {
  auto loaded = load_dataset(data_files, pairs, 0.0, 0, progress);
  if (!loaded) {
    return loaded.error();
  }
  const Dataset& data = loaded.value();
  EvaluationReport report;
  report.data_files = data_files;
  report.pairs = pairs;
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
  out["pairs"] = to_json(report.pairs);
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
  out["pairs"] = to_json(report.options.pairs);
  out["prior"] = report.prior_source;
  out["rows"] = {{"read", report.rows_read},
                 {"used", report.rows_used},
                 {"skipped", report.rows_skipped},
                 {"train", report.train.rows},
                 {"holdout", report.holdout.rows}};
  out["l2"] = l2_json(report.l2);
  out["l2_selection"] = report.l2_selection;
  auto& search = out["l2_search"] = nlohmann::ordered_json::array();
  for (const auto& candidate : report.l2_search) {
    search.push_back({{"l2", l2_json(candidate.l2)},
                      {"cv_log_loss", number(candidate.cv_log_loss)},
                      {"cv_auc", number(candidate.cv_auc)},
                      {"left_out_task_mean_apgr", number(candidate.left_out_apgr)}});
  }
  out["accepted"] = report.accepted;
  out["left_out"] = {{"task", to_json(report.left_out_task)},
                     {"task_prior_only", to_json(report.left_out_task_prior)},
                     {"source", to_json(report.left_out_source)}};
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

nlohmann::ordered_json to_json(const LeftOutReport& report) {
  nlohmann::ordered_json out = summary_json(report);
  out["by"] = report.by;
  auto slice_json = [](const SliceResult& slice) {
    return nlohmann::ordered_json{{"source", slice.source},
                                  {"task", slice.task},
                                  {"rows", slice.rows},
                                  {"net_gap_rows", slice.net_gap_rows},
                                  {"edge_quality", number(slice.edge_quality)},
                                  {"cloud_quality", number(slice.cloud_quality)},
                                  {"apgr", optional_number(slice.model)},
                                  {"length_apgr", optional_number(slice.length)},
                                  {"turns_apgr", optional_number(slice.turns)},
                                  {"best_baseline_apgr", optional_number(slice.best_baseline())},
                                  {"incumbent_apgr", optional_number(slice.incumbent)},
                                  {"counted", slice.counted()}};
  };
  auto& slices = out["slices"] = nlohmann::ordered_json::array();
  for (const auto& slice : report.slices) {
    slices.push_back(slice_json(slice));
  }
  auto& mixed = out["mixed_traffic"] = nlohmann::ordered_json::array();
  for (const auto& slice : report.mixed) {
    mixed.push_back(slice_json(slice));
  }
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
