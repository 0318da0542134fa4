#include "eval/left_out.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <utility>

#include "common/hash.h"
#include "eval/curve.h"

namespace tandem::eval {
namespace {

const std::string& group_of(const TrainingExample& example, const std::string& by) {
  return by == "source" ? example.source : example.task;
}

bool has_both_labels(const ExampleRefs& rows) {
  bool positive = false;
  bool negative = false;
  for (const TrainingExample* row : rows) {
    (row->label != 0 ? positive : negative) = true;
  }
  return positive && negative;
}

// `model_need[i]` is the left-out model's score of rows[i].
SliceResult score_slice(const ExampleRefs& rows, const std::vector<double>& model_need) {
  SliceResult slice;
  slice.source = rows.front()->source;
  slice.task = rows.front()->task;
  slice.rows = rows.size();
  std::vector<double> length_need;
  std::vector<double> turns_need;
  for (const TrainingExample* row : rows) {
    slice.edge_quality += row->edge;
    slice.cloud_quality += row->cloud;
    slice.net_gap_rows += (row->cloud > row->edge) - (row->edge > row->cloud);
    length_need.push_back(row->chars);
    turns_need.push_back(row->turns);
  }
  slice.edge_quality /= static_cast<double>(rows.size());
  slice.cloud_quality /= static_cast<double>(rows.size());
  slice.model = apgr_of(model_need, rows);
  slice.length = apgr_of(length_need, rows);
  slice.turns = apgr_of(turns_need, rows);
  return slice;
}

// A slice's name: one task of one source.
std::string slice_key(const std::string& source, const std::string& task) {
  return source + "/" + task;
}

// One slice's rows and the model's scores of them, as measure_noise() resamples them.
struct ScoredRows {
  ExampleRefs rows;
  std::vector<double> need;
};

// What a resample is compared on: the model against the length heuristic, and against the
// best baseline.
constexpr size_t kVersusLength = 0;
constexpr size_t kVersusBest = 1;
using Differences = std::array<double, 2>;

// The slice's difference from one baseline (kVersusLength or kVersusBest); nullopt where the
// slice has no curve.
std::optional<double> estimate_of(const SliceResult& slice, size_t versus) {
  if (!slice.model || !slice.best_baseline()) {
    return std::nullopt;
  }
  return *slice.model - (versus == kVersusLength ? *slice.length : *slice.best_baseline());
}

// Both differences on `picked` rows of the slice, scored as the slice itself was; NaN where a
// curve is undefined.
Differences differences_on(const ScoredRows& slice, const std::vector<size_t>& picked) {
  ExampleRefs rows;
  std::vector<double> model_need;
  for (const size_t i : picked) {
    rows.push_back(slice.rows[i]);
    model_need.push_back(slice.need[i]);
  }
  const SliceResult resampled = score_slice(rows, model_need);
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  return {estimate_of(resampled, kVersusLength).value_or(kNaN),
          estimate_of(resampled, kVersusBest).value_or(kNaN)};
}

// Both differences on each of `draws` resamples of the slice.
std::vector<Differences> resampled_differences(const ScoredRows& slice, size_t draws,
                                               uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<size_t> pick(0, slice.rows.size() - 1);
  std::vector<size_t> picked(slice.rows.size());
  std::vector<Differences> out;
  out.reserve(draws);
  for (size_t b = 0; b < draws; ++b) {
    for (auto& i : picked) {
      i = pick(random);
    }
    out.push_back(differences_on(slice, picked));
  }
  return out;
}

// The interval of one difference from its draws; nullopt when none is defined.
std::optional<Interval> interval_of(const SliceResult& slice, const std::vector<Differences>& draws,
                                    size_t versus) {
  const auto estimate = estimate_of(slice, versus);
  std::vector<double> defined;
  for (const Differences& d : draws) {
    if (!std::isnan(d[versus])) {
      defined.push_back(d[versus]);
    }
  }
  if (!estimate || defined.empty()) {
    return std::nullopt;
  }
  return percentile_interval(*estimate, defined);
}

void set_intervals(SliceResult& slice, const std::vector<Differences>& draws) {
  slice.versus_length = interval_of(slice, draws, kVersusLength);
  slice.versus_best = interval_of(slice, draws, kVersusBest);
}

// Adds a counted slice to a summary: its side of 0, and its draws to the mean's.
void add_to_summary(NoiseSummary& summary, const std::optional<Interval>& interval, double estimate,
                    const std::vector<Differences>& draws, size_t versus,
                    std::vector<double>& mean_draws) {
  if (interval) {
    summary.below += interval->below_zero() ? 1 : 0;
    summary.above += interval->above_zero() ? 1 : 0;
  }
  for (size_t b = 0; b < draws.size(); ++b) {
    // A resample without a curve counts at the slice's own difference.
    mean_draws[b] += std::isnan(draws[b][versus]) ? estimate : draws[b][versus];
  }
}

}  // namespace

std::optional<double> SliceResult::best_baseline() const {
  if (!length || !turns) {
    return std::nullopt;
  }
  return std::max({*length, *turns, 0.5});
}

std::optional<double> apgr_of(const std::vector<double>& need, const ExampleRefs& rows) {
  std::vector<Outcome> outcomes;
  outcomes.reserve(rows.size());
  for (const TrainingExample* row : rows) {
    outcomes.push_back({row->edge, row->cloud, 0.0, 0.0});
  }
  const auto curve = sweep(need, outcomes, CostModel::kOneTier);
  return summarize(curve, 0.0).apgr;
}

void compare_incumbent(LeftOutReport& report, const std::vector<TrainingExample>& examples,
                       const routing::ComplexityModel& incumbent) {
  std::map<std::string, ExampleRefs> slices;
  for (const auto& example : examples) {
    slices[slice_key(example.source, example.task)].push_back(&example);
  }
  double sum = 0;
  for (auto& slice : report.slices) {
    const ExampleRefs& rows = slices[slice_key(slice.source, slice.task)];
    std::vector<double> need;
    for (const TrainingExample* row : rows) {
      need.push_back(incumbent.score(row->features));
    }
    slice.incumbent = apgr_of(need, rows);
    if (slice.counted() && slice.incumbent) {
      sum += *slice.incumbent;
    }
  }
  if (report.counted > 0) {
    report.mean_incumbent = sum / static_cast<double>(report.counted);
  }
}

size_t left_out_fits(const std::vector<TrainingExample>& examples, const std::string& by) {
  // A group is skipped when the rest has one label only: count each group's labels and the
  // totals instead of building every complement.
  std::map<std::string, std::pair<size_t, size_t>> groups;  // group -> (positives, negatives)
  size_t positives = 0;
  for (const auto& example : examples) {
    auto& [group_positives, group_negatives] = groups[group_of(example, by)];
    ++(example.label != 0 ? group_positives : group_negatives);
    positives += example.label != 0 ? 1 : 0;
  }
  const size_t negatives = examples.size() - positives;
  size_t fits = 0;
  for (const auto& [group, labels] : groups) {
    fits += positives > labels.first && negatives > labels.second ? 1 : 0;
  }
  return fits;
}

LeftOutReport leave_one_out(const std::vector<TrainingExample>& examples, const std::string& by,
                            const ModelFitter& fit) {
  std::map<std::string, std::map<std::string, ExampleRefs>> groups;  // group -> slice -> rows
  for (const auto& example : examples) {
    groups[group_of(example, by)][slice_key(example.source, example.task)].push_back(&example);
  }
  LeftOutReport report;
  report.by = by;
  report.need.assign(examples.size(), std::numeric_limits<double>::quiet_NaN());
  // Mixed traffic: per source, its rows and their scores by the model fitted without them.
  std::map<std::string, std::pair<ExampleRefs, std::vector<double>>> sources;
  for (const auto& [group, slices] : groups) {
    ExampleRefs train;
    for (const auto& example : examples) {
      if (group_of(example, by) != group) {
        train.push_back(&example);
      }
    }
    if (!has_both_labels(train)) {
      continue;
    }
    const routing::ComplexityModel model = fit(train);
    for (const auto& [name, rows] : slices) {
      std::vector<double> need;
      for (const TrainingExample* row : rows) {
        need.push_back(model.score(row->features));
        report.need[static_cast<size_t>(row - examples.data())] = need.back();
        auto& [mixed_rows, mixed_need] = sources[row->source];
        mixed_rows.push_back(row);
        mixed_need.push_back(need.back());
      }
      report.slices.push_back(score_slice(rows, need));
    }
  }
  for (const auto& [source, scored] : sources) {
    report.mixed.push_back(score_slice(scored.first, scored.second));
    report.mixed.back().task = "(all)";
  }
  for (const auto& slice : report.slices) {
    if (!slice.counted()) {
      continue;
    }
    ++report.counted;
    report.mean_model += *slice.model;
    report.mean_length += *slice.length;
    report.mean_best_baseline += *slice.best_baseline();
    report.at_least_baseline += *slice.model >= *slice.best_baseline() ? 1 : 0;
  }
  if (report.counted > 0) {
    const auto n = static_cast<double>(report.counted);
    report.mean_model /= n;
    report.mean_length /= n;
    report.mean_best_baseline /= n;
  }
  return report;
}

void measure_noise(LeftOutReport& report, const std::vector<TrainingExample>& examples,
                   size_t draws, uint64_t seed) {
  if (draws == 0 || report.need.size() != examples.size()) {
    return;
  }
  // The rows of each slice and of each source's mixed traffic, as leave_one_out() scored them.
  std::map<std::string, ScoredRows> slices;
  std::map<std::string, ScoredRows> sources;
  for (size_t i = 0; i < examples.size(); ++i) {
    if (std::isnan(report.need[i])) {
      continue;
    }
    const TrainingExample& row = examples[i];
    for (ScoredRows* scored : {&slices[slice_key(row.source, row.task)], &sources[row.source]}) {
      scored->rows.push_back(&row);
      scored->need.push_back(report.need[i]);
    }
  }
  report.noise_draws = draws;
  report.versus_length = {};
  report.versus_best = {};
  std::vector<double> length_draws(draws, 0.0);
  std::vector<double> best_draws(draws, 0.0);
  for (SliceResult& slice : report.slices) {
    const std::string name = slice_key(slice.source, slice.task);
    const auto found = slices.find(name);
    if (found == slices.end()) {
      continue;
    }
    // Seeded by the slice's name: its draws are the same whatever other slices are measured.
    const auto differences = resampled_differences(found->second, draws, seed ^ fnv1a64(name));
    set_intervals(slice, differences);
    if (slice.counted()) {
      add_to_summary(report.versus_length, slice.versus_length, *estimate_of(slice, kVersusLength),
                     differences, kVersusLength, length_draws);
      add_to_summary(report.versus_best, slice.versus_best, *estimate_of(slice, kVersusBest),
                     differences, kVersusBest, best_draws);
    }
  }
  for (SliceResult& slice : report.mixed) {
    const auto found = sources.find(slice.source);
    if (found != sources.end()) {
      set_intervals(slice, resampled_differences(found->second, draws,
                                                 seed ^ fnv1a64(slice_key(slice.source, "(all)"))));
    }
  }
  if (report.counted > 0) {
    const auto n = static_cast<double>(report.counted);
    auto mean_of = [n](std::vector<double> sums) {
      for (double& d : sums) {
        d /= n;
      }
      return sums;
    };
    report.versus_length.mean =
        percentile_interval(report.mean_model - report.mean_length, mean_of(length_draws));
    report.versus_best.mean =
        percentile_interval(report.mean_model - report.mean_best_baseline, mean_of(best_draws));
  }
}

}  // namespace tandem::eval
