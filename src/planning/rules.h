#pragma once
// The decision matrix, one rule per factor: each factor of seed 001's matrix (latency, volume
// and utilization, data sensitivity, model size and task) plus the seeds' hard cases (offline,
// memory) looks at the inputs and the estimates and says which way it leans, why (with the
// numbers) and which seed sentence the rule comes from.

#include <string>
#include <vector>

#include "planning/estimates.h"
#include "planning/plan_inputs.h"

namespace tandem::planning {

// Which way a factor pushes the deployment.
enum class Lean {
  // Only the edge satisfies it (regulated data, no network, a latency the cloud cannot reach).
  kEdgeRequired,
  // Favours the edge.
  kEdge,
  // No preference; the reason is informational.
  kNeutral,
  // The edge can serve it only with the cloud behind it (escalation or verification).
  kHybrid,
  // Favours the cloud.
  kCloud,
  // The edge cannot run it at all (the model does not fit the device's memory).
  kEdgeImpossible,
};
const char* lean_name(Lean lean);

struct Reason {
  std::string factor;  // "first_token", "privacy", "cost", ...
  std::string code;    // stable, machine-readable: "privacy.regulated"
  Lean lean = Lean::kNeutral;
  std::string text;    // for people, with the numbers
  std::string source;  // the seed sentence the rule comes from
  // A requirement that no deployment meets as planned (the plan is then not feasible).
  bool blocking = false;
};

// One reason per factor, in a fixed order: first_token, answer_time, decode_speed, memory,
// privacy, connectivity, utilization, task, quantization, cost, capacity.
std::vector<Reason> evaluate_factors(const PlanInputs& inputs, const MemoryEstimate& memory,
                                     const SpeedEstimate& speed, const CostEstimate& cost);

}  // namespace tandem::planning
