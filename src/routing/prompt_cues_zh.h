#pragma once
// The Chinese half of the prompt features' task cues (prompt_features.cpp holds the English
// words). Chinese has no spaces, so cues are phrases of one to four characters matched where
// they end inside a run of CJK characters; each counts toward the same feature as its English
// counterpart ("证明" and "prove" both count in hard_task_cues), so one set of weights serves
// both languages. docs/ROUTER_TRAINING.md lists the categories.
//
// Thread-safety: immutable static data.

#include <cstddef>
#include <span>
#include <string_view>

namespace tandem::routing {

struct ZhCue {
  std::string_view phrase;   // UTF-8, 1 to kMaxZhCueChars CJK characters
  std::string_view feature;  // a name of feature_names()
};

inline constexpr size_t kMaxZhCueChars = 4;

std::span<const ZhCue> zh_cues();

}  // namespace tandem::routing
