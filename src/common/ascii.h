#pragma once
// ASCII letters and digits, byte by byte, for the scanners that read prompts (the cue scan, the
// answer size a request names): one definition of each test, inlined where the loops are.
//
// Thread-safety: pure functions.

namespace tandem {

inline bool is_ascii_letter(unsigned char c) {
  return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}
inline bool is_ascii_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}
inline bool is_ascii_alnum(unsigned char c) {
  return is_ascii_digit(c) || is_ascii_letter(c);
}
// A to Z lowered; every other byte, UTF-8 included, as it is.
inline char lower_ascii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace tandem
