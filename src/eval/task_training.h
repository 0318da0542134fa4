#pragma once
// Training the task model (routing/task_model.h) on pairs of prompts where one is plainly
// harder than the other ("prompt pairs", JSONL: {id, lang, family, easy, hard}), and measuring
// it the way it will be used: on files it was not fitted on. Each file is one set written
// apart from the others (its own author, phrasing and population), so leaving one out at a
// time shows what transfers to new phrasing; the penalty is chosen by that, never by fit.
//
// Thread-safety: pure functions over their arguments.

#include <optional>
#include <string>
#include <vector>

#include "common/progress.h"
#include "common/result.h"
#include "eval/prompt_pairs.h"
#include "routing/task_model.h"

namespace tandem::eval {

struct TaskTrainingOptions {
  std::vector<std::string> files;
  // The L2 penalty (per example, on the n-gram weights); empty: the candidate with the best
  // mean left-out ordering.
  std::optional<double> l2;
  int iterations = 300;
  // How many times a request n-gram counts against the material's once (task_ngrams.h).
  uint16_t request_weight = routing::kDefaultRequestWeight;
};

// Pairs ordered right (hard scored above easy) in one language of one left-out file.
struct LeftOutOrdering {
  std::string file;
  std::string lang;
  size_t pairs = 0;
  size_t model_ordered = 0;   // the task model fitted on the other files
  size_t length_ordered = 0;  // the longer prompt taken as the harder one
};

struct PenaltyScore {
  double l2 = 0;
  double left_out_mean = 0;  // mean share ordered over the left-out file × language slices
};

struct TaskTrainingReport {
  size_t pairs = 0;
  size_t files = 0;
  std::vector<PenaltyScore> penalties;
  double l2 = 0;
  std::vector<LeftOutOrdering> left_out;  // at the chosen penalty
  double train_ordered = 0;               // share ordered by the final model on all pairs
  routing::TaskModel model = routing::TaskModel::from_weights({}, 0.0, 1, {});
};

// The candidates `l2: auto` chooses among.
const std::vector<double>& task_penalty_candidates();

// Leave-one-file-out at each candidate penalty (or the given one), then the final fit on
// every pair. Needs at least two files. Deterministic: same files, same weights. Reports one
// step per fit.
Result<TaskTrainingReport> train_task_model(const TaskTrainingOptions& options,
                                            Progress& progress = no_progress());

// One fit: logistic regression of hard (1) vs easy (0) over the n-grams (the request's counted
// `request_weight` times), full-batch gradient descent with momentum from zero, `l2` per example.
routing::TaskModel fit_task_model(const std::vector<PromptPair>& pairs, double l2, int iterations,
                                  uint16_t request_weight);

}  // namespace tandem::eval
