#pragma once
// Internal to the cue scan (prompt_scanner.cpp): what each non-ASCII code point counts as, and
// the characters its run loop reads without the general decoder. Kept apart so the scan's file
// holds the scan.
//
// Thread-safety: pure functions.

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/ascii.h"
#include "common/utf8.h"

namespace tandem::routing::prompt_detail {

// ASCII letters to lower case; 0 for every other byte. One load both tests and folds.
inline constexpr std::array<uint8_t, 256> kLowerLetter = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 'a'; c <= 'z'; ++c) {
    table[c] = static_cast<uint8_t>(c);
    table[c - 'a' + 'A'] = static_cast<uint8_t>(c);
  }
  return table;
}();

using tandem::is_ascii_digit;
using tandem::is_ascii_letter;

inline bool is_blank(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// Whether a terminator before text[next] ends a sentence: the text ends, or a blank or a line
// break follows, after any closing quotes or brackets.
inline bool ends_sentence(std::string_view text, size_t next) {
  while (next < text.size() &&
         (text[next] == '"' || text[next] == '\'' || text[next] == ')' || text[next] == ']')) {
    ++next;
  }
  return next == text.size() || is_blank(static_cast<unsigned char>(text[next])) ||
         text[next] == '\n';
}

// Whether a line starting at text[i] opens with a multiple-choice option: "A." "B)" "c:" "(D)".
inline bool opens_choice_option(std::string_view text, size_t i) {
  auto at = [&](size_t k) -> unsigned char {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : '\0';
  };
  auto option_letter = [](unsigned char c) {
    return (c >= 'A' && c <= 'H') || (c >= 'a' && c <= 'h');
  };
  auto follows_option = [](unsigned char c) { return c == ' ' || c == '\t' || c == '\0'; };
  const bool lettered = option_letter(at(0)) && (at(1) == '.' || at(1) == ')' || at(1) == ':') &&
                        follows_option(at(2));
  const bool parenthesised = at(0) == '(' && option_letter(at(1)) && at(2) == ')';
  return lettered || parenthesised;
}

// What a non-ASCII code point counts as.
enum class CodePointKind : uint8_t { kLetter, kCjk, kMath, kTerminator, kQuestion, kSeparator };

// Inlined: its one caller is the scan's per-character path, where a call costs what the
// classification does.
[[gnu::always_inline]] inline CodePointKind classify(uint32_t cp) {
  if (cp - 0x4e00 <= 0x9fff - 0x4e00) {
    return CodePointKind::kCjk;  // the common ideographs, most of any Chinese text: one test
  }
  if (cp >= 0xc0 && cp < 0x2000 && cp != 0xd7 && cp != 0xf7 && (cp < 0x370 || cp > 0x3ff)) {
    // Latin, Cyrillic, Arabic, Devanagari...: before the chain, with the sentence marks of the
    // scripts in that range.
    if (!is_arabic_or_devanagari_mark(cp)) {
      return CodePointKind::kLetter;
    }
    switch (cp) {
      case 0x061f:  // Arabic question mark
        return CodePointKind::kQuestion;
      case 0x06d4:  // Arabic full stop, Devanagari danda and double danda
      case 0x0964:
      case 0x0965:
        return CodePointKind::kTerminator;
      case 0x060c:  // Arabic comma and semicolon
      case 0x061b:
        return CodePointKind::kSeparator;
      default:
        return CodePointKind::kLetter;
    }
  }
  if ((cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
      (cp >= 0xac00 && cp <= 0xd7af) || (cp >= 0xf900 && cp <= 0xfaff)) {
    return CodePointKind::kCjk;
  }
  if ((cp >= 0x2200 && cp <= 0x22ff) || cp == 0xd7 || cp == 0xf7 ||
      (cp >= 0x0370 && cp <= 0x03ff)) {
    return CodePointKind::kMath;  // operators, x, division sign, Greek letters
  }
  if (cp == 0x3002 || cp == 0xff01 || cp == 0xff0e) {
    return CodePointKind::kTerminator;
  }
  if (cp == 0xff1f) {
    return CodePointKind::kQuestion;
  }
  if (cp < 0xc0 || (cp >= 0x2000 && cp <= 0x2bff) || (cp >= 0x3000 && cp <= 0x303f) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff65) || cp == 0xfffd ||
      cp >= 0x1f000) {
    // Latin-1 and general punctuation, CJK punctuation, emoji, invalid bytes.
    return CodePointKind::kSeparator;
  }
  return CodePointKind::kLetter;  // accented Latin, Cyrillic, Arabic...: part of a word
}

// The lower-case form of a capital Latin (Latin-1 Supplement, Latin Extended-A, the
// Vietnamese letters of Latin Extended-B and Latin Extended Additional) or Cyrillic letter
// (Cyrillic Extended included); any other code point as it is. Each keeps its UTF-8 length, so
// a folded word is as long as the word: the vocabulary compares them in place. Ä, É, Ñ, Ł, Ž,
// Д, Ё, Ґ, Ơ, Ư, Ế, Ộ...
constexpr uint32_t fold_letter(uint32_t cp) {
  if (cp >= 0xc0 && cp <= 0xde && cp != 0xd7) {
    return cp + 0x20;
  }
  if (cp >= 0x100 && cp <= 0x17f) {
    if (cp == 0x178) {
      return 0xff;  // Ÿ
    }
    if (cp == 0x130 || cp == 0x138 || cp == 0x149 || cp == 0x17f) {
      return cp;  // İ (its lower case is ASCII), and letters without a case pair
    }
    // Capitals are even, but odd in Ĺ..ň and Ź..ž.
    const bool odd_capitals = (cp >= 0x139 && cp <= 0x148) || cp >= 0x179;
    return cp % 2 == (odd_capitals ? 1u : 0u) ? cp + 1 : cp;
  }
  if (cp == 0x1a0 || cp == 0x1af) {
    return cp + 1;  // Ơ, Ư
  }
  if (cp >= 0x410 && cp <= 0x42f) {
    return cp + 0x20;  // А..Я
  }
  if (cp >= 0x400 && cp <= 0x40f) {
    return cp + 0x50;  // Ѐ..Џ
  }
  if (cp >= 0x460 && cp <= 0x52f) {
    // Cyrillic Extended (Ukrainian Ґ, Kazakh, Tatar...): capitals even, but odd in Ӂ..Ӎ, and Ӏ
    // pairs with ӏ; the signs between Ҁ and Ҋ have no case.
    if (cp == 0x4c0) {
      return 0x4cf;
    }
    if (cp >= 0x482 && cp <= 0x489) {
      return cp;
    }
    const bool odd_capitals = cp >= 0x4c1 && cp <= 0x4ce;
    return cp % 2 == (odd_capitals ? 1u : 0u) && cp != 0x4cf ? cp + 1 : cp;
  }
  if (((cp >= 0x1e00 && cp <= 0x1e94) || (cp >= 0x1ea0 && cp <= 0x1eff)) && cp % 2 == 0) {
    return cp + 1;  // Ḁ..Ẕ, Ạ..Ỿ: capitals even (Vietnamese: Ấ, Ệ, Ữ...)
  }
  return cp;
}

// fold_letter of every two-byte code point (U+0080..U+07FF), for the scan's word loop: one load
// per accented Latin, Cyrillic or Arabic letter instead of fold_letter's chain of ranges.
inline constexpr std::array<uint16_t, 0x780> kFoldTwoByte = [] {
  std::array<uint16_t, 0x780> table{};
  for (uint32_t cp = 0x80; cp < 0x800; ++cp) {
    table[cp - 0x80] = static_cast<uint16_t>(fold_letter(cp));
  }
  return table;
}();

// fold_letter of a letter vocabulary_letter_at returned.
[[gnu::always_inline]] inline uint32_t fold_vocabulary_letter(uint32_t cp) {
  return cp < 0x800 ? kFoldTwoByte[cp - 0x80] : fold_letter(cp);
}

// A Hebrew or Arabic letter or mark of two bytes, or an Indic (Devanagari to Sinhala) or Latin
// Extended Additional letter of three, at text[i] whose lead byte is D6 or above; else 0
// (vocabulary_letter_at's less common half, tested after the ASCII and Cyrillic cases; inlined
// into the scan's loop, since a call per letter cost more than the code it kept out).
[[gnu::always_inline]] inline uint32_t other_script_letter_at(std::string_view text, size_t i) {
  // 32-bit locals: byte-sized ones led GCC to spill a byte and reload a word, a stalled
  // store-to-load forward on every letter.
  const uint32_t lead = static_cast<unsigned char>(text[i]);
  if (lead > 0xe1 || i + 1 >= text.size()) {
    return 0;
  }
  const uint32_t next = static_cast<unsigned char>(text[i + 1]);
  if ((next & 0xc0) != 0x80) {
    return 0;
  }
  if (lead <= 0xdb) {
    const uint32_t cp = (lead & 0x1f) << 6 | (next & 0x3f);
    if (lead <= 0xd7) {
      // Hebrew: its letters, and the points and accents written over and under them (not the
      // maqaf, paseq, sof pasuq and nun hafukha, which are punctuation).
      const bool mark =
          cp >= 0x591 && cp <= 0x5c7 && cp != 0x5be && cp != 0x5c0 && cp != 0x5c3 && cp != 0x5c6;
      const bool letter = (cp >= 0x5d0 && cp <= 0x5ea) || (cp >= 0x5ef && cp <= 0x5f2);
      return mark || letter ? cp : 0;
    }
    const bool letter = (cp >= 0x620 && cp <= 0x65f) || (cp >= 0x66e && cp <= 0x6d3) || cp == 0x6d5;
    return letter ? cp : 0;
  }
  if (lead < 0xe0 || i + 2 >= text.size()) {
    return 0;
  }
  const uint32_t third = static_cast<unsigned char>(text[i + 2]);
  if ((third & 0xc0) != 0x80) {
    return 0;
  }
  const uint32_t cp = (lead & 0x0f) << 12 | (next & 0x3f) << 6 | (third & 0x3f);
  // The Indic scripts, Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada,
  // Malayalam and Sinhala, less the dandas, which end a sentence in all of them.
  const bool indic = cp >= 0x900 && cp <= 0xdff && cp != 0x964 && cp != 0x965;
  const bool latin_additional = cp >= 0x1e00 && cp <= 0x1eff;
  return indic || latin_additional ? cp : 0;
}

// The letter at text[i] when it is one the vocabulary's words may hold besides ASCII, else 0:
// - two bytes: a Latin-1, Latin Extended or Cyrillic letter (U+00C0..U+052F less x, division
//   sign and Greek, which classify() reads as maths: greek_letter_at), a Hebrew letter or point
//   (U+05D0..U+05EA, U+05EF..U+05F2; U+0591..U+05C7 less its punctuation), or an Arabic letter
//   or mark (U+0620..U+065F, U+066E..U+06D3, U+06D5: not its digits, punctuation or Quranic
//   marks);
// - three bytes: a letter or sign of an Indic script (U+0900..U+0DFF, Devanagari to Sinhala,
//   less the dandas, which end a sentence), or a letter of Latin Extended Additional
//   (U+1E00..U+1EFF, Vietnamese).
// What classify() calls a letter there. Its UTF-8 length is letter_bytes(cp). Inlined in the
// scan's word loop: the accented Latin and Cyrillic half costs what it did alone.
[[gnu::always_inline]] inline uint32_t vocabulary_letter_at(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0xc3 || i + 1 >= text.size()) {
    return 0;
  }
  if (lead > 0xd4) {
    return lead >= 0xd6 ? other_script_letter_at(text, i) : 0;
  }
  const auto next = static_cast<unsigned char>(text[i + 1]);
  if ((next & 0xc0) != 0x80) {
    return 0;
  }
  const uint32_t cp = (uint32_t{lead} & 0x1f) << 6 | (next & 0x3f);
  if (cp == 0xd7 || cp == 0xf7 || (cp >= 0x370 && cp <= 0x3ff) || cp >= 0x530) {
    return 0;
  }
  return cp;
}

