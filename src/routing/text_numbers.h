#pragma once
// Numbers as prompts write them, read at a position of the text: digits with thousands
// separators, a decimal point and a multiplier ("15,000", "1.500", "1.5k", "3千", "1.5万"),
// English number words ("two thousand", "twenty-five", "a hundred") and Chinese numerals
// ("两万", "三千五" = 3,500, "一万五" = 15,000). requested_length.cpp reads answer sizes with
// them.
//
// Thread-safety: pure functions. Any bytes are accepted; nothing throws; values stay finite.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/ascii.h"
#include "common/utf8.h"

namespace tandem::routing::text_numbers {

// A number's value and where it ends; `end` equal to where reading began means no number.
struct Number {
  double value = 0;
  size_t end = 0;
};

// Values are capped here: a longer run of digits is an ID, not a quantity.
inline constexpr double kLargestNumber = 1e7;

// The code point of the three-byte character at `at`, or 0: every Chinese numeral is one, and
// this is read at every non-ASCII byte of a request (decode_utf8's three-byte path, inlined).
inline char32_t cjk_code_point(std::string_view text, size_t at) {
  uint32_t cp = 0;
  return at < text.size() && decode_utf8(text, at, cp) == 3 ? cp : 0;
}

// The value of the Chinese digit at `at` (零 〇 一 … 九, 两, 几 = "several" = 3), or -1.
inline int zh_digit(std::string_view text, size_t at) {
  switch (cjk_code_point(text, at)) {
    case U'零':
    case U'〇':
      return 0;
    case U'一':
      return 1;
    case U'二':
    case U'两':
    case U'兩':
      return 2;
    case U'三':
    case U'几':  // "几千字": several thousand
      return 3;
    case U'四':
      return 4;
    case U'五':
      return 5;
    case U'六':
      return 6;
    case U'七':
      return 7;
    case U'八':
      return 8;
    case U'九':
      return 9;
    default:
      return -1;
  }
}

// 10, 100, 1,000 or 10,000 for 十 百 千 万/萬 at `at`, else 0.
inline int zh_multiplier(std::string_view text, size_t at) {
  switch (cjk_code_point(text, at)) {
    case U'十':
      return 10;
    case U'百':
      return 100;
    case U'千':
      return 1000;
    case U'万':
    case U'萬':
      return 10000;
    default:
      return 0;
  }
}

// Whether Chinese numerals start at `at`: a digit or 十. Inline: it is asked at every Chinese
// character of a request.
inline bool starts_zh_number(std::string_view text, size_t at) {
  return zh_digit(text, at) >= 0 || zh_multiplier(text, at) == 10;
}

// Chinese numerals from `at` (a digit or 十).
Number zh_number(std::string_view text, size_t at);

// Digits from `at`, with a multiplier after them ("5k", "3千").
Number digit_number(std::string_view text, size_t at);

// The (length, first letter) pairs of English number words ("one" … "thousand", "a", "few",
// "dozen"): a word of another shape is not one, and most words of a request are rejected at
// one load ("the" and "for" pass, "about" and "write" do not).
inline constexpr std::array<std::string_view, 28> kNumberWords = {
    "one",     "two",      "three", "four",   "five",    "six",     "seven",
    "eight",   "nine",     "ten",   "eleven", "twelve",  "fifteen", "twenty",
    "thirty",  "forty",    "fifty", "sixty",  "seventy", "eighty",  "ninety",
    "hundred", "thousand", "a",     "couple", "few",     "several", "dozen"};
inline constexpr size_t kLongestNumberWord = 8;
// By length and first letter, the last letters a number word of that shape ends in, one bit
// each: "the" and "for" are rejected as "about" and "write" are.
inline constexpr auto kNumberWordShapes = [] {
  std::array<std::array<uint32_t, 26>, kLongestNumberWord + 1> shapes{};
  for (std::string_view word : kNumberWords) {
    shapes[word.size()][static_cast<size_t>(word[0] - 'a')] |= 1u << (word.back() - 'a');
  }
  return shapes;
}();

// Whether the ASCII word text[at, at + length) (length >= 1) may be an English number word.
inline bool could_be_number_word(std::string_view text, size_t at, size_t length) {
  const unsigned first = static_cast<unsigned char>(text[at]) | 0x20u;
  const unsigned last = static_cast<unsigned char>(text[at + length - 1]) | 0x20u;
  return length <= kLongestNumberWord && first >= 'a' && first <= 'z' && last >= 'a' &&
         last <= 'z' && ((kNumberWordShapes[length][first - 'a'] >> (last - 'a')) & 1u);
}

// English number words from `at` (a word start); no number when the words are not one.
Number english_number(std::string_view text, size_t at);

}  // namespace tandem::routing::text_numbers
