#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "routing/privacy_detectors.h"

namespace tandem::routing::privacy_detail {

// ---------------------------------------------------------------------------------------------
// IBAN: country, 2 check digits, BBAN; mod 97 = 1; the length the country uses

namespace {

struct IbanCountry {
  char code[3];
  size_t length;
};

// The SWIFT IBAN registry.
constexpr IbanCountry kIbanCountries[] = {
    {"AD", 24}, {"AE", 23}, {"AL", 28}, {"AT", 20}, {"AZ", 28}, {"BA", 20}, {"BE", 16}, {"BG", 22},
    {"BH", 22}, {"BI", 27}, {"BR", 29}, {"BY", 28}, {"CH", 21}, {"CR", 22}, {"CY", 28}, {"CZ", 24},
    {"DE", 22}, {"DJ", 27}, {"DK", 18}, {"DO", 28}, {"EE", 20}, {"EG", 29}, {"ES", 24}, {"FI", 18},
    {"FK", 18}, {"FO", 18}, {"FR", 27}, {"GB", 22}, {"GE", 22}, {"GI", 23}, {"GL", 18}, {"GR", 27},
    {"GT", 28}, {"HR", 21}, {"HU", 28}, {"IE", 22}, {"IL", 23}, {"IQ", 23}, {"IS", 26}, {"IT", 27},
    {"JO", 30}, {"KW", 30}, {"KZ", 20}, {"LB", 28}, {"LC", 32}, {"LI", 21}, {"LT", 20}, {"LU", 20},
    {"LV", 21}, {"LY", 25}, {"MC", 27}, {"MD", 24}, {"ME", 22}, {"MK", 19}, {"MN", 20}, {"MR", 27},
    {"MT", 31}, {"MU", 30}, {"NI", 28}, {"NL", 18}, {"NO", 15}, {"OM", 23}, {"PK", 24}, {"PL", 28},
    {"PS", 29}, {"PT", 25}, {"QA", 29}, {"RO", 24}, {"RS", 22}, {"RU", 33}, {"SA", 24}, {"SC", 31},
    {"SD", 18}, {"SE", 24}, {"SI", 19}, {"SK", 24}, {"SM", 27}, {"SO", 23}, {"ST", 25}, {"SV", 28},
    {"TL", 23}, {"TN", 24}, {"TR", 26}, {"UA", 29}, {"VA", 22}, {"VG", 24}, {"XK", 20}, {"YE", 30},
};

// 0: not in the registry.
size_t iban_length(char a, char b) {
  for (const IbanCountry& country : kIbanCountries) {
    if (country.code[0] == a && country.code[1] == b) {
      return country.length;
    }
  }
  return 0;
}

// ISO 13616 reads an IBAN as a number, BBAN first, letters as two digits (A = 10 ... Z = 35).
// The remainder mod 97 grows one upper-case character at a time, so every candidate length of
// one IBAN is checked in a single pass.
int mod97_append(int remainder, char c) {
  return is_digit(c) ? (remainder * 10 + digit_value(c)) % 97
                     : (remainder * 100 + (c - 'A' + 10)) % 97;
}

// The characters of a would-be IBAN from its country code on (upper case, no separators), and
// the places where it could end: the compact form ("DE89370400440532013000") ends at the end of
// the word; groups of four joined by one space or hyphen ("DE89 3704 0044 0532 0130 00") at any
// group boundary.
class IbanCandidates {
 public:
  struct End {
    size_t offset;       // in the text
    size_t size;         // characters up to there
    int bban_remainder;  // of the characters after the first four, mod 97
  };

  IbanCandidates(std::string_view t, size_t pos) {
    size_t end = pos;
    while (end < t.size() && is_alnum(t[end]) && size_ < chars_.size()) {
      append(t[end++]);
    }
    if (size_ >= 15 && !is_alnum(char_at(t, end))) {
      ends_[count_++] = {end, size_, remainder_};
    }
    const char joint = char_at(t, end);
    if (size_ != 4 || (joint != ' ' && joint != '-')) {
      return;
    }
    while (char_at(t, end) == joint && is_alnum(char_at(t, end + 1)) && count_ < ends_.size()) {
      size_t group_end = end + 1;
      while (group_end < t.size() && is_alnum(t[group_end])) {
        ++group_end;
      }
      const size_t length = group_end - end - 1;
      if (length > 4 || size_ + length > chars_.size()) {
        break;
      }
      for (size_t k = end + 1; k < group_end; ++k) {
        append(t[k]);
      }
      end = group_end;
      if (size_ >= 15) {
        ends_[count_++] = {end, size_, remainder_};
      }
      if (length < 4) {
        break;
      }
    }
  }

  // The longest candidate that is a valid IBAN for a country whose IBANs have `length`
  // characters (0: a country outside the registry).
  std::optional<End> longest_valid(size_t length) const {
    for (size_t k = count_; k-- > 0;) {
      const int check = leading_number(std::string_view(chars_.data() + 2, 2), 2);
      const bool length_ok = length == 0 || ends_[k].size == length;
      int remainder = ends_[k].bban_remainder;
      for (size_t c = 0; c < 4; ++c) {
        remainder = mod97_append(remainder, chars_[c]);  // country code and check digits last
      }
      if (length_ok && check >= 2 && check <= 98 && remainder == 1) {
        return ends_[k];
      }
    }
    return std::nullopt;
  }

  std::string masked(const End& end) const {
    const std::string_view iban(chars_.data(), end.size);
    return std::string(iban.substr(0, 2)) + mask_last4("****", iban);
  }

 private:
  void append(char c) {
    chars_[size_] = to_upper(c);
    if (size_ >= 4) {
      remainder_ = mod97_append(remainder_, chars_[size_]);
    }
    ++size_;
  }

  std::array<char, 34> chars_{};
  size_t size_ = 0;
  int remainder_ = 0;
  std::array<End, 8> ends_{};
  size_t count_ = 0;
};

// An IBAN whose country code starts at pos: where it ends, and its hint.
std::optional<std::pair<size_t, std::string>> iban_at(std::string_view t, size_t pos) {
  if (!is_alpha(t[pos]) || !is_alpha(t[pos + 1]) || is_alnum(char_before(t, pos))) {
    return std::nullopt;
  }
  const size_t length = iban_length(to_upper(t[pos]), to_upper(t[pos + 1]));
  // Outside the registry only an upper-case country code is worth the risk.
  if (length == 0 && !(is_upper(t[pos]) && is_upper(t[pos + 1]))) {
    return std::nullopt;
  }
  const IbanCandidates candidates(t, pos);
  const std::optional<IbanCandidates::End> end = candidates.longest_valid(length);
  if (!end) {
    return std::nullopt;
  }
  return std::pair(end->offset, candidates.masked(*end));
}

}  // namespace

bool detect_ibans(std::string_view t, FindingSink& sink) {
  // Every IBAN has two letters, then two digits: look where digits are.
  for (size_t digit = next_digit(t, 0); digit < t.size(); digit = next_digit(t, digit)) {
    size_t next = digit;
    while (is_digit(char_at(t, next))) {
      ++next;
    }
    if (digit >= 2 && next - digit >= 2) {
      if (auto iban = iban_at(t, digit - 2)) {
        if (!sink.add(kBuiltinNames[kIban], digit - 2, iban->first, std::move(iban->second))) {
          return false;
        }
        next = std::max(next, iban->first);
      }
    }
    digit = next;
  }
  return true;
}

}  // namespace tandem::routing::privacy_detail
