#pragma once
// The cost-quality curves of an evaluation as a self-contained SVG (no scripts, no fonts or
// files fetched): quality against cloud share, one line per policy, the random and oracle
// baselines dashed, and the 95%-of-cloud-quality line.

#include <string>

#include "eval/evaluate.h"

namespace tandem::eval {

std::string curves_svg(const EvalReport& report, const std::string& title);

}  // namespace tandem::eval
