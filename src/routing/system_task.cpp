#include "routing/system_task.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "common/ascii.h"
#include "common/utf8.h"
#include "routing/prompt_feature_ids.h"
#include "routing/prompt_features.h"
#include "routing/prompt_scanner.h"

namespace tandem::routing {
namespace {

using namespace prompt_detail;

// The system prompt's head, cut at a character boundary: where an app states its task.
std::string_view system_head(std::string_view system) {
  if (system.size() <= kSystemHeadBytes) {
    return system;
  }
  return system.substr(0, back_to_boundary(system, kSystemHeadBytes));
}

// A system prompt states a task with a task cue where its request is (its first line or
// sentence, its last line): not a constraint ("be concise") or a factoid word...
constexpr uint8_t kSystemTaskCues[] = {kEasyTaskCues, kYesNoCues, kHardTaskCues, kReasoningCues,
                                       kCreativeCues};
// ... or with words the task model reads this many logits from a text that says nothing (its
// bias): "You are a buy-side analyst. … build an investment thesis" has no cue in its first
// sentence, and reads 3.2 logits harder.
constexpr double kSystemTaskMargin = 2.0;

bool has_task_cue(std::string_view text) {
  PromptFeatures features;
  scan_prompt_text(text, features);
  return std::ranges::any_of(kSystemTaskCues,
                             [&](uint8_t cue) { return features.values[cue] > 0; });
}

// A persona alone ("You are a helpful assistant.") or house rules ("Be friendly; never invent
// order details") state none, and reading them first would make the user's own request
// material.
std::string_view find_system_task(std::string_view head, const TaskModel& task_model) {
  if (has_task_cue(head) ||
      std::abs(task_model.logit(head) - task_model.bias()) >= kSystemTaskMargin) {
    return head;
  }
  // Only the cue is looked for after a persona: the task model has read these words already,
  // with the head; what it could not see is that the request stands after the persona.
  const std::string_view rest = after_persona(head);
  if (!rest.empty() && has_task_cue(rest)) {
    return rest;
  }
  return {};
}

// The answers for the last few heads read on this thread, with the head and the version of the
// task model read with; a repeated head costs a comparison instead of a scan and the task
// model's reading. The text itself is compared, not a hash of it, and the model by its version,
// not its address (weights loaded where others were must not be answered for by the old ones).
class SystemTaskMemo {
 public:
  std::string_view answer(std::string_view head, const TaskModel& task_model) {
    for (size_t i = 0; i < count_; ++i) {
      const Entry& e = entries_[i];
      if (e.head == head && e.model_version == task_model.version()) {
        return e.from == kNoTask ? std::string_view{} : head.substr(e.from);
      }
    }
    const std::string_view task = find_system_task(head, task_model);
    Entry& e = entries_[next_];
    e.head.assign(head);
    e.model_version.assign(task_model.version());
    e.from = task.empty() ? kNoTask : static_cast<size_t>(task.data() - head.data());
    next_ = (next_ + 1) % kSize;
    count_ = std::min(count_ + 1, kSize);
    return task;
  }

 private:
  static constexpr size_t kNoTask = std::string_view::npos;
  struct Entry {
    std::string head;  // at most kSystemHeadBytes: the entries stay small
    std::string model_version;
    size_t from = kNoTask;  // where in the head the task's part begins; kNoTask: none
  };
  static constexpr size_t kSize = 4;
  std::array<Entry, kSize> entries_{};
  size_t next_ = 0;
  size_t count_ = 0;
};

// ASCII letters compared without case; other bytes exactly.
bool starts_with_folded(std::string_view text, std::string_view lower_prefix) {
  if (text.size() < lower_prefix.size()) {
    return false;
  }
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    if (lower_ascii(text[i]) != lower_prefix[i]) {
      return false;
    }
  }
  return true;
}

constexpr std::array<std::string_view, 11> kPersonaOpenings = {
    "you are ", "you're ", "you\u2019re ", "act as ", "i want you to act as ", "你是", "您是",
    "你现在是", "你扮演",  "请你扮演",     "你将扮演"};

// Where a persona's clause ends and what follows it begins: after a sentence's end (followed
// by a space or the end), a colon, a line break, or a Chinese full stop, comma or semicolon.
constexpr std::array<std::string_view, 6> kWideEnds = {"。", "，", "；", "：", "！", "？"};

size_t persona_end(std::string_view text, size_t from) {
  for (size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || c == ':') {
      return i + 1;
    }
    if ((c == '.' || c == '!' || c == '?') &&
        (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
      return i + 1;
    }
    if (static_cast<unsigned char>(c) >= 0x80) {
      const std::string_view here = text.substr(i, 3);
      if (std::ranges::find(kWideEnds, here) != kWideEnds.end()) {
        return i + here.size();
      }
    }
  }
  return text.size();
}

size_t skip_spaces(std::string_view text, size_t from) {
  while (from < text.size() &&
         (text[from] == ' ' || text[from] == '\t' || text[from] == '\n' || text[from] == '\r')) {
    ++from;
  }
  return from;
}

}  // namespace

std::string_view after_persona(std::string_view text) {
  const size_t start = skip_spaces(text, 0);
  const std::string_view opened = text.substr(start);
  for (const std::string_view opening : kPersonaOpenings) {
    if (starts_with_folded(opened, opening)) {
      const size_t end = persona_end(opened, opening.size());
      return opened.substr(skip_spaces(opened, end));
    }
  }
  return {};
}

std::string_view system_task(std::string_view system, const TaskModel& task_model) {
  if (system.empty()) {
    return {};
  }
  thread_local SystemTaskMemo memo;
  return memo.answer(system_head(system), task_model);
}

}  // namespace tandem::routing
