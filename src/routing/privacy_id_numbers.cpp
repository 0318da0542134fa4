#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "routing/privacy_numbers.h"

// The numbers that identify a person or an account and carry their own validity rules: payment
// cards (issuer prefix and Luhn), CN resident ids (region, birth date, MOD 11-2) and US SSNs
// (reserved areas, groups and serials).

namespace tandem::routing::privacy_detail {

// --- payment cards: 13-19 digits, a known issuer prefix with its lengths, Luhn

namespace {

bool luhn_valid(std::string_view digits) {
  int sum = 0;
  bool twice = false;
  for (size_t k = digits.size(); k-- > 0;) {
    int d = digit_value(digits[k]);
    if (twice) {
      d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    }
    sum += d;
    twice = !twice;
  }
  return sum % 10 == 0;
}

bool card_issuer_valid(std::string_view d) {
  const size_t n = d.size();
  const int p2 = leading_number(d, 2);
  const int p3 = leading_number(d, 3);
  const int p4 = leading_number(d, 4);
  if (d[0] == '4') {  // Visa
    return n == 13 || n == 16 || n == 19;
  }
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) {  // Mastercard
    return n == 16;
  }
  if (p2 == 34 || p2 == 37) {  // American Express
    return n == 15;
  }
  if (p4 == 6011 || p2 == 65 || (p3 >= 644 && p3 <= 649) || p2 == 62) {  // Discover, UnionPay
    return n >= 16;
  }
  if (p4 >= 3528 && p4 <= 3589) {  // JCB
    return n >= 16;
  }
  if ((p3 >= 300 && p3 <= 305) || p2 == 36 || p2 == 38 || p2 == 39) {  // Diners Club
    return n >= 14;
  }
  if (p4 >= 2200 && p4 <= 2204) {  // Mir
    return n >= 16;
  }
  return false;
}

// Candidate last groups for a window, at most a handful.
class Windows {
 public:
  void add(size_t last) {
    if (count_ < lasts_.size()) {
      lasts_[count_++] = last;
    }
  }
  // Longest first: "4111 1111 1111 1111 123" should not stop at a shorter valid prefix.
  std::span<const size_t> longest_first() {
    const auto end = lasts_.begin() + static_cast<std::ptrdiff_t>(count_);
    std::sort(lasts_.begin(), end, std::greater<>());
    return {lasts_.data(), count_};
  }

 private:
  std::array<size_t, 8> lasts_{};
  size_t count_ = 0;
};

// Card shapes from `first`: one group of 13-19 digits; groups of four, the last shorter; Amex
// 4-6-5 and Diners 4-6-4; single digits; or a whole separated span of 13-19 digits. The shaped
// forms may be followed by more groups (expiry date, CVV).
Windows card_windows(const RunShape& s, size_t first) {
  Windows windows;
  if (s.plus_lead(first)) {
    return windows;  // "+4915112345678" is a phone number
  }
  if (s.length(first) >= 13 && s.length(first) <= 19 && s.alone(first)) {
    windows.add(first);
  }
  if (!s.opens_separated(first)) {
    return windows;
  }
  const char kind = s.joint(first);
  const size_t span = s.span_end(first, kind);
  const size_t whole = s.total(first, span);
  if (whole >= 13 && whole <= 19) {
    windows.add(span);
  }
  size_t fours = first;  // the first group after the leading groups of four
  while (fours <= span && s.length(fours) == 4) {
    ++fours;
  }
  for (size_t last = first + 3; last <= std::min(span, first + 4) && last <= fours; ++last) {
    const size_t n = 4 * (last - first) + s.length(last);
    if (s.length(last) <= 4 && n >= 13 && n <= 19) {
      windows.add(last);
    }
  }
  if (first + 2 <= span && s.length(first) == 4 && s.length(first + 1) == 6 &&
      (s.length(first + 2) == 5 || s.length(first + 2) == 4)) {
    windows.add(first + 2);
  }
  const size_t singles = s.singles_end(first, kind);
  if (s.length(first) == 1 && singles - first + 1 >= 13 && singles - first + 1 <= 19) {
    windows.add(singles);
  }
  return windows;
}

}  // namespace

std::optional<NumberMatch> match_card(const RunShape& s, size_t first) {
  Windows windows = card_windows(s, first);
  Digits digits;
  for (size_t last : windows.longest_first()) {
    if (s.free_end(last) && digits.collect(s.text(), s.run(), first, last) &&
        card_issuer_valid(digits.view()) && luhn_valid(digits.view())) {
      return NumberMatch{kPaymentCard, last, s.begin(first), s.end(last),
                         mask_last4("****", digits.view())};
    }
  }
  return std::nullopt;
}

// --- CN resident identity card (GB 11643): 6-digit region, YYYYMMDD birth date, 3-digit
// sequence, ISO 7064 MOD 11-2 check character

