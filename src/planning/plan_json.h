#pragma once
// The JSON form of a plan (`tandem plan --json`): one object with the verdict, the reasons, the
// estimates, the costs and the inputs it was computed from. Bytes are integers, money is US
// dollars, times are milliseconds; a break-even that never comes is null. docs/PLANNING.md
// documents every key.

#include <nlohmann/json.hpp>

#include "planning/plan.h"

namespace tandem::planning {

nlohmann::ordered_json plan_to_json(const Plan& plan);

// {"memory_gib": 16, ...}: every input field (null when unset), plus model_name and model_file.
nlohmann::ordered_json inputs_to_json(const PlanInputs& inputs);

}  // namespace tandem::planning
