// The task cues of languages other than English and Chinese: Spanish, French, German,
// Portuguese, Italian and Russian words (prompt_words_intl.h), Turkish, Indonesian, Dutch and
// Polish (prompt_words_tr_id_nl_pl.h), Arabic, Hindi and Vietnamese
// (prompt_words_ar_hi_vi.h), Japanese and Korean phrases (prompt_cues_ja_ko.cpp). Each counts
// toward the feature its English counterpart does, in any letter case, and only as a whole word.

#include <cmath>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "common/utf8.h"
#include "prompt_feature_reading.h"
#include "routing/prompt_code_points.h"
#include "routing/prompt_cues_zh.h"
#include "routing/prompt_features.h"
#include "routing/prompt_vocabulary.h"

namespace tandem::routing {
namespace {

using prompt_detail::fold_letter;

using prompt_test::feature;
using prompt_test::log_count;
using prompt_test::of;

// The upper-case form of a folded word: ASCII, Latin-1, Latin Extended-A, Vietnamese, Greek
// and Cyrillic letters (Hebrew, Arabic, Devanagari and Bengali have no case).
std::string upper(std::string_view word) {
  std::string out;
  for (size_t i = 0; i < word.size();) {
    uint32_t cp = 0;
    i += decode_utf8(word, i, cp);
    if (cp >= 'a' && cp <= 'z') {
      cp -= 0x20;
    } else if (cp >= 0xe0 && cp <= 0xfe && cp != 0xf7) {
      cp -= 0x20;
    } else if (cp >= 0x430 && cp <= 0x44f) {
      cp -= 0x20;
    } else if (cp >= 0x450 && cp <= 0x45f) {
      cp -= 0x50;
    } else if (cp >= 0x3b1 && cp <= 0x3c9 && cp != 0x3c2) {
      cp -= 0x20;  // α..ω: Greek entries have no final ς (fold_greek)
    } else if (cp >= 0x100 && cp <= 0x17f && fold_letter(cp - 1) == cp) {
      cp -= 1;
    } else if ((cp == 0x1a1 || cp == 0x1b0 || cp >= 0x1e00) && fold_letter(cp - 1) == cp) {
      cp -= 1;  // ơ, ư and Vietnamese letters with two marks
    }
    append_utf8(out, cp);
  }
  return out;
}

// A folded Greek word as it is typed: its last σ is ς (fold_greek reads both alike). Any other
// word as it is.
std::string as_typed(std::string word) {
  constexpr std::string_view kSigma = "\u03c3";
  if (word.ends_with(kSigma)) {
    word.replace(word.size() - kSigma.size(), kSigma.size(), "\u03c2");
  }
  return word;
}

TEST(PromptCuesIntl, FoldingKeepsTheLengthAndPairsCases) {
  EXPECT_EQ(fold_letter(0xc9), 0xe9u);    // É é
  EXPECT_EQ(fold_letter(0xdc), 0xfcu);    // Ü ü
  EXPECT_EQ(fold_letter(0xdf), 0xdfu);    // ß has no capital here
  EXPECT_EQ(fold_letter(0xd7), 0xd7u);    // the multiplication sign is not a letter
  EXPECT_EQ(fold_letter(0x141), 0x142u);  // Ł ł: an odd capital
  EXPECT_EQ(fold_letter(0x15a), 0x15bu);  // Ś ś: an even capital
  EXPECT_EQ(fold_letter(0x17d), 0x17eu);  // Ž ž
  EXPECT_EQ(fold_letter(0x178), 0xffu);   // Ÿ ÿ
  EXPECT_EQ(fold_letter(0x131), 0x131u);  // ı stays
  EXPECT_EQ(fold_letter(0x414), 0x434u);  // Д д
  EXPECT_EQ(fold_letter(0x401), 0x451u);  // Ё ё
  EXPECT_EQ(fold_letter(0x434), 0x434u);
  EXPECT_EQ(fold_letter(0x4e00), 0x4e00u);
  for (uint32_t cp = 0x80; cp < 0x800; ++cp) {
    EXPECT_GE(fold_letter(cp), 0x80u) << cp;  // two UTF-8 bytes stay two
    EXPECT_LT(fold_letter(cp), 0x800u) << cp;
  }
}

TEST(PromptCuesIntl, EveryWordIsFoldedAndFoundInAnyCase) {
  std::set<std::string_view> english;
  for (const auto& entry : prompt_detail::english_words()) {
    english.insert(entry.word);
  }
  for (const auto words : prompt_detail::other_language_words()) {
    for (const auto& entry : words) {
      const std::string word(entry.word);
      EXPECT_EQ(english.count(entry.word), 0u) << word << " is an English entry too";
      for (size_t i = 0; i < word.size();) {
        uint32_t cp = 0;
        i += decode_utf8(word, i, cp);
        EXPECT_EQ(fold_letter(cp), cp) << word << " is not folded";
        EXPECT_EQ(prompt_detail::fold_greek(cp), cp) << word << " is not folded";
        EXPECT_TRUE((cp >= 'a' && cp <= 'z') || cp == ' ' || (cp >= 0xc0 && cp < 0x370) ||
                    (cp >= 0x3b1 && cp <= 0x3c9) || (cp >= 0x400 && cp < 0x530) ||
                    (cp >= 0x591 && cp <= 0x5f2) || (cp >= 0x620 && cp <= 0x6d5) ||
                    (cp >= 0x900 && cp <= 0xdff) || (cp >= 0x1e00 && cp <= 0x1eff))
            << word;
      }
      ASSERT_NE(entry.cue, prompt_detail::kNoCue) << word;
      const std::string_view name = feature_names()[entry.cue];
      for (const std::string& text : {word, upper(word), "« " + word + " »", as_typed(word)}) {
        EXPECT_EQ(feature(of(text), name), log_count(1)) << text;
      }
    }
  }
}

TEST(PromptCuesIntl, WordsCountTowardTheEnglishFeatures) {
  // "Prove that there are infinitely many primes and explain each step" (Spanish).
  const auto es = of("Demuestra que hay infinitos números primos y explica cada paso.");
  EXPECT_EQ(feature(es, "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(es, "reasoning_cues"), log_count(1));
  EXPECT_EQ(feature(es, "math_terms"), log_count(1));
  // Capitals fold: Ü, É, Д.
  EXPECT_EQ(feature(of("Übersetze: Guten Morgen."), "easy_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("ÉCRIS une histoire."), "creative_cues"), log_count(2));
  EXPECT_EQ(feature(of("ДОКАЖИ теорему Ферма для n = 3."), "hard_task_cues"), log_count(1));
  // A word that merely starts like a cue is not one.
  EXPECT_EQ(feature(of("Demuestras y demuestrame"), "hard_task_cues"), 0);
  EXPECT_EQ(feature(of("Demues-tra"), "hard_task_cues"), 0);
  // After a colon the words are material, as in English: the request is to translate.
  const auto fr = of("Traduis en anglais : « Démontre que la suite converge. »");
  EXPECT_EQ(feature(fr, "easy_task_cues"), log_count(1));
  EXPECT_EQ(feature(fr, "hard_task_cues"), 0);
}

TEST(PromptCuesIntl, JapaneseAndKoreanPhrasesCountTowardTheEnglishFeatures) {
  // "Prove there are infinitely many primes, explaining why" (Japanese).
  const auto ja = of("素数が無限に存在することを証明し、なぜ成り立つか説明してください。");
  EXPECT_EQ(feature(ja, "hard_task_cues"), log_count(1));  // 証明
  EXPECT_EQ(feature(ja, "reasoning_cues"), log_count(2));  // なぜ 説明
  EXPECT_EQ(feature(of("この文を英語に翻訳して。"), "easy_task_cues"), log_count(1));
  // Korean: the phrase ends where the ending starts (증명하고, 번역해).
  EXPECT_EQ(feature(of("소수가 무한히 많음을 증명하고 설명해 주세요."), "hard_task_cues"),
            log_count(1));
  EXPECT_EQ(feature(of("이 문장을 영어로 번역해 주세요."), "easy_task_cues"), log_count(1));
  // Simplified Chinese reads as before: 证明 is the Chinese cue, 証明 the Japanese one.
  EXPECT_EQ(feature(of("请证明"), "hard_task_cues"), log_count(1));
}

TEST(PromptCuesIntl, EveryCjkPhraseIsShortUniqueAndNamesAFeature) {
  std::set<std::string_view> phrases;
  for (const auto cues : {zh_cues(), ja_ko_cues()}) {
    for (const auto& cue : cues) {
      EXPECT_LT(feature_index(cue.feature), kFeatureCount) << cue.phrase;
      EXPECT_FALSE(cue.phrase.empty());
      EXPECT_LE(cue.phrase.size(), 3 * kMaxZhCueChars) << cue.phrase;
      EXPECT_TRUE(phrases.insert(cue.phrase).second) << "duplicate " << cue.phrase;
    }
  }
  for (const auto& cue : ja_ko_cues()) {
    EXPECT_EQ(feature(of(cue.phrase), cue.feature), log_count(1)) << cue.phrase;
  }
}

}  // namespace
}  // namespace tandem::routing
