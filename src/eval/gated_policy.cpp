#include "eval/gated_policy.h"

#include <algorithm>
#include <limits>

namespace tandem::eval {

GatedScores gated_scores(const std::vector<Sample>& samples, double ingress_threshold) {
  GatedScores out;
  out.need.reserve(samples.size());
  out.direct.reserve(samples.size());
  double highest = std::numeric_limits<double>::lowest();
  for (const auto& sample : samples) {
    out.need.push_back(cascade_need(sample));
    out.direct.push_back(sample.complexity >= ingress_threshold);
    highest = std::max(highest, out.need.back());
  }
  // One finite need above every cascaded query: the gated queries form the curve's first group.
  const double gated_need = samples.empty() ? 0.0 : highest + 1.0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (out.direct[i]) {
      out.need[i] = gated_need;
    }
  }
  return out;
}

std::vector<Sample> without_edge_cost(std::vector<Sample> samples,
                                      const std::vector<bool>& direct) {
  for (size_t i = 0; i < samples.size() && i < direct.size(); ++i) {
    if (direct[i]) {
      samples[i].cost[kEdgeTier] = 0.0;
    }
  }
  return samples;
}

}  // namespace tandem::eval
