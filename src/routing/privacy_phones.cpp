#include <cstddef>
#include <optional>
#include <string_view>

#include "routing/privacy_numbers.h"

namespace tandem::routing::privacy_detail {

// --- phone numbers: international "+CC ..." (8-15 digits, E.164); North American
// (NXX) NXX-XXXX in its usual spellings; Chinese mobiles 1[3-9]X XXXX XXXX. Ten bare digits are
// a phone number only after a cue such as "phone" or "call".

namespace {

bool phone_joint(char kind) {
  return kind == ' ' || kind == '-' || kind == '.' || kind == '(';
}

std::optional<size_t> international_window(const RunShape& s, size_t first) {
  if (!s.plus_lead(first) || s.digit(first, 0) == '0') {
    return std::nullopt;
  }
  size_t last = first;
  size_t n = s.length(first);
  bool whole = true;  // no digits that would make it too long follow
  while (last + 1 < s.size() && phone_joint(s.joint(last))) {
    const size_t next = last + 1;
    // "+44 20 7946 0958 192.168.1.10": a dotted number after a number is not part of it.
    if (next + 1 < s.size() && s.joint(next) == '.' && s.joint(last) != '.') {
      break;
    }
    if (n + s.length(next) > 15) {
      whole = false;
      break;
    }
    n += s.length(next);
    last = next;
  }
  const bool length_ok = n >= 8 && (s.digit(first, 0) != '1' || n == 11);
  if (!whole || !length_ok || !s.free_end(last)) {
    return std::nullopt;
  }
  return last;
}

// "555-123-4567", "555.123.4567", "555 123 4567", "(555) 123-4567", each possibly after "1".
std::optional<size_t> nanp_window(const RunShape& s, size_t first) {
  const bool country_one = s.length(first) == 1 && s.digit(first, 0) == '1' &&
                           first + 1 < s.size() && phone_joint(s.joint(first));
  const size_t area = country_one ? first + 1 : first;
  if (area + 2 >= s.size() || s.length(area) != 3 || s.length(area + 1) != 3 ||
      s.length(area + 2) != 4 || s.digit(area, 0) < '2') {
    return std::nullopt;
  }
  const char kind = s.joint(area + 1);
  if (kind != '-' && kind != '.' && kind != ' ') {
    return std::nullopt;
  }
  const std::string_view t = s.text();
  const bool parenthesised = s.joint(area) == '(' && char_before(t, s.begin(area)) == '(' &&
                             char_at(t, s.end(area)) == ')';
  const bool opens = first == 0 || s.joint(first - 1) != s.joint(first);
  if ((!parenthesised && s.joint(area) != kind) || !opens || !s.free_start(first) ||
      !s.closes_span(area + 2, kind) || !s.free_end(area + 2)) {
    return std::nullopt;
  }
  return area + 2;
}

// 11 digits starting 1[3-9]: in one group, as 3-4-4, or as single digits.
std::optional<size_t> cn_mobile_window(const RunShape& s, size_t first) {
  if (s.length(first) == 11 && s.alone(first)) {
    return first;
  }
  if (!s.opens_separated(first)) {
    return std::nullopt;
  }
  const char kind = s.joint(first);
  const size_t span = s.span_end(first, kind);
  const bool three_four_four = span == first + 2 && s.length(first) == 3 &&
                               s.length(first + 1) == 4 && s.length(first + 2) == 4;
  const bool singles =
      s.length(first) == 1 && s.singles_end(first, kind) == span && span - first + 1 == 11;
  if ((three_four_four || singles) && s.free_end(span)) {
    return span;
  }
  return std::nullopt;
}

bool is_cn_mobile(std::string_view d) {
  return d.size() == 11 && d[0] == '1' && d[1] >= '3' && d[1] <= '9';
}

}  // namespace

std::optional<NumberMatch> match_phone(const RunShape& s, size_t first) {
  const std::string_view t = s.text();
  Digits digits;
  const auto found = [&](size_t last, size_t begin) -> std::optional<NumberMatch> {
    if (!digits.collect(t, s.run(), first, last)) {
      return std::nullopt;
    }
    return NumberMatch{kPhone, last, begin, s.end(last), mask_last4("****", digits.view())};
  };
  if (const std::optional<size_t> last = international_window(s, first)) {
    return found(*last, s.begin(first) - 1);  // with the "+"
  }
  if (const std::optional<size_t> last = nanp_window(s, first)) {
    const bool bracket = s.joint(first) == '(' && char_before(t, s.begin(first)) == '(';
    return found(*last, s.begin(first) - (bracket ? 1 : 0));
  }
  if (const std::optional<size_t> last = cn_mobile_window(s, first)) {
    if (digits.collect(t, s.run(), first, *last) && is_cn_mobile(digits.view())) {
      return found(*last, s.begin(first));
    }
  }
  if (s.length(first) == 10 && s.alone(first) && s.digit(first, 0) >= '2' &&
      has_cue_before(
          t, s.begin(first),
          {"phone", "tel", "call", "mobile", "cell", "fax", "whatsapp", "sms",
           "\xE7\x94\xB5\xE8\xAF\x9D" /* 电话 */, "\xE6\x89\x8B\xE6\x9C\xBA" /* 手机 */})) {
    return found(first, s.begin(first));
  }
  return std::nullopt;
}

}  // namespace tandem::routing::privacy_detail
