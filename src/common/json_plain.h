#pragma once
// Plain bytes of a JSON string: printable ASCII (DEL included) but '"' and '\\', which a writer
// copies into a string literal as they are and a reader copies out of one. Every prompt, key
// and value the gateway reads or writes passes these loops, so runs are found eight bytes at a
// time: about a dozen operations per word, where a byte at a time takes four per byte.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tandem {

constexpr bool json_plain_byte(unsigned char c) {
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

namespace json_plain_detail {

inline constexpr uint64_t kOnes = 0x0101010101010101;
inline constexpr uint64_t kHighs = 0x8080808080808080;

// Whether any byte of `word` is below `n` (n <= 0x80). Exact: a borrow runs up only from a
// byte that is below n, so a flag never appears in a word without one.
inline bool any_byte_below(uint64_t word, uint64_t n) {
  return ((word - n * kOnes) & ~word & kHighs) != 0;
}

inline bool any_byte_equal(uint64_t word, unsigned char c) {
  return any_byte_below(word ^ (c * kOnes), 1);
}

inline bool plain_word(uint64_t word) {
  return (word & kHighs) == 0 && !any_byte_below(word, 0x20) && !any_byte_equal(word, '"') &&
         !any_byte_equal(word, '\\');
}

}  // namespace json_plain_detail

// The index of the first byte at or after `from` that is not plain; text.size() if none is.
inline size_t json_plain_run_end(std::string_view text, size_t from) {
  size_t i = from;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, text.data() + i, sizeof(word));
    if (!json_plain_detail::plain_word(word)) {
      break;  // the byte-wise loop below finds which one
    }
  }
  while (i < text.size() && json_plain_byte(static_cast<unsigned char>(text[i]))) {
    ++i;
  }
  return i;
}

}  // namespace tandem
