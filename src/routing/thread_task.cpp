#include "routing/thread_task.h"

#include <algorithm>
#include <array>

#include "common/ascii.h"
#include "routing/prompt_scanner.h"
#include "routing/requested_length.h"
#include "routing/task_model.h"

namespace tandem::routing {
namespace {

// A change of subject is announced at a message's start, after at most a greeting or a thanks
// ("Thanks! By the way, …", "好的，顺便问一下…"): only these first bytes are searched.
constexpr size_t kOpeningBytes = 48;

// Phrases that turn to a new subject, lower case. An English one must stand as words: not
// inside a longer word ("btw" in "subtweet").
constexpr std::array<std::string_view, 17> kEnglishTurns = {
    "unrelated",        "by the way",        "btw",
    "another question", "other question",    "different question",
    "new question",     "separate question", "off topic",
    "off-topic",        "new topic",         "different topic",
    "on another note",  "change of subject", "changing the subject",
    "switching gears",  "side question",
};
constexpr std::array<std::string_view, 11> kChineseTurns = {
    "顺便", "换个话题", "换个问题", "另外问",   "另一个问题", "题外话",
    "无关", "不相关",   "新问题",   "别的问题", "插个问题",
};

bool word_boundary(std::string_view text, size_t at) {
  return at >= text.size() || !is_ascii_letter(static_cast<unsigned char>(text[at]));
}

bool has_english_turn(std::string_view opening) {
  for (const std::string_view phrase : kEnglishTurns) {
    for (size_t at = opening.find(phrase); at != std::string_view::npos;
         at = opening.find(phrase, at + 1)) {
      if ((at == 0 || word_boundary(opening, at - 1)) &&
          word_boundary(opening, at + phrase.size())) {
        return true;
      }
    }
  }
  return false;
}

// The task model's judgement of an earlier turn's request, as the last message's is judged
// (prompt_features.cpp): where the model does not fully read it (a language it was not trained
// on), its stand-in speaks from the cues scanned in the windows read, the harder window's
// judgement counting. The scan is paid only then: English and Chinese turns read in full cost
// the n-gram walk alone.
double turn_judgement(const PromptRequest& request, const TaskModel& task) {
  const TaskModel::Reading read = task.read(request);
  if (read.reading >= 1.0 || request.count == 0) {
    return read.logit;
  }
  double hardest = -kTaskLogitLimit;
  for (size_t w = 0; w < request.count; ++w) {
    PromptFeatures features;
    scan_prompt_text(request.windows[w].text, features);
    hardest = std::max(hardest, task.judgement(read, features.values));
  }
  return hardest;
}

}  // namespace

bool changes_subject(std::string_view last_user) {
  std::array<char, kOpeningBytes> lowered{};
  const size_t size = std::min(last_user.size(), kOpeningBytes);
  std::transform(last_user.begin(), last_user.begin() + static_cast<std::ptrdiff_t>(size),
                 lowered.begin(), lower_ascii);
  // A phrase cut at the window's end is not found, whatever its bytes: both lists are searched
  // for whole phrases only.
  const std::string_view opening(lowered.data(), size);
  if (has_english_turn(opening)) {
    return true;
  }
  return std::ranges::any_of(kChineseTurns, [&](std::string_view phrase) {
    const size_t at = opening.find(phrase);
    // "无关紧要" is "it does not matter", not a new subject.
    return at != std::string_view::npos &&
           !(phrase == "无关" && opening.substr(at + phrase.size()).starts_with("紧要"));
  });
}

double thread_reliance(std::string_view last_user) {
  if (last_user.size() >= kSelfContainedLimit || changes_subject(last_user)) {
    return 0.0;
  }
  return 1.0 / (1.0 + static_cast<double>(last_user.size()) / kSelfContainedBytes);
}

double thread_task_value(std::span<const std::string_view> earlier_user, std::string_view last_user,
                         const TaskModel& task) {
  if (earlier_user.empty()) {
    return 0.0;
  }
  const double reliance = thread_reliance(last_user);
  if (reliance == 0.0) {
    return 0.0;  // not worth reading the thread
  }
  double hardest = 0.0;
  double weight = 1.0;
  const size_t turns = std::min(earlier_user.size(), kThreadTurns);
  for (size_t back = 1; back <= turns; ++back) {
    const PromptRequest request =
        find_prompt_request(earlier_user[earlier_user.size() - back], kThreadWindowBytes);
    const double asked = turn_judgement(request, task) + requested_length_value(request);
    hardest = std::max(hardest, weight * asked);
    weight *= kThreadDecay;
  }
  return std::min(hardest, kTaskLogitLimit) * reliance;
}

}  // namespace tandem::routing
