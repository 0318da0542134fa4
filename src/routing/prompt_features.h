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

// What the features are computed from: views into the request (the one copy is an app's task
// joined to its message, in a buffer the thread keeps).
struct PromptView {
  std::string_view system;     // system/developer text, a line per message; may be empty
  std::string_view last_user;  // the last user message (or the completions prompt)
  size_t turns = 1;            // user+assistant messages in the conversation
  size_t total_chars = 0;      // all messages' text (line breaks joining them not counted)
  // The user messages before the last, oldest first (thread_task.h); views owned by the caller.
  std::span<const std::string_view> earlier_user;
};

inline constexpr size_t kFeatureCount = 32;

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

// Feature values recorded by a gateway (trace rows): kFeatureCount of them, or fewer from a
// build before the last features were added, read with 0 for each missing one, the value of
// every prompt before them: `requested_length` (a prompt that names no answer size) and
// `thread_task` (a conversation of one user message). False for any other count.
inline constexpr size_t kFeatureCountBeforeRequestedLength = 30;
bool read_recorded_features(std::span<const float> values, PromptFeatures& out);

class TaskModel;

// An app often states its task in the system prompt and sends only the material as the user
// message: "Extract every date and amount from the user's text as JSON" over a bond indenture,
// "You are a buy-side analyst: build an investment thesis with bull, base and bear scenarios"
// over five lines of bank figures. Read alone, the user message inverts the two. So when the
// system prompt states a task, the text features read the part of its first kSystemHeadBytes
// that states it, a line break, then the user message, as one prompt: the instruction stands
// first, where the cue scan and the task model look for the request (request_spans.h), and the
// user message after it is its material. Which part states a task is system_task.h's: the
// whole head, or what follows the persona it opens with ("You are Harbor Line's assistant.\n
// Summarize the message in one sentence.\nBe polite."); a persona alone ("You are a helpful
// assistant.") or house rules state none, and the user message is then read alone, as it would
// be without them. The head bounds the cost of an agent's long system prompt, which states its
// role first.
inline constexpr size_t kSystemHeadBytes = 1024;

// Linear in the length of the text; the system prompt contributes its length and its head (see
// above), earlier user turns only their request windows (thread_task.h). The task_ngrams and
// thread_task features are `task`'s logits (the shipped task model unless a caller measures another
// one, as `tandem router pairs --task-model` does).
PromptFeatures extract_features(const PromptView& prompt);
PromptFeatures extract_features(const PromptView& prompt, const TaskModel& task);

}  // namespace tandem::routing
