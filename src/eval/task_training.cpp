#include "eval/task_training.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "eval/logistic.h"
#include "routing/prompt_feature_ids.h"
#include "routing/prompt_scanner.h"

namespace tandem::eval {
namespace {

using routing::NgramVector;
using routing::TaskModel;

// The n-grams of each pair's two sides, hashed once for every fit: pair k's easy side is
// ngrams[2k] (label 0), its hard side ngrams[2k + 1] (label 1).
struct Examples {
  std::vector<NgramVector> ngrams;
  uint16_t request_weight = 1;
};

Examples examples_of(const std::vector<PromptPair>& pairs, uint16_t request_weight) {
  Examples examples;
  examples.request_weight = request_weight;
  examples.ngrams.reserve(2 * pairs.size());
  for (const auto& pair : pairs) {
    for (const auto* text : {&pair.easy, &pair.hard}) {
      NgramVector ngrams;
      routing::hashed_ngrams(*text, request_weight, ngrams);
      examples.ngrams.push_back(std::move(ngrams));
    }
  }
  return examples;
}

bool ordered_by(const TaskModel& model, const Examples& examples, size_t pair) {
  return model.logit(examples.ngrams[2 * pair + 1]) > model.logit(examples.ngrams[2 * pair]);
}

TaskModel fit_pairs(const Examples& examples, const std::vector<size_t>& pairs, double l2,
                    int iterations);

double ordered_share(size_t ordered, size_t pairs) {
  return pairs == 0 ? 0.0 : static_cast<double>(ordered) / static_cast<double>(pairs);
}

// Fits on every file but one, for each file; one row per (file, language). `read_shares`
// gains the held-out prompts' read shares in the languages the other files have: a language
// only the held-out file has is read no better than chance, which says nothing of how well a
// trained language's unseen prompts are read (and would put `full` at chance).
std::vector<LeftOutOrdering> leave_one_file_out(const std::vector<PromptPair>& pairs,
                                                const Examples& examples,
                                                const std::vector<std::string>& files, double l2,
                                                int iterations, PhaseSteps& fits,
                                                std::vector<double>& read_shares) {
  std::vector<LeftOutOrdering> rows;
  for (const auto& file : files) {
    std::vector<size_t> train;
    std::map<std::string, LeftOutOrdering> by_lang;
    for (size_t k = 0; k < pairs.size(); ++k) {
      if (pairs[k].file != file) {
        train.push_back(k);
      }
    }
    const TaskModel model = fit_pairs(examples, train, l2, iterations);
    fits.step();
    std::set<std::string> trained_langs;
    for (const size_t k : train) {
      trained_langs.insert(pairs[k].lang);
    }
    for (size_t k = 0; k < pairs.size(); ++k) {
      const PromptPair& pair = pairs[k];
      if (pair.file != file) {
        continue;
      }
      LeftOutOrdering& row = by_lang[pair.lang];
      row.file = file;
      row.lang = pair.lang;
      ++row.pairs;
      row.model_ordered += ordered_by(model, examples, k) ? 1 : 0;
      if (trained_langs.contains(pair.lang)) {
        read_shares.push_back(model.read_share(examples.ngrams[2 * k]));
        read_shares.push_back(model.read_share(examples.ngrams[2 * k + 1]));
      }
      row.length_ordered += pair.hard.size() > pair.easy.size() ? 1 : 0;
    }
    for (auto& [lang, row] : by_lang) {
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

double mean_left_out(const std::vector<LeftOutOrdering>& rows) {
  double sum = 0;
  for (const auto& row : rows) {
    sum += ordered_share(row.model_ordered, row.pairs);
  }
  return rows.empty() ? 0.0 : sum / static_cast<double>(rows.size());
}

}  // namespace

const std::vector<double>& task_penalty_candidates() {
  static const std::vector<double> candidates = {0.1, 0.3, 1.0, 3.0};
  return candidates;
}

namespace {

std::vector<size_t> all_of(size_t count) {
  std::vector<size_t> indices(count);
  for (size_t k = 0; k < count; ++k) {
    indices[k] = k;
  }
  return indices;
}

TaskModel fit_pairs(const Examples& examples, const std::vector<size_t>& pairs, double l2,
                    int iterations) {
  const size_t n = 2 * pairs.size();
  std::vector<double> weights(routing::kNgramBuckets, 0.0);
  std::vector<double> velocity(routing::kNgramBuckets, 0.0);
  std::vector<double> gradient(routing::kNgramBuckets, 0.0);
  double bias = 0;
  double bias_velocity = 0;
  // Heavy-ball gradient descent: the objective (mean log-loss + l2/2n |w|²) is smooth and
  // convex, the features have unit norm, so a step of 1 with momentum 0.9 converges in a few
  // hundred full passes over a few thousand prompts (well under a second).
  constexpr double kStep = 1.0;
  constexpr double kMomentum = 0.9;
  const double per_example = n == 0 ? 0.0 : 1.0 / static_cast<double>(n);
  for (int iteration = 0; iteration < iterations && n > 0; ++iteration) {
    for (size_t i = 0; i < weights.size(); ++i) {
      gradient[i] = l2 * per_example * weights[i];
    }
    double bias_gradient = 0;
    for (size_t e = 0; e < n; ++e) {
      const NgramVector& x = examples.ngrams[2 * pairs[e / 2] + e % 2];
      const double label = static_cast<double>(e % 2);  // the hard side is the odd one
      double z = bias;
      for (size_t j = 0; j < x.buckets.size(); ++j) {
        z += weights[x.buckets[j]] * x.values[j];
      }
      const double residual = (1.0 / (1.0 + std::exp(-z)) - label) * per_example;
      for (size_t j = 0; j < x.buckets.size(); ++j) {
        gradient[x.buckets[j]] += residual * x.values[j];
      }
      bias_gradient += residual;
    }
    for (size_t i = 0; i < weights.size(); ++i) {
      velocity[i] = kMomentum * velocity[i] - kStep * gradient[i];
      weights[i] += velocity[i];
    }
    bias_velocity = kMomentum * bias_velocity - kStep * bias_gradient;
    bias += bias_velocity;
  }
  std::vector<float> rounded(weights.begin(), weights.end());
  return TaskModel::from_weights(std::move(rounded), bias, examples.request_weight,
                                 nlohmann::json::object());
}

// The features the stand-in predicts from: the task cues, counted in every language the cue
// lists cover, and the counts of terms that say what field a request is in.
constexpr uint8_t kStandInFeatures[] = {
    routing::prompt_detail::kEasyTaskCues, routing::prompt_detail::kYesNoCues,
    routing::prompt_detail::kHardTaskCues, routing::prompt_detail::kReasoningCues,
    routing::prompt_detail::kCreativeCues, routing::prompt_detail::kConstraintCues,
    routing::prompt_detail::kFactoidCues,  routing::prompt_detail::kChoiceOptions,
    routing::prompt_detail::kMathTerms,    routing::prompt_detail::kCodeKeywords,
    routing::prompt_detail::kDomainTerms};
constexpr size_t kStandInTerms = std::size(kStandInFeatures) + 1;  // and the bias
// Ridge penalty on the stand-in's weights (not its bias): the cue counts are small integers'
// logs, collinear in few prompts.
constexpr double kStandInL2 = 1.0;
// The read share from which a prompt counts as read: this quantile of the held-out prompts'.
constexpr double kFullReadQuantile = 0.1;

// The stand-in for `model`: its logit on every training prompt regressed on the prompt's
// language-free features; chance, the weighed buckets' share (an unread text's n-grams land in
// them by hash alone); full, the kFullReadQuantile of `read_shares` (prompts read by models that
// never saw them, in languages those models learned). Empty when the held-out prompts read no
// better than chance.
std::optional<routing::TaskStandIn> fit_stand_in(const std::vector<PromptPair>& pairs,
                                                 const Examples& examples, const TaskModel& model,
                                                 std::vector<double> read_shares) {
  routing::TaskStandIn stand_in;
  const auto& weights = model.weights();
  const auto weighed = std::count_if(weights.begin(), weights.end(),
                                     [](float w) { return std::fabs(w) >= routing::kReadWeight; });
  stand_in.chance = static_cast<double>(weighed) / static_cast<double>(weights.size());
  if (read_shares.empty()) {
    return std::nullopt;
  }
  const auto at =
      read_shares.begin() +
      static_cast<std::ptrdiff_t>(kFullReadQuantile * static_cast<double>(read_shares.size()));
  std::nth_element(read_shares.begin(), at, read_shares.end());
  stand_in.full = std::min(1.0, *at);
  if (stand_in.full <= stand_in.chance) {
    return std::nullopt;
  }
  std::vector<std::vector<double>> normal(kStandInTerms, std::vector<double>(kStandInTerms, 0.0));
  std::vector<double> target(kStandInTerms, 0.0);
  for (size_t e = 0; e < examples.ngrams.size(); ++e) {
    const PromptPair& pair = pairs[e / 2];
    routing::PromptFeatures features;
    routing::scan_prompt_text(e % 2 == 0 ? pair.easy : pair.hard, features);
    std::array<double, kStandInTerms> x{};
    x[0] = 1;
    for (size_t k = 0; k < std::size(kStandInFeatures); ++k) {
      x[k + 1] = features.values[kStandInFeatures[k]];
    }
    const double y = model.logit(examples.ngrams[e]);
    for (size_t i = 0; i < kStandInTerms; ++i) {
      for (size_t j = 0; j < kStandInTerms; ++j) {
        normal[i][j] += x[i] * x[j];
      }
      target[i] += x[i] * y;
    }
  }
  for (size_t i = 1; i < kStandInTerms; ++i) {
    normal[i][i] += kStandInL2;
  }
  std::vector<double> beta;
  if (!solve_linear(std::move(normal), std::move(target), beta)) {
    return std::nullopt;
  }
  stand_in.bias = beta[0];
  for (size_t k = 0; k < std::size(kStandInFeatures); ++k) {
    stand_in.weights.emplace_back(kStandInFeatures[k], beta[k + 1]);
  }
  return stand_in;
}

}  // namespace

TaskModel fit_task_model(const std::vector<PromptPair>& pairs, double l2, int iterations,
                         uint16_t request_weight) {
  return fit_pairs(examples_of(pairs, request_weight), all_of(pairs.size()), l2, iterations);
}

Result<TaskTrainingReport> train_task_model(const TaskTrainingOptions& options,
                                            Progress& progress) {
  std::vector<std::string> files = options.files;
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.size() < 2) {
    return make_error(ErrorCode::kInvalidArgument,
                      "give at least two pair files: each is left out in turn to measure what "
                      "transfers to new phrasing");
  }
  if (options.iterations <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "iterations: must be > 0");
  }
  if (options.l2 && !(*options.l2 >= 0 && std::isfinite(*options.l2))) {
    return make_error(ErrorCode::kInvalidArgument, "l2: must be a finite number >= 0");
  }
  if (options.request_weight < 1 || options.request_weight > routing::kMaxRequestWeight) {
    return make_error(ErrorCode::kInvalidArgument, "request_weight: must be from 1 to " +
                                                       std::to_string(routing::kMaxRequestWeight));
  }
  auto pairs = load_prompt_pairs(files);
  if (!pairs) {
    return pairs.error();
  }
  TaskTrainingReport report;
  report.pairs = pairs.value().size();
  report.files = files.size();
  const std::vector<double> candidates =
      options.l2 ? std::vector<double>{*options.l2} : task_penalty_candidates();
  const Examples examples = examples_of(pairs.value(), options.request_weight);
  double best = -1;
  std::vector<double> best_read_shares;
  // Each file left out at each penalty, then the final fit on every pair.
  PhaseSteps fits(progress, "fitting without each file", candidates.size() * files.size() + 1);
  for (const double l2 : candidates) {
    std::vector<double> read_shares;
    auto rows = leave_one_file_out(pairs.value(), examples, files, l2, options.iterations, fits,
                                   read_shares);
    const double mean = mean_left_out(rows);
    report.penalties.push_back({l2, mean});
    if (mean > best) {  // ties keep the smaller penalty listed first
      best = mean;
      report.l2 = l2;
      report.left_out = std::move(rows);
      best_read_shares = std::move(read_shares);
    }
  }
  TaskModel model = fit_pairs(examples, all_of(report.pairs), report.l2, options.iterations);
  fits.step();
  size_t ordered = 0;
  for (size_t k = 0; k < report.pairs; ++k) {
    ordered += ordered_by(model, examples, k) ? 1 : 0;
  }
  report.train_ordered = ordered_share(ordered, report.pairs);
  nlohmann::json left_out = nlohmann::json::array();
  for (const auto& row : report.left_out) {
    left_out.push_back({{"file", row.file},
                        {"lang", row.lang},
                        {"pairs", row.pairs},
                        {"ordered", ordered_share(row.model_ordered, row.pairs)},
                        {"length_ordered", ordered_share(row.length_ordered, row.pairs)}});
  }
  nlohmann::json metadata = {{"files", files},
                             {"pairs", report.pairs},
                             {"l2", report.l2},
                             {"iterations", options.iterations},
                             {"request_weight", options.request_weight},
                             {"left_out_mean_ordered", best},
                             {"left_out", std::move(left_out)}};
  report.model = TaskModel::from_weights(
      model.weights(), model.bias(), model.request_weight(), std::move(metadata),
      fit_stand_in(pairs.value(), examples, model, std::move(best_read_shares)));
  return report;
}

}  // namespace tandem::eval
