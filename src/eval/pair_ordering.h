#pragma once
// Common sense as a measurement: on prompt pairs where one is plainly harder (task_training.h
// reads them), how many the ingress classifier orders right (hard scored above easy), and
// where the default decision puts each side (easy under the threshold: the edge; hard at or
// over it: the cloud). `tandem router pairs` prints it; the golden-pairs test holds the
// shipped router to it.
//
// Thread-safety: pure function.

#include <string>
#include <vector>

#include "eval/task_training.h"
#include "routing/complexity_model.h"
#include "routing/task_model.h"

namespace tandem::eval {

struct PairOrdering {
  std::string file;
  std::string lang;
  size_t pairs = 0;
  size_t ordered = 0;
  size_t easy_on_edge = 0;
  size_t hard_on_cloud = 0;
  std::vector<std::string> misordered;  // ids
};

// One row per (file, language), in the order first seen. `threshold`: the score at and above
// which the ingress sends to the cloud.
std::vector<PairOrdering> order_pairs(const std::vector<PromptPair>& pairs,
                                      const routing::ComplexityModel& model,
                                      const routing::TaskModel& task, double threshold);

// The floor new weights must keep on each file's pairs in each language before `tandem router
// train` accepts them: the golden-pairs test's (9 in 10 ordered).
inline constexpr double kCommonSenseFloor = 0.9;

// New weights keep common sense when, in each (file, language), they order at least the floor's
// share of the pairs, or at least as many as the weights in service (`incumbent`, one row per
// row of `model`, in the same order; empty: none to compare with) where those are below it.
struct CommonSense {
  std::vector<PairOrdering> model;
  std::vector<PairOrdering> incumbent;
  bool kept = true;
};

CommonSense check_common_sense(const std::vector<PromptPair>& pairs,
                               const routing::ComplexityModel& model,
                               const routing::ComplexityModel* incumbent,
                               const routing::TaskModel& task);

}  // namespace tandem::eval
