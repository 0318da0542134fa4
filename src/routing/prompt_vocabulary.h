#pragma once
// The prompt features' task cues of languages written with spaces between words: a small
// vocabulary of English words, each counting toward a feature alone or taking part in a
// multi-word cue, and of fifteen more languages' words (prompt_words_intl.h: Spanish, French,
// German, Portuguese, Italian, Russian; prompt_words_tr_id_nl_pl.h: Turkish, Indonesian, Dutch,
// Polish; prompt_words_ar_hi_vi.h: Arabic, Hindi, Vietnamese; prompt_words_uk_fa.h: Ukrainian,
// Persian), found by the FNV-1a hash the scanner computes as it reads a word, over its letters
// folded to lower case. prompt_cues_zh.h holds the Chinese, Japanese and Korean phrases,
// prompt_cues_th.h the Thai ones.
//
// Thread-safety: immutable data built at compile time.

#include <array>
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

// The feature a multi-word cue ending in a word tagged `tag` counts toward, given the tags of
// the two words before it ("step by step": kStep after kBy after kStep), or kNoCue.
uint8_t phrase_cue(Tag tag, Tag previous, Tag previous2);

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

// FNV-1a over a vocabulary word's code points (ASCII, two- and three-byte UTF-8 only, as the
// scanner reads them: vocabulary_letter_at), one step per letter: for ASCII the same as fnv1a.
constexpr uint32_t fnv1a_letters(std::string_view word) {
  uint32_t hash = kFnvOffset;
  for (size_t i = 0; i < word.size(); ++i) {
    uint32_t cp = static_cast<uint8_t>(word[i]);
    if (cp >= 0xe0 && i + 2 < word.size()) {
      cp = (cp & 0x0f) << 12 | (static_cast<uint8_t>(word[i + 1]) & 0x3f) << 6 |
           (static_cast<uint8_t>(word[i + 2]) & 0x3f);
      i += 2;
    } else if (cp >= 0x80 && i + 1 < word.size()) {
      cp = (cp & 0x1f) << 6 | (static_cast<uint8_t>(word[++i]) & 0x3f);
    }
    hash = (hash ^ cp) * kFnvPrime;
  }
  return hash;
}

// The key of a two-word entry ("chứng minh": Vietnamese writes a word as syllables with spaces
// between) from its words' fnv1a_letters: the scanner has both when the second word ends.
constexpr uint32_t pair_hash(uint32_t first, uint32_t second) {
  return (first ^ (second * 0x9e3779b1u)) * kFnvPrime;
}

// The key an entry is found by: fnv1a_letters of a word, pair_hash of a two-word entry.
constexpr uint32_t entry_hash(std::string_view word) {
  const size_t space = word.find(' ');
  if (space == std::string_view::npos) {
    return fnv1a_letters(word);
  }
  return pair_hash(fnv1a_letters(word.substr(0, space)), fnv1a_letters(word.substr(space + 1)));
}

// The entry for `word` (letters in any case, UTF-8; two words with one space between for a
// two-word entry) whose entry_hash over its folded letters (fold_letter, prompt_code_points.h)
// is `hash`, or nullptr when the word is not in the vocabulary.
const VocabularyEntry* find_word(uint32_t hash, std::string_view word);

// Whether a word whose fnv1a_letters is `hash` may be the first of a two-word entry: a bit per
// hash, so the scanner tests each word in one load and looks up a pair only after a word that
// may start one (false positives cost a lookup).
extern const std::array<uint64_t, 64> kPairFirstWords;
inline bool may_start_a_pair(uint32_t hash) {
  return (kPairFirstWords[(hash >> 6) & 63] >> (hash & 63) & 1) != 0;
}

// The vocabulary's entries, for tests: the English words and the other languages'.
std::span<const VocabularyEntry> english_words();
std::span<const std::span<const VocabularyEntry>> other_language_words();

}  // namespace tandem::routing::prompt_detail