// A letter of modern Greek at text[i] (Α..Ω, α..ω with final ς, and the accented vowels), else 0.
// classify() reads each as a maths symbol, as α or π in a formula; the scan reads a run of two
// or more as a Greek word instead.
// Any `i` may be asked, at or past the end included.
inline uint32_t greek_letter_at(std::string_view text, size_t i) {
  if (i + 1 >= text.size()) {
    return 0;
  }
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead != 0xce && lead != 0xcf) {
    return 0;
  }
  const auto next = static_cast<unsigned char>(text[i + 1]);
  if ((next & 0xc0) != 0x80) {
    return 0;
  }
  const uint32_t cp = (uint32_t{lead} & 0x1f) << 6 | (next & 0x3f);
  const bool letter = cp == 0x386 || (cp >= 0x388 && cp <= 0x38a) || cp == 0x38c ||
                      (cp >= 0x38e && cp <= 0x3a1) || (cp >= 0x3a3 && cp <= 0x3ce);
  return letter ? cp : 0;
}

// A Greek letter (greek_letter_at) as the vocabulary lists it: lower case, without its accent
// (tonos, dialytika), final ς as σ. Greek is typed with and without accents alike, and a word's
// last letter is ς or σ by position only. Keeps the letter's two bytes.
constexpr uint32_t fold_greek(uint32_t cp) {
  switch (cp) {
    case 0x386:  // Ά ά
    case 0x3ac:
      return 0x3b1;
    case 0x388:  // Έ έ
    case 0x3ad:
      return 0x3b5;
    case 0x389:  // Ή ή
    case 0x3ae:
      return 0x3b7;
    case 0x38a:  // Ί ί Ϊ ϊ ΐ
    case 0x3af:
    case 0x3aa:
    case 0x3ca:
    case 0x390:
      return 0x3b9;
    case 0x38c:  // Ό ό
    case 0x3cc:
      return 0x3bf;
    case 0x38e:  // Ύ ύ Ϋ ϋ ΰ
    case 0x3cd:
    case 0x3ab:
    case 0x3cb:
    case 0x3b0:
      return 0x3c5;
    case 0x38f:  // Ώ ώ
    case 0x3ce:
      return 0x3c9;
    case 0x3c2:  // ς
      return 0x3c3;
    default:
      return cp >= 0x391 && cp <= 0x3a9 && cp != 0x3a2 ? cp + 0x20 : cp;  // Α..Ω
  }
}

