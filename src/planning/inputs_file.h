#pragma once
// A scenario a team versions beside its code: a YAML (or JSON) mapping of input keys to values,
// the same keys as the flags (`memory_bandwidth_gbps: 100` is `--memory-bandwidth-gbps 100`),
// plus `model_file` (a GGUF, relative to the file's directory) and `model_name`. Unknown keys
// are errors. The "inputs" object of `tandem plan --json` is such a file: save it to version
// the scenario a plan came from.
//
//   # scenario.yaml
//   model_file: models/stories260K.gguf
//   requests_per_day: 20000
//   sensitivity: confidential
//   first_token_ms: 150

#include <string>
#include <vector>

#include "common/result.h"
#include "planning/input_fields.h"

namespace tandem::planning {

struct InputsFile {
  std::string model_file;              // resolved against the file's directory; empty: none
  std::string model_name;              // a name for people; empty: none
  std::vector<InputSetting> settings;  // in file order, labelled "PATH:LINE: key"
};

// Reads and checks the file's shape and keys; the values are checked when applied
// (apply_settings), with the same labels. Errors: kNotFound, kInvalidArgument.
Result<InputsFile> read_inputs_file(const std::string& path);

}  // namespace tandem::planning
