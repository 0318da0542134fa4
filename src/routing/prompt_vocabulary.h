#pragma once
// The prompt features' task cues of languages written with spaces between words: a small
// vocabulary of English words, each counting toward a feature alone or taking part in a
// multi-word cue, and of Spanish, French, German, Portuguese, Italian and Russian words
// (prompt_words_intl.h), found by the FNV-1a hash the scanner computes as it reads a word, over
// its letters folded to lower case. prompt_cues_zh.h holds the Chinese, Japanese and Korean
// phrases.
//
// Thread-safety: immutable data built at compile time.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "routing/prompt_feature_ids.h"

namespace tandem::routing::prompt_detail {

// Words that take part in multi-word cues ("step by step", "at least", "which of the
// following"...). The scanner remembers the tags of the last two words, so phrases cost no
// lookahead and no allocation.
enum class Tag : uint8_t {
  kNone,
  kStep,
  kBy,
  kAt,
  kNo,
  kMore,
  kLess,
  kThan,
  kMost,
  kLeast,
  kHow,
  kMany,
  kMuch,
  kExplain,
  kWhy,
  kThe,
  kOf,
  kFollowing,
  kYes,
  kOr,
  kWhether,
  kJudge,  // assess, evaluate, determine, decide: "assess whether" asks for a judgement
  kTrade,
  kOffs,
};

struct VocabularyEntry {
  std::string_view word;
  uint8_t cue;  // a Feature counted when the word occurs alone, or kNoCue
  Tag tag;
};

inline constexpr size_t kMaxWordLength =
    20;  // characters: longer words are never in the vocabulary

inline constexpr uint32_t kFnvOffset = 2166136261u;
inline constexpr uint32_t kFnvPrime = 16777619u;

constexpr uint32_t fnv1a(std::string_view text) {
  uint32_t hash = kFnvOffset;
  for (char c : text) {
    hash = (hash ^ static_cast<uint8_t>(c)) * kFnvPrime;
  }
  return hash;
}

// FNV-1a over a vocabulary word's code points (ASCII and two-byte UTF-8 only, as the scanner
// reads them: vocabulary_letter_at), one step per letter: for ASCII the same as fnv1a.
constexpr uint32_t fnv1a_letters(std::string_view word) {
  uint32_t hash = kFnvOffset;
  for (size_t i = 0; i < word.size(); ++i) {
    uint32_t cp = static_cast<uint8_t>(word[i]);
    if (cp >= 0x80 && i + 1 < word.size()) {
      cp = (cp & 0x1f) << 6 | (static_cast<uint8_t>(word[++i]) & 0x3f);
    }
    hash = (hash ^ cp) * kFnvPrime;
  }
  return hash;
}

// The entry for `word` (letters in any case, UTF-8) whose fnv1a_letters over its folded letters
// (fold_letter, prompt_code_points.h) is `hash`, or nullptr when the word is not in the
// vocabulary.
const VocabularyEntry* find_word(uint32_t hash, std::string_view word);

// The vocabulary's entries, for tests: the English words and the other languages'.
std::span<const VocabularyEntry> english_words();
std::span<const VocabularyEntry> intl_words();

}  // namespace tandem::routing::prompt_detail
