#pragma once
// The three-tier cascade (edge -> mid -> cloud): each tier escalates when its calibrated
// P(good) is below the same threshold t. Sweeping t over every value where some query changes
// tier gives the exact curve (cloud share grows with t).
//
// Thread-safety: free functions without shared state.

#include <vector>

#include "eval/curve.h"
#include "eval/samples.h"

namespace tandem::eval {

// `edge_good` and `mid_good`: each sample's P(good) for the edge's and the mid tier's answer.
std::vector<CurvePoint> three_tier_curve(const std::vector<Sample>& samples,
                                         const std::vector<double>& edge_good,
                                         const std::vector<double>& mid_good);

}  // namespace tandem::eval
