#pragma once
// Decoding one UTF-8 character, for the scanners that read prompts byte by byte (prompt
// features, the task model's n-grams). Invalid bytes decode as U+FFFD one at a time, so any
// input stays linear and nothing throws.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tandem {

inline constexpr uint32_t kReplacementCharacter = 0xfffd;

// Decodes the character at text[i] (i < text.size()) into `cp`; returns its length in bytes.
inline size_t decode_utf8(std::string_view text, size_t i, uint32_t& cp) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) {
    cp = lead;
    return 1;
  }
  // Three bytes first: Chinese, Japanese and Korean text is almost all three-byte characters,
  // and this path, free of the loop below, decodes them in a handful of instructions.
  if ((lead & 0xf0) == 0xe0 && i + 2 < text.size()) {
    const auto second = static_cast<unsigned char>(text[i + 1]);
    const auto third = static_cast<unsigned char>(text[i + 2]);
    if ((second & 0xc0) == 0x80 && (third & 0xc0) == 0x80) {
      cp = (uint32_t{lead & 0x0fu} << 12) | (uint32_t{second & 0x3fu} << 6) | (third & 0x3fu);
      return 3;
    }
  }
  size_t length = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    cp = lead & 0x1fu;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    cp = lead & 0x0fu;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    cp = lead & 0x07u;
  } else {
    cp = kReplacementCharacter;
    return 1;
  }
  if (i + length > text.size()) {
    cp = kReplacementCharacter;
    return 1;
  }
  for (size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xc0) != 0x80) {
      cp = kReplacementCharacter;
      return 1;
    }
    cp = (cp << 6) | (next & 0x3fu);
  }
  return length;
}

}  // namespace tandem
