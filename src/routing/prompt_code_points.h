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

inline bool is_ascii_letter(unsigned char c) {
  return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}
inline bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}
inline bool is_blank(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\r';
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

// An Arabic letter or mark of two bytes, or a Devanagari or Latin Extended Additional letter of
// three, at text[i] whose lead byte is D8 or above; else 0 (vocabulary_letter_at's less common
// half, kept out of the scan's ASCII and Cyrillic loop).
inline uint32_t arabic_devanagari_vietnamese_letter_at(std::string_view text, size_t i) {
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
  const bool devanagari = cp >= 0x900 && cp <= 0x97f && cp != 0x964 && cp != 0x965;
  const bool latin_additional = cp >= 0x1e00 && cp <= 0x1eff;
  return devanagari || latin_additional ? cp : 0;
}

// The letter at text[i] when it is one the vocabulary's words may hold besides ASCII, else 0:
// - two bytes: a Latin-1, Latin Extended or Cyrillic letter (U+00C0..U+052F less x, division
//   sign and Greek, which classify() reads as maths), or an Arabic letter or mark
//   (U+0620..U+065F, U+066E..U+06D3, U+06D5: not its digits, punctuation or Quranic marks);
// - three bytes: a Devanagari letter or sign (U+0900..U+097F less the dandas, which end a
//   sentence), or a letter of Latin Extended Additional (U+1E00..U+1EFF, Vietnamese).
// What classify() calls a letter there. Its UTF-8 length is letter_bytes(cp). Inlined in the
// scan's word loop: the accented Latin and Cyrillic half costs what it did alone.
[[gnu::always_inline]] inline uint32_t vocabulary_letter_at(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0xc3 || i + 1 >= text.size()) {
    return 0;
  }
  if (lead > 0xd4) {
    return lead >= 0xd8 ? arabic_devanagari_vietnamese_letter_at(text, i) : 0;
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

// The UTF-8 length of a vocabulary letter (vocabulary_letter_at): below U+0800 two bytes.
constexpr size_t letter_bytes(uint32_t cp) {
  return cp < 0x800 ? 2 : 3;
}

// Whether a vocabulary letter is an Arabic vowel sign, shadda or sukun (U+064B..U+0652) or the
// tatweel (U+0640), which writers add to a word or leave out at will ("صمّم" and "صمم" are one
// word): the vocabulary's words are written without them and looked up so.
constexpr bool is_arabic_mark(uint32_t cp) {
  return cp - 0x64b <= 0x652 - 0x64b || cp == 0x640;
}

// `word` (at most 3 * kMaxWordLength bytes less its marks: the scan checks) without its Arabic
// marks (is_arabic_mark), copied into `out`; a view of `out`.
inline std::string_view without_arabic_marks(std::string_view word, std::span<char> out) {
  size_t n = 0;
  for (size_t i = 0; i < word.size();) {
    const uint32_t cp = vocabulary_letter_at(word, i);
    const size_t bytes = cp == 0 ? 1 : letter_bytes(cp);
    if (!is_arabic_mark(cp)) {
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
