#pragma once
// UTF-8 one character at a time: decoding, for the scanners that read prompts byte by byte
// (prompt features, the task model's n-grams), where invalid bytes decode as U+FFFD one at a
// time, so any input stays linear and nothing throws; checking a sequence is well-formed, and
// encoding, for the JSON reader and writer.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tandem {

inline constexpr uint32_t kReplacementCharacter = 0xfffd;

// The code point of a three-byte sequence whose continuation bytes are already checked.
inline uint32_t three_byte_code_point(unsigned char lead, unsigned char second,
                                      unsigned char third) {
  return (uint32_t{lead & 0x0fu} << 12) | (uint32_t{second & 0x3fu} << 6) | (third & 0x3fu);
}

// The nearest character boundary at or before `cut` (cut < text.size()), and at or after it:
// where to cut a text into windows without splitting a character.
inline size_t back_to_boundary(std::string_view text, size_t cut) {
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) {
    --cut;
  }
  return cut;
}
inline size_t forward_to_boundary(std::string_view text, size_t cut) {
  while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) {
    ++cut;
  }
  return cut;
}

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
      cp = three_byte_code_point(lead, second, third);
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

// The common CJK ideograph (U+4E00 to U+9FFF, three bytes) at text[i], or 0 when another
// character (or an invalid byte) is there: the bulk of Chinese text, recognised in a few
// instructions so that scanners can read it in runs. Decodes as decode_utf8 does.
inline uint32_t common_ideograph_at(std::string_view text, size_t i) {
  if (i + 2 >= text.size()) {
    return 0;
  }
  const auto lead = static_cast<unsigned char>(text[i]);
  const auto second = static_cast<unsigned char>(text[i + 1]);
  const auto third = static_cast<unsigned char>(text[i + 2]);
  if (lead - 0xe4u > 0xe9u - 0xe4u || (second & 0xc0) != 0x80 || (third & 0xc0) != 0x80) {
    return 0;
  }
  const uint32_t cp = three_byte_code_point(lead, second, third);
  return cp >= 0x4e00 ? cp : 0;
}

// The kana character (U+3040 to U+30FF: hiragana and katakana, E3 81..83 xx) at text[i], or 0:
// with the common ideographs, nearly all of Japanese text. Decodes as decode_utf8 does.
inline uint32_t kana_at(std::string_view text, size_t i) {
  if (i + 2 >= text.size() || static_cast<unsigned char>(text[i]) != 0xe3) {
    return 0;
  }
  const auto second = static_cast<unsigned char>(text[i + 1]);
  const auto third = static_cast<unsigned char>(text[i + 2]);
  if (second - 0x81u > 0x83u - 0x81u || (third & 0xc0) != 0x80) {
    return 0;
  }
  return three_byte_code_point(0xe3, second, third);
}

// The Arabic comma, semicolon, question mark and full stop and the Devanagari danda and double
// danda (U+060C, U+061B, U+061F, U+06D4, U+0964, U+0965): punctuation inside the letter blocks
// that text scanners take in one range test. A bit per code point of U+0600..U+097F.
inline bool is_arabic_or_devanagari_mark(uint32_t cp) {
  static constexpr uint64_t kMarks[14] = {
      (uint64_t{1} << 0x0c) | (uint64_t{1} << 0x1b) | (uint64_t{1} << 0x1f),  // U+0600..
      0,
      0,
      uint64_t{1} << 0x14,  // U+06C0..: U+06D4
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      (uint64_t{1} << 0x24) | (uint64_t{1} << 0x25),  // U+0940..: U+0964, U+0965
  };
  const uint32_t offset = cp - 0x0600;
  return offset < 14 * 64 && ((kMarks[offset >> 6] >> (offset & 63)) & 1) != 0;
}

// Appends the character `cp` (at most U+10FFFF) as UTF-8.
inline void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The length of the well-formed UTF-8 sequence at text[at] (RFC 3629's table: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0.
inline size_t utf8_sequence(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) -> unsigned {
    return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0x100;
  };
  const auto in = [](unsigned b, unsigned lo, unsigned hi) { return b >= lo && b <= hi; };
  const unsigned b0 = byte(0);
  if (in(b0, 0xC2, 0xDF)) {
    return in(byte(1), 0x80, 0xBF) ? 2 : 0;
  }
  if (in(b0, 0xE0, 0xEF)) {
    const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned hi = b0 == 0xED ? 0x9F : 0xBF;
    return in(byte(1), lo, hi) && in(byte(2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in(b0, 0xF0, 0xF4)) {
    const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return in(byte(1), lo, hi) && in(byte(2), 0x80, 0xBF) && in(byte(3), 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

}  // namespace tandem
