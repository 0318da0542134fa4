#pragma once
// What the numeric detectors share. privacy_numbers.cpp reads the text as runs of digit groups
// ("4111 1111 1111 1111", "(555) 123-4567") and offers every window of groups to the matchers;
// each matcher applies one detector's shape rules and checksum (privacy_id_numbers.cpp:
// payment cards, CN resident ids, US SSNs; privacy_phones.cpp: phone numbers).
//
// Internal to the routing library: see privacy_scanner.h for the contract.

#include <array>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/privacy_detectors.h"

namespace tandem::routing::privacy_detail {

struct DigitGroup {
  size_t begin;
  size_t end;
};

// A sequence of digit groups joined by separators: how people write, and disguise, numbers
// ("4111 1111 1111 1111", "4 1 1 1 ...", "(555) 123-4567").
struct DigitRun {
  std::vector<DigitGroup> groups;
  // joints[k] joins groups k and k + 1: ' ', '.', '-', '/', '_', or '(' when parentheses are
  // among the separators.
  std::vector<char> joints;
  bool attached_before = false;  // a letter touches the first group ("v1.2.3.4")
  bool attached_after = false;   // a letter touches the last group
  bool check_x = false;          // an "X" ends the last group: a CN resident id check character
  size_t x_end = 0;  // just past an X after the last group, glued or after a separator; 0: none
  bool plus_lead = false;  // "+" before the first group, with no letter before the "+"

  size_t size() const { return groups.size(); }
  size_t length(size_t g) const { return groups[g].end - groups[g].begin; }
};

// The digits of a window of groups; windows longer than any detector wants are refused.
class Digits {
 public:
  static constexpr size_t kCapacity = 19;

  bool collect(std::string_view t, const DigitRun& run, size_t first, size_t last) {
    size_ = 0;
    for (size_t g = first; g <= last; ++g) {
      const size_t n = run.length(g);
      if (size_ + n > kCapacity) {
        return false;
      }
      std::memcpy(digits_.data() + size_, t.data() + run.groups[g].begin, n);
      size_ += n;
    }
    return true;
  }
  std::string_view view() const { return {digits_.data(), size_}; }

 private:
  std::array<char, kCapacity> digits_{};
  size_t size_ = 0;
};

// A window of groups [first, last] that a detector accepted, as a folded span.
struct NumberMatch {
  Builtin detector;
  size_t last;   // group index
  size_t begin;  // folded offsets, which may include a "+" or "(" before the digits
  size_t end;
  std::string masked;
};

// The window rules the numeric detectors share.
class RunShape {
 public:
  RunShape(std::string_view t, const DigitRun& run) : t_(t), run_(run) {}

  std::string_view text() const { return t_; }
  const DigitRun& run() const { return run_; }
  size_t size() const { return run_.size(); }
  size_t length(size_t g) const { return run_.length(g); }
  size_t begin(size_t g) const { return run_.groups[g].begin; }
  size_t end(size_t g) const { return run_.groups[g].end; }
  char joint(size_t g) const { return run_.joints[g]; }
  char digit(size_t g, size_t k) const { return t_[run_.groups[g].begin + k]; }

  size_t total(size_t first, size_t last) const {
    size_t n = 0;
    for (size_t g = first; g <= last; ++g) {
      n += length(g);
    }
    return n;
  }
  // The last group reachable from `first` through joints of one kind.
  size_t span_end(size_t first, char kind) const {
    size_t g = first;
    while (g + 1 < size() && joint(g) == kind) {
      ++g;
    }
    return g;
  }
  // The last group of the single digits from `first` ("4 1 1 1 ...").
  size_t singles_end(size_t first, char kind) const {
    size_t g = first;
    while (g + 1 < size() && joint(g) == kind && length(g + 1) == 1) {
      ++g;
    }
    return g;
  }
  // No joint of the same kind before `first`: the window is not the tail of a longer number.
  bool opens_span(size_t first, char kind) const { return first == 0 || joint(first - 1) != kind; }
  bool closes_span(size_t last, char kind) const {
    return last + 1 == size() || joint(last) != kind;
  }
  bool free_start(size_t first) const { return first > 0 || !run_.attached_before; }
  bool free_end(size_t last) const {
    return last + 1 < size() || (!run_.attached_after && !run_.check_x);
  }
  // The run ends in an X check character glued to `last` ("002X").
  bool ends_with_glued_x(size_t last) const { return last + 1 == size() && run_.check_x; }
  // ... or after the separator the window uses between its digits ("0 0 2 X").
  bool ends_with_x(size_t last, char kind) const {
    return last + 1 == size() && run_.x_end != 0 && (run_.check_x || t_[end(last)] == kind);
  }
  size_t x_end() const { return run_.x_end; }
  bool plus_lead(size_t first) const { return first == 0 && run_.plus_lead; }
  // A single group standing alone: not glued to letters, and not part of a decimal number.
  bool alone(size_t g) const {
    return free_start(g) && free_end(g) && (g == 0 || joint(g - 1) != '.') &&
           (g + 1 == size() || joint(g) != '.');
  }
  // A separated window starts here: a plain joint follows, and none of its kind precedes.
  bool opens_separated(size_t first) const {
    return first + 1 < size() && joint(first) != '(' && free_start(first) &&
           opens_span(first, joint(first));
  }

 private:
  std::string_view t_;
  const DigitRun& run_;
};

// Whether one of the lower-case cues occurs in the 48 bytes before pos: what turns an ambiguous
// bare number ("123456789") into an SSN or a phone number.
bool has_cue_before(std::string_view t, size_t pos, std::initializer_list<std::string_view> cues);

// The matchers: whether a window of groups starting at group `first` is the detector's value.
std::optional<NumberMatch> match_card(const RunShape& s, size_t first);
std::optional<NumberMatch> match_cn_resident_id(const RunShape& s, size_t first);
std::optional<NumberMatch> match_us_ssn(const RunShape& s, size_t first);
std::optional<NumberMatch> match_phone(const RunShape& s, size_t first);

}  // namespace tandem::routing::privacy_detail
