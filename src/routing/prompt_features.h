#pragma once
// Cheap lexical features of a prompt, the input of the ingress complexity classifier
// (complexity_model.h). One pass over the text, no regex, no allocation: the router computes
// them on every request, so they must cost microseconds (docs/ROUTER_TRAINING.md lists each
// feature and why it is there).
//
// Thread-safety: pure functions over immutable static tables; safe from any thread.

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace tandem::routing {

// What the features are computed from: views into the request (no copies on the hot path).
struct PromptView {
  std::string_view system;     // system message(s) text, may be empty
  std::string_view last_user;  // the last user message (or the completions prompt)
  size_t turns = 1;            // user+assistant messages in the conversation
  size_t total_chars = 0;      // all message text
};

inline constexpr size_t kFeatureCount = 31;

// Raw (unstandardised) feature values, in the order of feature_names(). Counts are log1p'd so
// that one huge prompt does not dominate a linear model; ratios are in [0, 1]. Every value is
// finite for every input, including the empty prompt.
struct PromptFeatures {
  std::array<float, kFeatureCount> values{};
};

// Stable snake_case names, one per feature. They are the keys of the weights file: renaming or
// reordering one is a format change (the loader rejects files whose names do not match).
const std::array<std::string_view, kFeatureCount>& feature_names();

// The index of a feature by name, or kFeatureCount when there is none.
size_t feature_index(std::string_view name);

// Feature values recorded by a gateway (trace rows): kFeatureCount of them, or one fewer from a
// build before `requested_length` (the last feature), read with 0 for it, the value of every
// prompt that names no answer size. False for any other count.
bool read_recorded_features(std::span<const float> values, PromptFeatures& out);

class TaskModel;

// Linear in the length of the text; the system prompt only contributes its length. The
// task_ngrams feature is `task`'s logit (the shipped task model unless a caller measures
// another one, as `tandem router pairs --task-model` does).
PromptFeatures extract_features(const PromptView& prompt);
PromptFeatures extract_features(const PromptView& prompt, const TaskModel& task);

}  // namespace tandem::routing
