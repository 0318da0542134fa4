#pragma once
// Edits values in a YAML configuration's text while keeping everything else as it was:
// comments, key order, quoting and blank lines. `tandem calibrate --write` uses it, so that a
// hand-written configuration stays hand-written after calibration.
//
// Limits: the mappings on an edited path must be in block style (`key:` on its own line);
// a flow-style mapping (`cascade: {threshold: 0.5}`) on the path is refused with its line.
//
// Thread-safety: free functions without shared state.

#include <string>
#include <vector>

#include "common/result.h"

namespace tandem::config {

struct ConfigEdit {
  std::vector<std::string> path;  // {"routing", "cascade", "threshold"}
  std::string value;              // YAML scalar text, written as is
};

// Applies the edits in order. A key that exists gets its value replaced; a missing key is
// added at the end of its mapping (missing parents too). `source` names the text in errors.
Result<std::string> apply_edits(std::string text, const std::vector<ConfigEdit>& edits,
                                const std::string& source);

}  // namespace tandem::config
