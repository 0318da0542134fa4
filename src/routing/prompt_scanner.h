#pragma once
// The text features of one message, in one pass over its bytes: lengths, sentences and lines,
// numbers, symbols, the English words and Chinese phrases that name a task (counted where the
// request is, not in pasted material), and script ratios. prompt_features.cpp adds what needs
// the whole conversation or the task model.
//
// Thread-safety: a pure function.

#include <string_view>

#include "routing/prompt_features.h"

namespace tandem::routing {

// Fills the features that `text` alone determines; leaves the others as they are.
void scan_prompt_text(std::string_view text, PromptFeatures& features);

}  // namespace tandem::routing
