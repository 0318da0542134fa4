#pragma once
// Internal to the prompt features (prompt_features.cpp, prompt_scanner.cpp,
// prompt_vocabulary.cpp, prompt_cues_zh.cpp): the features by index, so the scanner and the
// cue tables name them without string lookups.

#include <cstdint>

#include "routing/prompt_features.h"

namespace tandem::routing::prompt_detail {

// Feature indices, in the order of feature_names(). Cue categories store one of these.
enum Feature : uint8_t {
  kLogChars,
  kLogWords,
  kLogTurns,
  kLogSystemChars,
  kLogHistoryChars,
  kSentences,
  kQuestionMarks,
  kLines,
  kDigitRatio,
  kNumbers,
  kMathSymbols,
  kMathTerms,
  kCodeSymbols,
  kCodeKeywords,
  kEasyTaskCues,
  kYesNoCues,
  kChoiceOptions,
  kHardTaskCues,
  kReasoningCues,
  kCreativeCues,
  kConstraintCues,
  kFactoidCues,
  kNegationCues,
  kDomainTerms,
  kNonAsciiRatio,
  kCjkRatio,
  kCapitalizedRatio,
  kAvgWordLength,
  kLongWordRatio,
  kTaskNgrams,
  kRequestedLength,
  kThreadTask,
  kFeatureEnd,
  kNoCue = 0xff,
};
static_assert(kFeatureEnd == kFeatureCount, "feature enum and kFeatureCount disagree");

}  // namespace tandem::routing::prompt_detail