// The UTF-8 length of a vocabulary letter (vocabulary_letter_at): below U+0800 two bytes.
constexpr size_t letter_bytes(uint32_t cp) {
  return cp < 0x800 ? 2 : 3;
}

// Whether a vocabulary letter is a mark writers add to a word or leave out at will: an Arabic
// vowel sign, shadda or sukun (U+064B..U+0652) or the tatweel (U+0640), a Hebrew point or accent
// (the U+0591..U+05C7 vocabulary_letter_at returns). "صمّم" and "صمم", "תַּרְגֵּם" and "תרגם" are
// one word: the vocabulary's words are written without them and looked up so. One test for
// the letters of every other script, which lie outside U+0591..U+0652.
constexpr bool is_word_mark(uint32_t cp) {
  if (cp - 0x591 > 0x652 - 0x591) {
    return false;
  }
  return cp <= 0x5c7 || cp - 0x64b <= 0x652 - 0x64b || cp == 0x640;
}

// `word` (at most 3 * kMaxWordLength bytes less its marks: the scan checks) without its marks
// (is_word_mark), copied into `out`; a view of `out`.
inline std::string_view without_word_marks(std::string_view word, std::span<char> out) {
  size_t n = 0;
  for (size_t i = 0; i < word.size();) {
    const uint32_t cp = vocabulary_letter_at(word, i);
    const size_t bytes = cp == 0 ? 1 : letter_bytes(cp);
    if (!is_word_mark(cp)) {
      for (size_t b = 0; b < bytes && n < out.size(); ++b) {
        out[n++] = word[i + b];
      }
    }
    i += bytes;
  }
  return {out.data(), n};
}

// A character the scan's run loop takes without the general decoder, else 0: a common
// ideograph or kana, nearly all of Chinese and Japanese text (classify() calls both kCjk).
inline uint32_t run_cjk_at(std::string_view text, size_t i) {
  const uint32_t cp = common_ideograph_at(text, i);
  return cp != 0 ? cp : kana_at(text, i);
}

}  // namespace tandem::routing::prompt_detail
