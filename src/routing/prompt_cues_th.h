#pragma once
// The Thai half of the prompt features' task cues. Thai writes no spaces between the words of a
// clause, so, as for Chinese, cues are phrases matched inside runs of Thai letters rather than
// words looked up whole; a phrase may be up to fifteen letters long (Thai spells a word with
// consonants, vowel signs and tone marks, each a code point: พิสูจน์, "prove", is seven). Each
// phrase counts toward the same feature as its English counterpart, so one set of weights serves
// every language. Written from the seeds' decision framework, not fitted to any data; since a
// phrase is found inside any run, each is long enough not to occur inside unrelated words
// ("แปลเป็น", "translate into", not "แปล", which is in "แปลก", "strange"). At each letter the
// longest phrase that starts there is taken, so a phrase that holds a cue of another task is
// listed whole: "การพิสูจน์อักษร", proofreading, is easy, though "การพิสูจน์", proving, is hard.
//
// Thread-safety: immutable data built at compile time; pure functions.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace tandem::routing::prompt_detail {

struct ThaiCue {
  std::string_view phrase;  // UTF-8, 2 to kMaxThaiCueChars Thai letters (U+0E01..U+0E4E)
  uint8_t cue;              // a Feature (prompt_feature_ids.h)
};

inline constexpr size_t kMaxThaiCueChars = 15;  // the bits of a 16-bit length mask, less 0

// Whether `cp` is a Thai letter, vowel sign or tone mark: what a run of Thai letters holds.
constexpr bool is_thai_letter(uint32_t cp) {
  return cp - 0x0e01 <= 0x0e4e - 0x0e01;
}

// A Thai letter's offset in the Thai block (U+0E00..U+0E7F) from its UTF-8 bytes at text[i]
// (E0 B8 80..E0 B9 BF; the caller has checked them).
constexpr uint32_t thai_offset(std::string_view text, size_t i) {
  return (static_cast<uint8_t>(text[i + 1]) & 1u) << 6 |
         (static_cast<uint8_t>(text[i + 2]) & 0x3fu);
}

// Whether text[i] starts a Thai letter (is_thai_letter), three UTF-8 bytes E0 B8 81..E0 B9 8E.
inline bool thai_letter_at(std::string_view text, size_t i) {
  if (i + 2 >= text.size() || static_cast<unsigned char>(text[i]) != 0xe0) {
    return false;
  }
  const uint32_t second = static_cast<unsigned char>(text[i + 1]);
  const uint32_t third = static_cast<unsigned char>(text[i + 2]);
  if ((second != 0xb8 && second != 0xb9) || (third & 0xc0) != 0x80) {
    return false;
  }
  return is_thai_letter(0x0e00 + thai_offset(text, i));
}

// The features of the cue phrases in `run` (Thai letters only, three UTF-8 bytes each), written
// to `out` in order; returns how many (at most out.size()). At each letter the longest phrase
// that starts there is taken, and phrases do not overlap.
size_t find_thai_cues(std::string_view run, std::span<uint8_t> out);

// The phrases, for tests.
std::span<const ThaiCue> thai_cues();

}  // namespace tandem::routing::prompt_detail
