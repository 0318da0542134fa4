#pragma once
// How the ingress classifier does on data it was not fitted on: leave one task (or one source)
// out, fit on the rest, score the left-out rows, and compare with the simple baselines on the
// same rows: prompt length (longer: cloud first), turn count, and the random router (APGR 0.5).
// APGR is RouteLLM's (curve.h), per slice = one task of one source, since one model pair labels
// a slice and routing quality is defined per pair.
//
// Thread-safety: free functions without shared state.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eval/bootstrap.h"
#include "eval/router_fit.h"
#include "routing/complexity_model.h"

namespace tandem::eval {

// Slices smaller than this are listed but not counted in the summary: their APGR is noise.
inline constexpr size_t kMinSliceRows = 50;

struct SliceResult {
  std::string source;
  std::string task;
  size_t rows = 0;
  long net_gap_rows = 0;  // rows where the cloud is better minus rows where the edge is
  double edge_quality = 0;
  double cloud_quality = 0;
  // APGR of each router; nullopt where the cloud is not better than the edge on the slice.
  std::optional<double> model;
  std::optional<double> length;
  std::optional<double> turns;
  std::optional<double> incumbent;  // a model in service, scored as it is (compare_incumbent)
  // The model's APGR minus the length heuristic's and minus the best baseline's, each with its
  // 95% paired-bootstrap interval over the slice's rows (measure_noise); nullopt until
  // measured. A slice's APGR rests on its net gap rows, a few dozen on many slices, so a
  // difference of 0.02-0.03 can be chance.
  std::optional<Interval> versus_length;
  std::optional<Interval> versus_best;

  // The best of length, turns and random (0.5).
  std::optional<double> best_baseline() const;
  bool counted() const { return rows >= kMinSliceRows && model.has_value(); }
};

// The model against one baseline over the counted slices of a report: how many are below or
// above it by more than chance (the whole interval on one side of 0), and the mean difference
// with its interval (each draw resamples every slice).
struct NoiseSummary {
  size_t below = 0;
  size_t above = 0;
  std::optional<Interval> mean;
};

struct LeftOutReport {
  std::string by;  // "task" or "source"
  std::vector<SliceResult> slices;
  // Mixed traffic: each source's rows together (task "(all)"), every row scored by the model
  // fitted without its group. What a router of unseen traffic faces: it must tell tasks
  // apart, not only the easy and hard rows of one task.
  std::vector<SliceResult> mixed;
  // Over the counted slices:
  size_t counted = 0;
  double mean_model = 0;
  double mean_length = 0;
  double mean_best_baseline = 0;
  size_t at_least_baseline = 0;          // slices where the model's APGR >= the best baseline's
  std::optional<double> mean_incumbent;  // over the same slices, when compared
  // Set by measure_noise(), against the length heuristic and against the best baseline.
  // 0 draws: not measured.
  size_t noise_draws = 0;
  NoiseSummary versus_length;
  NoiseSummary versus_best;
  // The left-out model's score of each example (by its index in the examples given), NaN for
  // a row no model scored: what measure_noise() resamples.
  std::vector<double> need;
};

// Fits a model on the rows given (the ones not left out).
using ModelFitter = std::function<routing::ComplexityModel(const ExampleRefs& train)>;

// Leaves out each group of `by` ("task" or "source") in turn; groups are visited in name order
// and a group whose absence leaves one label only is skipped.
LeftOutReport leave_one_out(const std::vector<TrainingExample>& examples, const std::string& by,
                            const ModelFitter& fit);

// How many models leave_one_out() fits for these arguments (the groups it does not skip), so a
// caller can say how far along it is.
size_t left_out_fits(const std::vector<TrainingExample>& examples, const std::string& by);

// Scores every slice of `report` with `incumbent` as it is (no refit: it was trained on other
// data) and sets the incumbent's APGR per slice and its mean over the counted slices.
void compare_incumbent(LeftOutReport& report, const std::vector<TrainingExample>& examples,
                       const routing::ComplexityModel& incumbent);

// Measures how much of each slice's difference from the best baseline could be chance: a
// paired bootstrap of the slice's rows (`draws` resamples, the model's scores fixed, the same
// rows for the model and the baselines), seeded by `seed` and the slice's name so a slice's
// interval does not depend on the others. `examples` must be those given to leave_one_out().
void measure_noise(LeftOutReport& report, const std::vector<TrainingExample>& examples,
                   size_t draws, uint64_t seed);

// APGR of `need` (higher: cloud first) on the rows; nullopt when the cloud is not better.
std::optional<double> apgr_of(const std::vector<double>& need, const ExampleRefs& rows);

}  // namespace tandem::eval
