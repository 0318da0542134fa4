#pragma once
// `tandem plan`'s library: the seeds' deployment decision matrix as a pure function from
// PlanInputs to a Plan (edge, cloud or hybrid, the estimates behind it and a reason per factor).
// No I/O: the CLI reads files and prints; this is table-testable arithmetic.

#include <string>
#include <vector>

#include "common/result.h"
#include "planning/estimates.h"
#include "planning/plan_inputs.h"
#include "planning/rules.h"

namespace tandem::planning {

enum class Verdict {
  kEdge,    // serve on the device
  kCloud,   // serve from the cloud API
  kHybrid,  // both: the edge serves what it can, the cloud the rest (the pattern says how)
};
const char* verdict_name(Verdict verdict);

struct Plan {
  PlanInputs inputs;
  MemoryEstimate memory;
  SpeedEstimate speed;
  CostEstimate cost;
  std::vector<Reason> factors;  // one per factor (rules.h), in a fixed order
  Verdict verdict = Verdict::kHybrid;
  Reason decision;             // the combining rule that chose the verdict (factor "verdict")
  std::string recommendation;  // what to deploy, in Tandem's terms
  // Requirements the plan cannot meet as it stands (empty: feasible). Each says what to change.
  std::vector<std::string> blockers;
  bool feasible() const { return blockers.empty(); }
};

// Validates the inputs across fields (validate_inputs) and plans. Errors: kInvalidArgument.
Result<Plan> make_plan(const PlanInputs& inputs);

}  // namespace tandem::planning
