#pragma once
// The planner's inputs as named fields. One table drives the command-line flags
// (`memory_bandwidth_gbps` is `--memory-bandwidth-gbps`), the keys of an inputs file, the
// inputs echoed in the JSON plan and docs/PLANNING.md, so the three cannot drift apart.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"
#include "planning/plan_inputs.h"

namespace tandem::planning {

// A field's current value: not set (an optional input left empty), a number or a name.
using InputValue = std::variant<std::monostate, double, std::string>;

struct InputField {
  const char* key;    // in files and JSON: "memory_bandwidth_gbps"
  const char* group;  // "workload", "model", "device", "cloud" or "costs"
  const char* help;   // one line, with the unit
  // Parses `text` into the field. The error says what is wrong, without naming the field:
  // set_input() prefixes the name the user wrote.
  Status (*set)(PlanInputs& inputs, const std::string& text);
  InputValue (*get)(const PlanInputs& inputs);
};

std::span<const InputField> input_fields();
const InputField* find_input_field(std::string_view key);

// "--memory-bandwidth-gbps" for "memory_bandwidth_gbps".
std::string flag_for_key(std::string_view key);

// A value for one field and where it was written, for errors: "--memory-bandwidth-gbps" or
// "scenario.yaml:7: memory_bandwidth_gbps".
struct InputSetting {
  std::string key;
  std::string text;
  std::string label;
};

// Sets each field in order. Errors are kInvalidArgument: "LABEL: must be greater than 0, not
// '-3'"; an unknown key names the label too.
Status apply_settings(PlanInputs& inputs, const std::vector<InputSetting>& settings);

// Checks that relate several fields (the request fits the context window, the cloud's latency
// range is ordered). Single fields are checked when they are set.
Status validate_inputs(const PlanInputs& inputs);

// A value as people read it: "4096", "0.4", "none", "Q4_K_M".
std::string format_input_value(const InputValue& value);

}  // namespace tandem::planning
