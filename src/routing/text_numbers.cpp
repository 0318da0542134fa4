#include "routing/text_numbers.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace tandem::routing::text_numbers {
namespace {

// A multiplier after digits: "5k", "1.5万", "3千".
double suffix_multiplier(std::string_view text, size_t& at) {
  if (at < text.size() && (text[at] == 'k' || text[at] == 'K') &&
      (at + 1 >= text.size() || !(is_ascii_letter(static_cast<unsigned char>(text[at + 1])) ||
                                  static_cast<unsigned char>(text[at + 1]) >= 0x80))) {
    ++at;
    return 1000;
  }
  const int multiplier = zh_multiplier(text, at);
  if (multiplier >= 100) {
    at += 3;
    return multiplier;
  }
  return 1;
}

// The values of kNumberWords, in its order.
constexpr std::array<double, kNumberWords.size()> kNumberValues = {
    1,  2,  3,  4,  5,  6,  7,  8,   9,    10, 11, 12, 15, 20,
    30, 40, 50, 60, 70, 80, 90, 100, 1000, 0,  2,  3,  3,  12};  // "a" counts only as "a hundred"

// The index in kNumberWords of the word text[at, at + length), any case; -1 when none.
int number_word_index(std::string_view text, size_t at, size_t length) {
  if (!could_be_number_word(text, at, length)) {
    return -1;
  }
  for (size_t w = 0; w < kNumberWords.size(); ++w) {
    const std::string_view word = kNumberWords[w];
    if (word.size() != length) {
      continue;
    }
    size_t c = 0;
    while (c < length && lower_ascii(text[at + c]) == word[c]) {
      ++c;
    }
    if (c == length) {
      return static_cast<int>(w);
    }
  }
  return -1;
}

}  // namespace

// Chinese numerals from `at`: "两万", "三千五" (3,500), "一万五" (15,000), "十二". Every
// numeral character is three bytes.
Number zh_number(std::string_view text, size_t at) {
  double total = 0;
  double section = 0;
  int digit = -1;
  int last_multiplier = 1;
  size_t i = at;
  for (; i < text.size(); i += 3) {
    const int d = zh_digit(text, i);
    if (d >= 0) {
      digit = d;
      continue;
    }
    const int multiplier = zh_multiplier(text, i);
    if (multiplier == 0) {
      break;
    }
    const double lead = digit >= 0 ? digit : 1;
    if (multiplier == 10000) {
      total += (section + (digit >= 0 ? digit : 0) + (section == 0 && digit < 0 ? 1 : 0)) * 10000;
      section = 0;
    } else {
      section += lead * multiplier;
    }
    digit = -1;
    last_multiplier = multiplier;
  }
  // A digit after a multiplier counts one place below it: "三千五" is 3,500.
  const double tail =
      digit < 0 ? 0 : (last_multiplier > 1 ? digit * last_multiplier / 10.0 : digit);
  return {total + section + tail, i};
}

// Digits from `at`, with thousands grouped by ',' '.' or a space ("15,000", "1.500") or a
// decimal point ("1.5k").
Number digit_number(std::string_view text, size_t at) {
  double value = 0;
  size_t i = at;
  auto digits_from = [&](size_t from) {
    size_t k = from;
    while (k < text.size() && is_ascii_digit(static_cast<unsigned char>(text[k]))) {
      ++k;
    }
    return k - from;
  };
  for (;;) {
    const size_t run = digits_from(i);
    for (size_t k = 0; k < run; ++k) {
      value = std::min(value * 10 + (text[i + k] - '0'), kLargestNumber * 10);
    }
    i += run;
    const bool separator =
        i + 1 < text.size() && (text[i] == ',' || text[i] == '.' || text[i] == ' ');
    if (separator && digits_from(i + 1) == 3) {
      ++i;  // a thousands separator: three digits follow
      continue;
    }
    if (i + 1 < text.size() && text[i] == '.' && digits_from(i + 1) > 0) {
      double scale = 0.1;
      for (++i; i < text.size() && is_ascii_digit(static_cast<unsigned char>(text[i])); ++i) {
        value += (text[i] - '0') * scale;
        scale /= 10;
      }
    }
    break;
  }
  value *= suffix_multiplier(text, i);
  return {value, i};
}

// Whether an ASCII letter can start an English number word (a, c, d, e, f, h, n, o, s, t): the
// other words of a request are passed over at one test.

// English number words from `at` (a word start): "two thousand", "twenty-five", "a hundred".
Number english_number(std::string_view text, size_t at) {
  double total = 0;
  double current = 0;
  bool any = false;
  size_t i = at;
  size_t end = at;
  while (i < text.size()) {
    size_t k = i;
    while (k < text.size() && is_ascii_letter(static_cast<unsigned char>(text[k]))) {
      ++k;
    }
    if (k == i) {
      break;
    }
    const int index = number_word_index(text, i, k - i);
    if (index < 0) {
      break;
    }
    const std::string_view word = kNumberWords[static_cast<size_t>(index)];
    const double value = kNumberValues[static_cast<size_t>(index)];
    if (value == 100 || value == 12) {
      current = std::max(current, 1.0) * value;
    } else if (value == 1000) {
      total += std::max(current, 1.0) * 1000;
      current = 0;
    } else {
      current += value;
    }
    any = any || word != "a";
    end = k;
    i = k;
    if (i < text.size() && (text[i] == ' ' || text[i] == '-')) {
      ++i;
    }
  }
  if (!any) {
    return {0, at};
  }
  return {total + current, end};
}

}  // namespace tandem::routing::text_numbers
