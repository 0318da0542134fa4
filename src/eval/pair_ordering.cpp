#include "eval/pair_ordering.h"

#include <algorithm>

namespace tandem::eval {
namespace {

double score(const std::string& prompt, const PairThread& thread,
             const routing::ComplexityModel& model, const routing::TaskModel& task) {
  std::vector<std::string_view> earlier;
  return model.score(routing::extract_features(pair_side_view(prompt, thread, earlier), task));
}

}  // namespace

std::vector<PairOrdering> order_pairs(const std::vector<PromptPair>& pairs,
                                      const routing::ComplexityModel& model,
                                      const routing::TaskModel& task, double threshold) {
  std::vector<PairOrdering> rows;
  for (const auto& pair : pairs) {
    auto row = std::find_if(rows.begin(), rows.end(), [&](const PairOrdering& r) {
      return r.file == pair.file && r.lang == pair.lang;
    });
    if (row == rows.end()) {
      PairOrdering fresh;
      fresh.file = pair.file;
      fresh.lang = pair.lang;
      rows.push_back(std::move(fresh));
      row = rows.end() - 1;
    }
    const double easy = score(pair.easy, pair.easy_thread, model, task);
    const double hard = score(pair.hard, pair.hard_thread, model, task);
    ++row->pairs;
    if (hard > easy) {
      ++row->ordered;
    } else {
      row->misordered.push_back(pair.id);
    }
    row->easy_on_edge += easy < threshold ? 1 : 0;
    row->hard_on_cloud += hard >= threshold ? 1 : 0;
  }
  return rows;
}

CommonSense check_common_sense(const std::vector<PromptPair>& pairs,
                               const routing::ComplexityModel& model,
                               const routing::ComplexityModel* incumbent,
                               const routing::TaskModel& task) {
  // Only the ordering counts here: the threshold (which side of it each prompt falls) does not.
  constexpr double kAnyThreshold = 0.5;
  CommonSense check;
  check.model = order_pairs(pairs, model, task, kAnyThreshold);
  if (incumbent != nullptr) {
    check.incumbent = order_pairs(pairs, *incumbent, task, kAnyThreshold);
  }
  for (size_t i = 0; i < check.model.size(); ++i) {
    const PairOrdering& row = check.model[i];
    const bool at_floor =
        static_cast<double>(row.ordered) >= kCommonSenseFloor * static_cast<double>(row.pairs);
    const bool as_before = !check.incumbent.empty() && row.ordered >= check.incumbent[i].ordered;
    check.kept = check.kept && (at_floor || as_before);
  }
  return check;
}

}  // namespace tandem::eval
