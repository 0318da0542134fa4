#include "eval/left_out.h"

#include <algorithm>
#include <map>
#include <utility>

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
    slices[example.source + "/" + example.task].push_back(&example);
  }
  double sum = 0;
  for (auto& slice : report.slices) {
    const ExampleRefs& rows = slices[slice.source + "/" + slice.task];
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
    groups[group_of(example, by)][example.source + "/" + example.task].push_back(&example);
  }
  LeftOutReport report;
  report.by = by;
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

}  // namespace tandem::eval
