#pragma once
// What the privacy scanner's files share: the built-in detector names, the ASCII helpers every
// hand-written detector reads text with, the sink that collects findings, and one entry point
// per detector family. Each family lives in its own file (privacy_numbers.cpp, privacy_text.cpp,
// privacy_iban.cpp, privacy_credentials.cpp); privacy_scanner.cpp runs them over the folded text
// and merges what they find. The configured patterns and keyword lists are apart, in
// privacy_rules.h, the one internal header that needs RE2's.
//
// Every detector reads the folded text (privacy_fold.h) and reports folded offsets, in text
// order, through a FindingSink; it returns false when the sink told it to stop (first() needs
// only one finding per detector).
//
// Internal to the routing library: see privacy_scanner.h for the contract.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "routing/privacy_fold.h"
#include "routing/privacy_scanner.h"

namespace tandem::routing::privacy_detail {

// ---------------------------------------------------------------------------------------------
// Built-in detectors

enum Builtin : size_t {
  kEmail,
  kPhone,
  kPaymentCard,
  kUsSsn,
  kCnResidentId,
  kIban,
  kIpAddress,
  kCredential,
  kBuiltinCount,
};

inline constexpr std::array<const char*, kBuiltinCount> kBuiltinNames = {
    "email",          "phone", "payment_card", "us_ssn",
    "cn_resident_id", "iban",  "ip_address",   "credential",
};

using Enabled = std::array<bool, kBuiltinCount>;

// ---------------------------------------------------------------------------------------------
// ASCII helpers: locale-free, and never misreading the bytes of UTF-8 sequences

constexpr bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
constexpr bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
constexpr bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}
constexpr bool is_alpha(char c) {
  return is_upper(c) || is_lower(c);
}
constexpr bool is_alnum(char c) {
  return is_alpha(c) || is_digit(c);
}
constexpr bool is_word(char c) {
  return is_alnum(c) || c == '_';
}
constexpr bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
constexpr char to_lower(char c) {
  return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr char to_upper(char c) {
  return is_lower(c) ? static_cast<char>(c - 'a' + 'A') : c;
}
constexpr int digit_value(char c) {
  return c - '0';
}

// The character at i, or NUL outside the text, so that boundary checks need no bounds tests.
inline char char_at(std::string_view t, size_t i) {
  return i < t.size() ? t[i] : '\0';
}
inline char char_before(std::string_view t, size_t i) {
  return i > 0 && i <= t.size() ? t[i - 1] : '\0';
}

// The number written by the first `count` digits.
inline int leading_number(std::string_view digits, size_t count) {
  int value = 0;
  for (size_t k = 0; k < count && k < digits.size(); ++k) {
    value = value * 10 + digit_value(digits[k]);
  }
  return value;
}

// Case-insensitive comparison of t[pos, pos + word.size()) with a lower-case ASCII word.
inline bool matches_word_at(std::string_view t, size_t pos, std::string_view lower_word) {
  if (pos > t.size() || t.size() - pos < lower_word.size()) {
    return false;
  }
  for (size_t k = 0; k < lower_word.size(); ++k) {
    if (to_lower(t[pos + k]) != lower_word[k]) {
      return false;
    }
  }
  return true;
}

// Word-at-a-time search: the anchored scans skip 8 bytes at once while none of them can start
// a value, which in prose is nearly always.
inline constexpr uint64_t kOnes = 0x0101010101010101ULL;
inline constexpr uint64_t kHighs = 0x8080808080808080ULL;

// Whether the word holds the byte c (the exact "has a zero byte" test, on w ^ c).
constexpr bool has_byte(uint64_t w, char c) {
  const uint64_t x = w ^ (kOnes * static_cast<unsigned char>(c));
  return ((x - kOnes) & ~x & kHighs) != 0;
}

// Whether the word holds an ASCII digit ("hasbetween" of the Bit Twiddling Hacks).
constexpr bool has_digit(uint64_t w) {
  const uint64_t low7 = w & (kOnes * 127);
  return ((kOnes * (127 + '9' + 1) - low7) & ~w & (low7 + kOnes * (127 - ('0' - 1))) & kHighs) != 0;
}

// The first position at or after pos whose byte is `wanted` (an ASCII byte); `word_may_hold`
// rules out words.
template <typename WordTest, typename ByteTest>
size_t skip_to(std::string_view t, size_t pos, WordTest word_may_hold, ByteTest wanted) {
  while (pos < t.size()) {
    if (t.size() - pos >= 8) {
      uint64_t word;
      std::memcpy(&word, t.data() + pos, sizeof word);
      // Every anchor is ASCII: eight bytes of CJK text are passed over in one test.
      if ((word & kHighs) == kHighs || !word_may_hold(word)) {
        pos += 8;
        continue;
      }
    }
    for (const size_t stop = std::min(pos + 8, t.size()); pos < stop; ++pos) {
      if (wanted(t[pos])) {
        return pos;
      }
    }
  }
  return t.size();
}

inline size_t next_digit(std::string_view t, size_t pos) {
  return skip_to(
      t, pos, [](uint64_t w) { return has_digit(w); }, [](char c) { return is_digit(c); });
}

// "****" and the last 4 characters of a value: the most any hint shows.
inline std::string mask_last4(std::string_view prefix, std::string_view value) {
  return std::string(prefix) + std::string(value.substr(value.size() > 4 ? value.size() - 4 : 0));
}

// ---------------------------------------------------------------------------------------------
// Collecting findings (privacy_scanner.cpp)

// Keeps every finding (scan) or only the earliest (first). Every detector reports in text
// order, so in first-only mode add() tells it to stop after its first finding.
class FindingSink {
 public:
  FindingSink(const FoldedText& text, bool first_only) : text_(text), first_only_(first_only) {}

  // Records a finding over the folded bytes [begin, end); false: the detector may stop.
  bool add(std::string_view detector, size_t begin, size_t end, std::string masked);

  std::optional<PrivacyFinding> take_first() { return std::move(best_); }

  // In text order, without duplicates and without findings strictly inside another one. (The
  // earliest finding is never inside another, so first() agrees with scan().)
  std::vector<PrivacyFinding> take_all();

 private:
  const FoldedText& text_;
  bool first_only_;
  std::vector<PrivacyFinding> findings_;
  std::optional<PrivacyFinding> best_;
};

// ---------------------------------------------------------------------------------------------
// The built-in detector families. Each returns false when the sink said stop.

// Payment cards, CN resident ids, US SSNs, phone numbers and IPv4 addresses: the detectors in
// `on` among those, over the runs of digits (privacy_numbers.cpp).
bool detect_numbers(std::string_view t, const Enabled& on, FindingSink& sink);

// E-mail addresses, plain or spelled out ("john [at] example [dot] com") (privacy_text.cpp).
bool detect_emails(std::string_view t, FindingSink& sink);

// IPv6 addresses, full and "::"-compressed (privacy_text.cpp).
bool detect_ipv6(std::string_view t, FindingSink& sink);

// Whether an IPv4 address, by its four octets, is in a range no one on the internet is reached
// at (privacy_numbers.cpp): such an address identifies nobody. IPv6's IPv4-mapped addresses
// ("::ffff:10.0.3.21") are judged by it too.
bool ipv4_not_globally_reachable(const std::array<int, 4>& octets);

// IBANs, compact or in groups of four, checked against the registry and mod 97
// (privacy_iban.cpp).
bool detect_ibans(std::string_view t, FindingSink& sink);

// API keys, tokens, private keys and assigned secrets (privacy_credentials.cpp).
bool detect_credentials(std::string_view t, FindingSink& sink);

}  // namespace tandem::routing::privacy_detail
