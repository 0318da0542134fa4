#pragma once
// Internal to the cue scan (prompt_scanner.cpp): what each non-ASCII code point counts as, and
// the characters its run loop reads without the general decoder. Kept apart so the scan's file
// holds the scan.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <string_view>

#include "common/utf8.h"

namespace tandem::routing::prompt_detail {

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

// The lower-case form of a capital Latin (Latin-1 Supplement, Latin Extended-A) or Cyrillic
// letter; any other code point as it is. Each keeps its UTF-8 length (two bytes), so a folded
// word is as long as the word: the vocabulary compares them in place. Ä, É, Ñ, Ł, Ž, Д, Ё...
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
  if (cp >= 0x410 && cp <= 0x42f) {
    return cp + 0x20;  // А..Я
  }
  if (cp >= 0x400 && cp <= 0x40f) {
    return cp + 0x50;  // Ѐ..Џ
  }
  return cp;
}

// The letter at text[i] when it is one the vocabulary's words may hold besides ASCII: a
// two-byte Latin-1, Latin Extended or Cyrillic letter (U+00C0..U+052F less x, division sign
// and Greek, which classify() reads as maths), else 0. What classify() calls a letter there.
inline uint32_t vocabulary_letter_at(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0xc3 || lead > 0xd4 || i + 1 >= text.size()) {
    return 0;
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

// A character the scan's run loop takes without the general decoder, else 0: a common
// ideograph or kana, nearly all of Chinese and Japanese text (classify() calls both kCjk).
inline uint32_t run_cjk_at(std::string_view text, size_t i) {
  const uint32_t cp = common_ideograph_at(text, i);
  return cp != 0 ? cp : kana_at(text, i);
}

}  // namespace tandem::routing::prompt_detail
