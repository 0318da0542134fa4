#pragma once
// The default pattern as an evaluated policy (`gated`): the ingress classifier sends what scores
// at or above its threshold straight to the cloud, and the edge's confidence cascade decides the
// rest. Its curve sweeps the cascade's threshold; the gated queries go to the cloud first, as one
// group, so below their share the curve is the straight line from all-edge (a random part of
// them). What it must be compared with is the cascade alone: whether sending the classifier's
// picks past the edge buys quality or only spends the cloud.
//
// Thread-safety: free functions without shared state.

#include <vector>

#include "eval/samples.h"

namespace tandem::eval {

// The raw confidence cascade's order, shared with the `confidence` policy: the least confident
// edge answer escalates first. The sample must carry the edge's confidence.
inline double cascade_need(const Sample& sample) {
  return -sample.confidence[kEdgeTier]->mean_logprob;
}

struct GatedScores {
  std::vector<double> need;  // higher: cloud first; the gated queries above every other
  std::vector<bool> direct;  // sent to the cloud by the classifier, never run on the edge
};

// `ingress_threshold`: the router's resolved `routing.ingress.threshold` (a score at or above it
// goes to the cloud). Every sample must carry the edge's confidence.
GatedScores gated_scores(const std::vector<Sample>& samples, double ingress_threshold);

// The samples with the edge's cost of the direct queries removed: the device never runs them,
// so the cascade's cost model (the edge always, the cloud on top) must not charge it.
std::vector<Sample> without_edge_cost(std::vector<Sample> samples, const std::vector<bool>& direct);

}  // namespace tandem::eval
