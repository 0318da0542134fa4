#include "eval/samples.h"

namespace tandem::eval {

Result<SampleSet> make_samples(const std::vector<eval::TraceRow>& rows,
                               const SampleOptions& options, const routing::Router& router,
                               Progress& progress) {
  std::vector<std::pair<std::string, std::string>> roles = {{"edge", options.edge},
                                                            {"cloud", options.cloud}};
  if (!options.mid.empty()) {
    roles.emplace_back("mid", options.mid);
  }
  if (auto present = eval::require_models(rows, roles); !present) {
    return present.error();
  }
  for (size_t i = 0; i < roles.size(); ++i) {
    for (size_t j = i + 1; j < roles.size(); ++j) {
      if (roles[i].second == roles[j].second) {
        return make_error(ErrorCode::kInvalidArgument,
                          "the " + roles[i].first + " and the " + roles[j].first +
                              " model are the same ('" + roles[i].second + "')");
      }
    }
  }
  SampleSet set;
  set.rows_read = rows.size();
  set.models = eval::models_in(rows);
  const std::array<const std::string*, 3> names = {&options.edge, &options.mid, &options.cloud};
  progress.phase("routing prompts", rows.size());
  size_t done = 0;
  for (const auto& row : rows) {
    progress.update(done++);  // here, since incomplete rows leave the loop early
    Sample sample;
    bool complete = true;
    bool costed = true;
    for (size_t tier = 0; tier < 3; ++tier) {
      if (names[tier]->empty()) {
        continue;
      }
      const eval::ModelAnswer* answer = row.answer(*names[tier]);
      if (answer == nullptr) {
        complete = false;
        break;
      }
      sample.score[tier] = answer->score;
      costed = costed && answer->cost_usd.has_value();
      sample.cost[tier] = answer->cost_usd.value_or(0.0);
      if (answer->confidence) {
        const double c = *answer->confidence;
        sample.confidence[tier] = ConfidenceSignals{c, c, 0.0, 0.0, answer->tokens_out.value_or(1)};
      }
    }
    if (!complete) {
      ++set.rows_skipped;
      continue;
    }
    if (options.edge_cost_zero) {
      sample.cost[kEdgeTier] = 0;
    }
    set.rows_without_cost += costed ? 0 : 1;
    set.has_confidence = set.has_confidence && sample.confidence[kEdgeTier] &&
                         (options.mid.empty() || sample.confidence[kMidTier]);
    sample.id = row.id;
    sample.task = row.task;
    sample.prompt_chars = static_cast<double>(row.prompt.size());
    sample.hash = eval::row_hash(row.id, options.seed);
    routing::RouteInput input;
    input.prompt = eval::prompt_view(row);
    const std::string text = row.system + "\n" + row.prompt;
    input.text = text;
    sample.signals = router.signals(input);
    sample.kind = sample.signals.kind;
    sample.complexity = sample.signals.complexity;
    set.samples.push_back(std::move(sample));
  }
  progress.update(rows.size());
  if (set.samples.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "no row has a score for every model asked for (" +
                          std::to_string(set.rows_read) + " rows read)");
  }
  return set;
}

std::vector<Outcome> outcomes(const std::vector<Sample>& samples) {
  std::vector<Outcome> out;
  out.reserve(samples.size());
  for (const auto& s : samples) {
    out.push_back(s.outcome());
  }
  return out;
}

double all_cloud_cost(const std::vector<Sample>& samples) {
  double sum = 0;
  for (const auto& s : samples) {
    sum += s.cost[kCloudTier];
  }
  return sum;
}

}  // namespace tandem::eval
