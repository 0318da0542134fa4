#pragma once
// Labelled rows for the router trainer (router_training.h): trace files read, each row labelled
// by the first (edge, cloud) pair it has both models of, its features extracted and its slice
// (source and task) balanced. Internal to tandem_eval.
//
// Thread-safety: free functions without shared state.

#include <cstdint>
#include <string>
#include <vector>

#include "common/progress.h"
#include "common/result.h"
#include "eval/router_fit.h"
#include "eval/router_training.h"

namespace tandem::eval {

struct Dataset {
  std::vector<TrainingExample> examples;
  size_t rows_read = 0;
  size_t rows_skipped = 0;
};

// Reads `files` (none: an empty dataset), checks that every pair's models are in them, and
// marks about `holdout` of the rows as held out by a hash of their id salted with `seed`.
Result<Dataset> load_dataset(const std::vector<std::string>& files,
                             const std::vector<ModelPair>& pairs, double holdout, uint64_t seed,
                             Progress& progress);

// Rows of one slice (source and task) beyond `max_rows` are dropped by hash, and the rest
// weigh `weight_rows / rows` each when there are more than `weight_rows`: a 14,000-row file
// counts as much as a 500-row one, and costs no more to fit.
void balance_slices(std::vector<TrainingExample>& examples, size_t max_rows, size_t weight_rows);

size_t distinct_tasks(const std::vector<TrainingExample>& examples);

ExampleRefs all_rows(const std::vector<TrainingExample>& examples);

}  // namespace tandem::eval
