#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/hex.h"
#include "routing/privacy_detectors.h"

// Hand-written scans for the addresses that prose rarely holds the anchor of: an at sign (or a
// bracketed "at") for e-mail, a colon for IPv6. Each skips to its anchor and reads outwards.

namespace tandem::routing::privacy_detail {

// ---------------------------------------------------------------------------------------------
// E-mail: local@domain.tld, also spelled "john [at] example [dot] com" or "john(at)example(dot)com"

namespace {

constexpr bool is_local_char(char c) {
  return is_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}
constexpr bool is_label_char(char c) {
  return is_alnum(c) || c == '-';
}

size_t skip_spaces(std::string_view t, size_t pos, size_t most) {
  size_t k = pos;
  while (char_at(t, k) == ' ' && k - pos < most) {
    ++k;
  }
  return k;
}

// A bracketed spelling of `word` at pos ("[at]", "( at )", "{dot}", "<at>", "[.]"): its end.
std::optional<size_t> spelled_token(std::string_view t, size_t pos, std::string_view word,
                                    char symbol) {
  static constexpr std::string_view kOpen = "[({<";
  static constexpr std::string_view kClose = "])}>";
  const size_t bracket = kOpen.find(char_at(t, pos));
  if (bracket == std::string_view::npos) {
    return std::nullopt;
  }
  size_t k = skip_spaces(t, pos + 1, 2);
  if (matches_word_at(t, k, word)) {
    k += word.size();
  } else if (char_at(t, k) == symbol) {
    ++k;
  } else {
    return std::nullopt;
  }
  k = skip_spaces(t, k, 2);
  if (char_at(t, k) != kClose[bracket]) {
    return std::nullopt;
  }
  return k + 1;
}

// After a domain label ending at pos: the start of the next label, if a dot joins one ('.', and
// for spelled addresses "[dot]" or " dot ").
std::optional<size_t> next_label(std::string_view t, size_t pos, bool spelled) {
  if (char_at(t, pos) == '.' && is_alnum(char_at(t, pos + 1))) {
    return pos + 1;
  }
  if (!spelled) {
    return std::nullopt;
  }
  const size_t k = skip_spaces(t, pos, 2);
  if (const std::optional<size_t> end = spelled_token(t, k, "dot", '.')) {
    const size_t label = skip_spaces(t, *end, 2);
    return is_alnum(char_at(t, label)) ? std::optional<size_t>(label) : std::nullopt;
  }
  if (k > pos && matches_word_at(t, k, "dot") && char_at(t, k + 3) == ' ' &&
      is_alnum(char_at(t, k + 4))) {
    return k + 4;
  }
  return std::nullopt;
}

struct Domain {
  size_t end = 0;
  std::string_view tld;
};

// The domain after an at sign: two labels or more, the last a top-level domain of letters.
std::optional<Domain> read_domain(std::string_view t, size_t pos, bool spelled) {
  std::optional<Domain> domain;
  size_t labels = 0;
  for (size_t begin = pos;;) {
    size_t end = begin;
    while (end < t.size() && is_label_char(t[end])) {
      ++end;
    }
    const size_t length = end - begin;
    if (length == 0 || length > 63 || t[begin] == '-' || t[end - 1] == '-') {
      break;
    }
    ++labels;
    const std::string_view label = t.substr(begin, length);
    if (labels >= 2 && length >= 2 && length <= 24 &&
        std::all_of(label.begin(), label.end(), is_alpha)) {
      domain = Domain{end, label};
    }
    const std::optional<size_t> next = next_label(t, end, spelled);
    if (!next) {
      break;
    }
    begin = *next;
  }
  return domain;
}

// The start of the local part that ends at `end`, not reaching back before `floor`.
std::optional<size_t> read_local_part(std::string_view t, size_t end, size_t floor) {
  size_t begin = end;
  while (begin > floor && is_local_char(t[begin - 1]) && end - begin < 64) {
    --begin;
  }
  while (begin < end && (t[begin] == '.' || t[begin] == '-')) {
    ++begin;
  }
  if (begin == end || t[end - 1] == '.') {
    return std::nullopt;
  }
  return begin;
}

}  // namespace

bool detect_emails(std::string_view t, FindingSink& sink) {
  size_t floor = 0;  // the end of the previous address: one never reaches into another
  const auto word_may_hold = [](uint64_t w) {
    return has_byte(w, '@') || has_byte(w, '[') || has_byte(w, '(') || has_byte(w, '{') ||
           has_byte(w, '<');
  };
  const auto anchor = [](char c) {
    return c == '@' || c == '[' || c == '(' || c == '{' || c == '<';
  };
  for (size_t pos = skip_to(t, 0, word_may_hold, anchor); pos < t.size();
       pos = skip_to(t, pos + 1, word_may_hold, anchor)) {
    size_t domain_begin = pos + 1;
    size_t local_end = pos;
    const bool spelled = t[pos] != '@';
    if (spelled) {
      const std::optional<size_t> token = spelled_token(t, pos, "at", '@');
      if (!token) {
        continue;
      }
      domain_begin = skip_spaces(t, *token, 2);
      while (local_end > floor && t[local_end - 1] == ' ' && pos - local_end < 2) {
        --local_end;
      }
    }
    const std::optional<size_t> local = read_local_part(t, local_end, floor);
    if (!local) {
      continue;
    }
    const std::optional<Domain> domain = read_domain(t, domain_begin, spelled);
    if (!domain) {
      continue;
    }
    // "git@github.com:org/repo.git" is an SSH remote, not somebody's mailbox.
    if (t.substr(*local, local_end - *local) == "git" && char_at(t, domain->end) == ':') {
      continue;
    }
    std::string masked = "***@***." + std::string(domain->tld);
    std::transform(masked.begin(), masked.end(), masked.begin(), to_lower);
    if (!sink.add(kBuiltinNames[kEmail], *local, domain->end, std::move(masked))) {
      return false;
    }
    floor = domain->end;
    pos = domain->end - 1;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// IPv6: full and "::"-compressed forms, with an optional dotted IPv4 tail

namespace {

constexpr bool is_ipv6_char(char c) {
  return is_hex(c) || c == ':' || c == '.';
}

// The four octets of a dotted IPv4 address, if `s` is one.
std::optional<std::array<int, 4>> dotted_quad(std::string_view s) {
  std::array<int, 4> octets{};
  size_t parts = 0;
  for (size_t begin = 0; begin <= s.size();) {
    size_t end = s.find('.', begin);
    end = end == std::string_view::npos ? s.size() : end;
    const std::string_view part = s.substr(begin, end - begin);
    if (parts == octets.size() || part.empty() || part.size() > 3 ||
        !std::all_of(part.begin(), part.end(), is_digit)) {
      return std::nullopt;
    }
    const int octet = leading_number(part, 3);
    if (octet > 255) {
      return std::nullopt;
    }
    octets[parts++] = octet;
    begin = end + 1;
  }
  if (parts != octets.size()) {
    return std::nullopt;
  }
  return octets;
}

// The 16-bit groups of a ':'-separated list ("" has none); nullopt if malformed.
std::optional<int> ipv6_groups(std::string_view s, bool ipv4_tail_allowed) {
  if (s.empty()) {
    return 0;
  }
  int groups = 0;
  for (size_t begin = 0; begin <= s.size();) {
    size_t end = s.find(':', begin);
    const bool last = end == std::string_view::npos;
    end = last ? s.size() : end;
    const std::string_view part = s.substr(begin, end - begin);
    if (last && ipv4_tail_allowed && part.find('.') != std::string_view::npos) {
      if (!dotted_quad(part)) {
        return std::nullopt;
      }
      groups += 2;
    } else if (part.empty() || part.size() > 4 || !std::all_of(part.begin(), part.end(), is_hex)) {
      return std::nullopt;
    } else {
      ++groups;
    }
    begin = end + 1;
  }
  return groups;
}

// Precise rather than complete: two groups or more and a decimal digit, so that "dead::beef",
// "std::vector", "::1" and times ("10:30:45") are not addresses.
bool ipv6_valid(std::string_view s) {
  if (s.size() < 4 || s.size() > 45 || std::none_of(s.begin(), s.end(), is_digit)) {
    return false;
  }
  const size_t gap = s.find("::");
  if (gap == std::string_view::npos) {
    const std::optional<int> groups = ipv6_groups(s, true);
    return groups && *groups == 8;
  }
  if (s.find("::", gap + 1) != std::string_view::npos) {
    return false;
  }
  const std::optional<int> left = ipv6_groups(s.substr(0, gap), false);
  const std::optional<int> right = ipv6_groups(s.substr(gap + 2), true);
  return left && right && *left + *right >= 2 && *left + *right <= 7;
}

// The value of the hex group at the start of `s` (0 when `s` starts with "::").
int leading_group(std::string_view s) {
  int value = 0;
  for (size_t i = 0; i < s.size() && i < 4 && is_hex(s[i]); ++i) {
    value = value * 16 + hex_digit_value(s[i]);
  }
  return value;
}

// The IPv4 address an IPv4-mapped IPv6 address carries ("::ffff:192.168.1.10", also written
// "0:0:0:0:0:ffff:..."), if `s` is one.
std::optional<std::array<int, 4>> mapped_ipv4(std::string_view s) {
  // An address holds hex digits, ':' and '.' only (is_ipv6_char): `| 0x20` lower-cases a letter
  // and leaves the rest as they are.
  auto same = [](char p, char c) { return p == (c | 0x20); };
  for (const std::string_view prefix : {"::ffff:", "0:0:0:0:0:ffff:"}) {
    if (s.size() <= prefix.size() || !std::equal(prefix.begin(), prefix.end(), s.begin(), same)) {
      continue;
    }
    return dotted_quad(s.substr(prefix.size()));
  }
  return std::nullopt;
}

// As for IPv4 (privacy_numbers.cpp): unique local (fc00::/7), link-local (fe80::/10), multicast
// (ff00::/8) and documentation (2001:db8::/32) addresses identify no one, nor does an
// IPv4-mapped address of such an IPv4 address.
bool ipv6_not_globally_reachable(std::string_view s) {
  if (const auto v4 = mapped_ipv4(s)) {
    return ipv4_not_globally_reachable(*v4);
  }
  const int first = leading_group(s);
  if ((first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80 || (first & 0xff00) == 0xff00) {
    return true;
  }
  // "2001:db8::1", not "2001::db8:1"; an address always holds a ':' (ipv6_valid).
  const size_t colon = s.find(':');
  return first == 0x2001 && char_at(s, colon + 1) != ':' &&
         leading_group(s.substr(colon + 1)) == 0x0db8;
}

}  // namespace

bool detect_ipv6(std::string_view t, FindingSink& sink) {
  for (size_t pos = t.find(':'); pos != std::string_view::npos; pos = t.find(':', pos)) {
    size_t begin = pos;
    while (begin > 0 && is_ipv6_char(t[begin - 1])) {
      --begin;
    }
    size_t end = pos;
    while (end < t.size() && is_ipv6_char(t[end])) {
      ++end;
    }
    const size_t token_end = end;
    // "IP:2001:db8::1", "at 2001:db8::1." : a lone ':' or '.' at an edge is punctuation.
    if (t[begin] == ':' && char_at(t, begin + 1) != ':') {
      ++begin;
    }
    while (end > begin && t[end - 1] == '.') {
      --end;
    }
    if (end > begin + 1 && t[end - 1] == ':' && t[end - 2] != ':') {
      --end;
    }
    const bool bounded = !is_word(char_before(t, begin)) && !is_word(char_at(t, end));
    const std::string_view address = t.substr(begin, end - begin);
    if (bounded && end > begin && ipv6_valid(address) && !ipv6_not_globally_reachable(address)) {
      if (!sink.add(kBuiltinNames[kIpAddress], begin, end, "*:*:*:*")) {
        return false;
      }
    }
    pos = std::max(token_end, pos + 1);
  }
  return true;
}

}  // namespace tandem::routing::privacy_detail