namespace {

bool plausible_date(int year, int month, int day) {
  static constexpr std::array<int, 12> kDays = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1900 || year > 2099 || month < 1 || month > 12 || day < 1) {
    return false;
  }
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month == 2 && day == 29) {
    return leap;
  }
  return day <= kDays[static_cast<size_t>(month - 1)];
}

bool cn_province_valid(int province) {
  return (province >= 11 && province <= 15) || (province >= 21 && province <= 23) ||
         (province >= 31 && province <= 37) || (province >= 41 && province <= 46) ||
         (province >= 50 && province <= 54) || (province >= 61 && province <= 65) ||
         province == 71 || province == 81 || province == 82 || province == 83 || province == 91;
}

// `id`: 17 digits and the check character (a digit or 'X').
bool cn_resident_id_valid(std::string_view id) {
  static constexpr std::array<int, 17> kWeights = {7, 9, 10, 5,  8, 4, 2, 1, 6,
                                                   3, 7, 9,  10, 5, 8, 4, 2};
  static constexpr std::string_view kCheck = "10X98765432";
  const auto number = [&](size_t from, size_t count) {
    return leading_number(id.substr(from), count);
  };
  if (!cn_province_valid(number(0, 2)) ||
      !plausible_date(number(6, 4), number(10, 2), number(12, 2))) {
    return false;
  }
  int sum = 0;
  for (size_t k = 0; k < 17; ++k) {
    sum += digit_value(id[k]) * kWeights[k];
  }
  return kCheck[static_cast<size_t>(sum % 11)] == to_upper(id[17]);
}

// 18 digits, or 17 and an X, in one group or as a whole separated span.
std::optional<size_t> cn_resident_id_window(const RunShape& s, size_t first) {
  const bool no_decimal_point = first == 0 || s.joint(first - 1) != '.';
  if (s.length(first) == 18 && s.alone(first)) {
    return first;
  }
  if (s.length(first) == 17 && s.ends_with_glued_x(first) && s.free_start(first) &&
      no_decimal_point) {
    return first;
  }
  if (s.opens_separated(first)) {
    const size_t span = s.span_end(first, s.joint(first));
    const size_t n = s.total(first, span);
    if ((n == 18 && s.free_end(span)) || (n == 17 && s.ends_with_x(span, s.joint(first)))) {
      return span;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<NumberMatch> match_cn_resident_id(const RunShape& s, size_t first) {
  const std::optional<size_t> last = cn_resident_id_window(s, first);
  Digits digits;
  if (!last || !digits.collect(s.text(), s.run(), first, *last)) {
    return std::nullopt;
  }
  std::string id(digits.view());
  size_t end = s.end(*last);
  if (id.size() == 17) {
    id.push_back('X');
    end = s.x_end();  // the check character
  }
  if (!cn_resident_id_valid(id)) {
    return std::nullopt;
  }
  return NumberMatch{kCnResidentId, *last, s.begin(first), end, mask_last4("****", id)};
}

// --- US Social Security number: AAA-GG-SSSS; never area 000, 666 or 9xx, group 00 or serial
// 0000. Nine digits written any other way are an SSN only after a cue such as "SSN".

namespace {

std::optional<size_t> us_ssn_window(const RunShape& s, size_t first) {
  if (s.opens_separated(first) && first + 2 < s.size() && s.joint(first + 1) == s.joint(first) &&
      s.length(first) == 3 && s.length(first + 1) == 2 && s.length(first + 2) == 4 &&
      s.closes_span(first + 2, s.joint(first)) && s.free_end(first + 2)) {
    return first + 2;
  }
  std::optional<size_t> last;
  if (s.length(first) == 9 && s.alone(first)) {
    last = first;
  } else if (s.opens_separated(first)) {
    const size_t span = s.span_end(first, s.joint(first));
    if (s.total(first, span) == 9 && s.free_end(span)) {
      last = span;
    }
  }
  if (last && has_cue_before(s.text(), s.begin(first), {"ssn", "social security", "ss#"})) {
    return last;
  }
  return std::nullopt;
}

bool ssn_valid(std::string_view d) {
  const int area = leading_number(d, 3);
  return area != 0 && area != 666 && area < 900 && leading_number(d.substr(3), 2) != 0 &&
         leading_number(d.substr(5), 4) != 0;
}

}  // namespace

std::optional<NumberMatch> match_us_ssn(const RunShape& s, size_t first) {
  const std::optional<size_t> last = us_ssn_window(s, first);
  Digits digits;
  if (!last || !digits.collect(s.text(), s.run(), first, *last) || !ssn_valid(digits.view())) {
    return std::nullopt;
  }
  return NumberMatch{kUsSsn, *last, s.begin(first), s.end(*last),
                     mask_last4("***-**-", digits.view())};
}

}  // namespace tandem::routing::privacy_detail
