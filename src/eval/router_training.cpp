#include "eval/router_training.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "eval/router_dataset.h"
#include "eval/router_metrics.h"
#include "eval/router_report_json.h"

namespace tandem::eval {

// The per-request routing code this offline work drives.
using namespace routing;  // NOLINT(google-build-using-namespace)

namespace {

constexpr size_t kFolds = 5;
constexpr size_t kTopFeatures = 10;
// Resamples of each left-out slice for its interval against the baselines: enough for the
// 2.5th and 97.5th percentiles to settle to about 0.005, a fraction of a second in all.
constexpr size_t kNoiseDraws = 200;

using Example = TrainingExample;

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

Result<RouterPrior> load_prior(const std::string& prior) {
  if (prior.empty()) {
    return RouterPrior::builtin();
  }
  if (prior == "none") {
    return RouterPrior::none();
  }
  return RouterPrior::load(prior);
}

Status check_training_options(const TrainingOptions& options) {
  if (!(options.holdout >= 0 && options.holdout <= 0.9)) {
    return make_error(ErrorCode::kInvalidArgument, "holdout must be in [0, 0.9]");
  }
  if (options.l2 && !(*options.l2 >= 0 && !std::isnan(*options.l2))) {
    return make_error(ErrorCode::kInvalidArgument, "l2 must be a number >= 0 (or prior-only)");
  }
  return {};
}

// The files' rows and the examples given beside them, held out by the same rule, balanced.
Result<Dataset> training_rows(const TrainingOptions& options, Progress& progress) {
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
  return loaded;
}

// Enough rows to cross-validate, and both labels among them.
Status check_trainable(const ExampleRefs& train, const std::vector<ModelPair>& pairs) {
  if (train.size() < 2 * kFolds) {
    return make_error(ErrorCode::kInvalidArgument,
                      "too few rows with both models of a pair (" + describe(pairs) +
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
  return {};
}

// What generalises: each task, then each source, left out with the chosen penalty (the
// search already left the tasks out unless the penalty was given), and the incumbent's
// acceptance on the left-out tasks.
void measure_left_out(const Dataset& data, const RouterPrior& prior,
                      const ComplexityModel* incumbent, TrainingReport& report,
                      Progress& progress) {
  if (distinct_tasks(data.examples) >= kMinLeftOutTasks && report.left_out_task.slices.empty()) {
    const bool with_prior = report.left_out_task_prior.slices.empty();
    PhaseSteps fits(progress, "leaving each task out",
                    left_out_fits(data.examples, "task") * (with_prior ? 2 : 1));
    report.left_out_task = leave_one_out(data.examples, "task", fitter(prior, report.l2, fits));
    if (with_prior) {
      report.left_out_task_prior =
          leave_one_out(data.examples, "task", fitter(prior, kPriorOnly, fits));
    }
  }
  {
    PhaseSteps fits(progress, "leaving each source out", left_out_fits(data.examples, "source"));
    report.left_out_source = leave_one_out(data.examples, "source", fitter(prior, report.l2, fits));
  }
  measure_noise(report.left_out_task, data.examples, kNoiseDraws, report.options.seed);
  measure_noise(report.left_out_source, data.examples, kNoiseDraws, report.options.seed);
  if (incumbent != nullptr && !report.left_out_task.slices.empty()) {
    compare_incumbent(report.left_out_task, data.examples, *incumbent);
    report.accepted =
        report.left_out_task.mean_model >= report.left_out_task.mean_incumbent.value_or(0.0);
  }
}

// The features with the largest weights, largest |weight| first.
void list_top_features(const ComplexityModel& model, TrainingReport& report) {
  const auto& weights = model.weights();
  std::vector<size_t> order(kFeatureCount);
  for (size_t i = 0; i < kFeatureCount; ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return std::abs(weights[a]) > std::abs(weights[b]); });
  for (size_t k = 0; k < std::min(kTopFeatures, order.size()); ++k) {
    report.top_features.emplace_back(std::string(feature_names()[order[k]]), weights[order[k]]);
  }
}

// The in-distribution figures: fitted on the training split, measured on the holdout, through
// ComplexityModel::score, the code path that routes real requests.
void measure_in_distribution(const ExampleRefs& train, const ExampleRefs& holdout,
                             const RouterPrior& prior, const TrainingOptions& options,
                             TrainingReport& report, PhaseSteps& final_fits) {
  const FittedModel fitted = fit_complexity_model(train, prior, report.l2);
  final_fits.step();
  report.constant_features = fitted.constant_features;
  const ComplexityModel& unlabelled = fitted.model;
  auto score_all = [&](const ExampleRefs& examples) {
    std::vector<ScoredExample> scored;
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
  list_top_features(unlabelled, report);
}

// The model that ships is fitted on all rows: the holdout only measured the procedure. Its
// suggested thresholds are cloud shares of all rows.
void fit_shipped_model(const Dataset& data, const RouterPrior& prior, size_t train_rows,
                       size_t holdout_rows, TrainingReport& report, PhaseSteps& final_fits) {
  nlohmann::ordered_json metadata = weights_metadata(report, train_rows, holdout_rows);
  const ExampleRefs everything = all_rows(data.examples);
  const FittedModel final_fit = fit_complexity_model(everything, prior, report.l2);
  final_fits.step();
  const std::vector<double> all_scores = scores_of(final_fit.model, everything);
  std::vector<std::pair<double, double>> thresholds;
  for (double share : report.options.cloud_shares) {
    thresholds.emplace_back(share, threshold_for_share(all_scores, share));
  }
  add_shipped_metadata(metadata, report, thresholds);

  report.model = ComplexityModel::from_parameters(final_fit.model.means(), final_fit.model.stds(),
                                                  final_fit.model.weights(), final_fit.model.bias(),
                                                  nlohmann::json::parse(metadata.dump()));
  report.weights_file = report.model->to_json();
  report.weights_file["metadata"] = metadata;  // keeps the readable key order
  report.weights_file["metadata"]["version"] = std::string(report.model->version());
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
  if (auto checked = check_training_options(options); !checked) {
    return checked.error();
  }
  auto prior = load_prior(options.prior);
  if (!prior) {
    return prior.error();
  }
  auto loaded = training_rows(options, progress);
  if (!loaded) {
    return loaded.error();
  }
  const Dataset& data = loaded.value();
  ExampleRefs train;
  ExampleRefs holdout;
  for (const auto& example : data.examples) {
    (example.holdout ? holdout : train).push_back(&example);
  }
  if (auto trainable = check_trainable(train, options.pairs); !trainable) {
    return trainable.error();
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
  measure_left_out(data, *prior, options.incumbent, report, progress);

  PhaseSteps final_fits(progress, "fitting the model", 2);
  measure_in_distribution(train, holdout, *prior, options, report, final_fits);
  fit_shipped_model(data, *prior, train.size(), holdout.size(), report, final_fits);
  if (!options.common_sense.empty()) {
    // Compared with the weights in service, the shipped ones unless another incumbent is given.
    const ComplexityModel* incumbent =
        options.incumbent != nullptr ? options.incumbent : &ComplexityModel::builtin();
    report.common_sense = check_common_sense(options.common_sense, *report.model, incumbent,
                                             routing::TaskModel::builtin());
    report.accepted = report.accepted && report.common_sense->kept;
  }
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
  std::vector<ScoredExample> scored;
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
