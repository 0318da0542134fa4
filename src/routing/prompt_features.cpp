#include "routing/prompt_features.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "routing/prompt_feature_ids.h"
#include "routing/prompt_scanner.h"
#include "routing/requested_length.h"
#include "routing/system_task.h"
#include "routing/task_model.h"
#include "routing/thread_task.h"

namespace tandem::routing {
namespace {

using namespace prompt_detail;

constexpr std::array<std::string_view, kFeatureCount> kNames = {
    "log_chars",         "log_words",      "log_turns",         "log_system_chars",
    "log_history_chars", "sentences",      "question_marks",    "lines",
    "digit_ratio",       "numbers",        "math_symbols",      "math_terms",
    "code_symbols",      "code_keywords",  "easy_task_cues",    "yes_no_cues",
    "choice_options",    "hard_task_cues", "reasoning_cues",    "creative_cues",
    "constraint_cues",   "factoid_cues",   "negation_cues",     "domain_terms",
    "non_ascii_ratio",   "cjk_ratio",      "capitalized_ratio", "avg_word_length",
    "long_word_ratio",   "task_ngrams",    "requested_length",  "thread_task",
};

// A buffer kept from one request to the next on the thread, so that joining allocates only
// when a prompt is longer than any before it; one far longer than usual is not kept.
constexpr size_t kKeptJoinBytes = 64 * 1024;

// What the request is read in: the part of the system prompt that states the app's task
// (system_task.h), a line break, the user message; else the user message alone.
std::string_view joined_text(const PromptView& prompt, const TaskModel& task_model,
                             std::string& storage) {
  const std::string_view task = system_task(prompt.system, task_model);
  if (task.empty()) {
    return prompt.last_user;
  }
  storage.clear();
  storage.reserve(task.size() + 1 + prompt.last_user.size());
  storage.append(task);
  storage.push_back('\n');
  storage.append(prompt.last_user);
  return storage;
}

}  // namespace

const std::array<std::string_view, kFeatureCount>& feature_names() {
  return kNames;
}

size_t feature_index(std::string_view name) {
  for (size_t i = 0; i < kFeatureCount; ++i) {
    if (kNames[i] == name) {
      return i;
    }
  }
  return kFeatureCount;
}

bool read_recorded_features(std::span<const float> values, PromptFeatures& out) {
  if (values.size() > kFeatureCount || values.size() < kFeatureCountBeforeRequestedLength) {
    return false;
  }
  out = PromptFeatures{};
  std::ranges::copy(values, out.values.begin());
  return true;
}

PromptFeatures extract_features(const PromptView& prompt) {
  return extract_features(prompt, TaskModel::builtin());
}

PromptFeatures extract_features(const PromptView& prompt, const TaskModel& task_model) {
  PromptFeatures features;
  thread_local std::string storage;
  const std::string_view text = joined_text(prompt, task_model, storage);
  scan_prompt_text(text, features);
  auto log_count = [](size_t count) { return static_cast<float>(std::log1p(count)); };
  features.values[kLogTurns] = log_count(prompt.turns);
  features.values[kLogSystemChars] = log_count(prompt.system.size());
  // What the conversation holds besides the system prompt and the last message: long
  // histories need long-context skill. total_chars may be 0 when the caller left it unset.
  const size_t own = prompt.system.size() + prompt.last_user.size();
  features.values[kLogHistoryChars] =
      log_count(prompt.total_chars > own ? prompt.total_chars - own : 0);
  // The task model's judgement of what is asked (its stand-in's on text it cannot read),
  // clipped so that no prompt's n-grams can outweigh every other feature (the training data's
  // logits stay within about ±6).
  // The request is found once for the two features that read it.
  const PromptRequest request = find_prompt_request(text);
  const double task = task_model.judgement(request, features.values);
  features.values[kTaskNgrams] =
      static_cast<float>(std::clamp(task, -kTaskLogitLimit, kTaskLogitLimit));
  features.values[kRequestedLength] = static_cast<float>(requested_length_value(request));
  features.values[kThreadTask] =
      static_cast<float>(thread_task_value(prompt.earlier_user, prompt.last_user, task_model));
  if (storage.capacity() > kKeptJoinBytes) {
    std::string().swap(storage);
  }
  return features;
}

}  // namespace tandem::routing
