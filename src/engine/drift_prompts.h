#pragma once
// The prompts a drift measurement runs on (docs/DRIFT.md): the operator's own traffic, one
// prompt per line, or JSONL with a "prompt" field for prompts that span lines.

#include <string>
#include <vector>

#include "common/result.h"

namespace tandem::engine {

struct DriftPrompt {
  std::string text;
  std::string source;  // "FILE:LINE", for reports and error messages
};

// Reads `path`. The format is decided by the first non-blank line: JSONL when it starts with
// '{', plain text otherwise. Blank lines are skipped; a trailing '\r' is dropped.
// Errors: kNotFound (cannot open), kInvalidArgument naming FILE:LINE (a JSONL line that is not
// an object with a non-empty string "prompt"), kInvalidArgument (no prompts at all).
Result<std::vector<DriftPrompt>> read_drift_prompts(const std::string& path);

}  // namespace tandem::engine
