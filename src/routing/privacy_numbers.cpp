#include "routing/privacy_numbers.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>

// The numeric detectors: the text's digits are read as runs of groups, and every window of
// groups is offered to the matchers in turn. IPv4 is here too: four dot-joined groups, the
// last matcher tried.

namespace tandem::routing::privacy_detail {

// The ranges: this network (0/8), private networks (RFC 1918), loopback, link-local, the
// documentation ranges (RFC 5737), multicast and the reserved block with broadcast. 10.0.3.21 is
// in millions of networks; pasted logs and configurations are full of such addresses, and each
// pinned a developer's request to the device. Carrier-grade NAT (100.64/10) is assigned to
// subscribers and stays private.
bool ipv4_not_globally_reachable(const std::array<int, 4>& o) {
  const bool private_network =
      o[0] == 10 || (o[0] == 172 && o[1] >= 16 && o[1] <= 31) || (o[0] == 192 && o[1] == 168);
  const bool documentation = (o[0] == 192 && o[1] == 0 && o[2] == 2) ||
                             (o[0] == 198 && o[1] == 51 && o[2] == 100) ||
                             (o[0] == 203 && o[1] == 0 && o[2] == 113);
  const bool link_local = o[0] == 169 && o[1] == 254;
  return o[0] == 0 || o[0] == 127 || o[0] >= 224 || private_network || documentation || link_local;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Digit runs

// The separators after a digit group (1-3 of " .-/_()", one kind of punctuation), if a digit
// follows them: their kind, and where the next group starts.
char read_joint(std::string_view t, size_t pos, size_t& next_group) {
  char kind = '\0';
  bool parenthesis = false;
  size_t k = pos;
  for (; k < t.size() && k - pos < 3; ++k) {
    const char c = t[k];
    if (c == '(' || c == ')') {
      parenthesis = true;
    } else if (c == '.' || c == '-' || c == '/' || c == '_') {
      if (kind != '\0' && kind != c) {
        return '\0';
      }
      kind = c;
    } else if (c != ' ') {
      break;
    }
  }
  if (k == pos || !is_digit(char_at(t, k))) {
    return '\0';
  }
  next_group = k;
  if (parenthesis) {
    return '(';
  }
  return kind != '\0' ? kind : ' ';
}

// Reads the run that starts at the digit t[start]; returns the offset just past it.
size_t read_run(std::string_view t, size_t start, DigitRun& run) {
  run.groups.clear();
  run.joints.clear();
  const char lead = char_before(t, start);
  run.attached_before = is_alnum(lead);
  run.plus_lead = lead == '+' && !is_alnum(char_before(t, start - 1));
  size_t pos = start;
  for (;;) {
    size_t end = pos;
    while (end < t.size() && is_digit(t[end])) {
      ++end;
    }
    run.groups.push_back({pos, end});
    size_t next = 0;
    const char kind = read_joint(t, end, next);
    if (kind == '\0') {
      pos = end;
      break;
    }
    run.joints.push_back(kind);
    pos = next;
  }
  const char after = char_at(t, pos);
  const auto is_x = [](char c) { return c == 'X' || c == 'x'; };
  run.check_x = is_x(after) && !is_alnum(char_at(t, pos + 1));
  run.attached_after = !run.check_x && is_alnum(after);
  run.x_end = 0;
  if (run.check_x) {
    run.x_end = pos + 1;
  } else if ((after == ' ' || after == '-') && is_x(char_at(t, pos + 1)) &&
             !is_alnum(char_at(t, pos + 2))) {
    run.x_end = pos + 2;  // "0 0 2 X": spaced out like the digits
  }
  return run.check_x ? pos + 1 : pos;
}

// --- IPv4: four dot-joined octets, nothing dotted around them, not a version number

bool follows_version_word(std::string_view t, size_t pos) {
  size_t word_end = pos;
  while (word_end > 0 && (t[word_end - 1] == ' ' || t[word_end - 1] == ':')) {
    --word_end;
  }
  size_t word_begin = word_end;
  while (word_begin > 0 && is_alpha(t[word_begin - 1]) && word_end - word_begin < 10) {
    --word_begin;
  }
  if (is_alpha(char_before(t, word_begin))) {
    return false;
  }
  static constexpr std::array<std::string_view, 9> kVersionWords = {
      "v", "ver", "version", "release", "build", "firmware", "rev", "revision", "patch"};
  return std::any_of(kVersionWords.begin(), kVersionWords.end(), [&](std::string_view word) {
    return word.size() == word_end - word_begin && matches_word_at(t, word_begin, word);
  });
}

std::optional<NumberMatch> match_ipv4(const RunShape& s, size_t first) {
  const size_t last = first + 3;
  if (last >= s.size() || !s.opens_span(first, '.') || !s.closes_span(last, '.') ||
      !s.free_start(first) || !s.free_end(last)) {
    return std::nullopt;
  }
  const std::string_view t = s.text();
  std::array<int, 4> octets{};
  for (size_t g = first; g <= last; ++g) {
    const size_t n = s.length(g);
    const bool single_dot = g == last || (s.joint(g) == '.' && s.begin(g + 1) == s.end(g) + 1);
    if (n > 3 || (n > 1 && s.digit(g, 0) == '0') || !single_dot) {
      return std::nullopt;
    }
    octets[g - first] = leading_number(t.substr(s.begin(g)), n);
    if (octets[g - first] > 255) {
      return std::nullopt;
    }
  }
  // Addresses no one is reached at say nothing about anyone, nor do network ranges
  // ("81.2.69.0/24") or netmasks (255.255.255.0).
  const bool network = octets[3] == 0 && last + 1 < s.size() && s.joint(last) == '/';
  if (ipv4_not_globally_reachable(octets) || network) {
    return std::nullopt;
  }
  const bool prerelease = char_at(t, s.end(last)) == '-' && is_alpha(char_at(t, s.end(last) + 1));
  if (prerelease || follows_version_word(t, s.begin(first))) {
    return std::nullopt;
  }
  return NumberMatch{kIpAddress, last, s.begin(first), s.end(last), "*.*.*.*"};
}

// The first detector that accepts a window starting at group `first`. The checksummed ones go
// first: an 18-digit CN id that passes its checksum and date is not a card.
std::optional<NumberMatch> match_number(const RunShape& s, size_t first, const Enabled& on) {
  using Matcher = std::optional<NumberMatch> (*)(const RunShape&, size_t);
  static constexpr std::array<std::pair<Builtin, Matcher>, 5> kMatchers = {{
      {kCnResidentId, match_cn_resident_id},
      {kPaymentCard, match_card},
      {kUsSsn, match_us_ssn},
      {kPhone, match_phone},
      {kIpAddress, match_ipv4},
  }};
  for (const auto& [detector, matcher] : kMatchers) {
    if (on[detector]) {
      if (std::optional<NumberMatch> found = matcher(s, first)) {
        return found;
      }
    }
  }
  return std::nullopt;
}

bool detect_runs(std::string_view t, const Enabled& on, DigitRun& run, FindingSink& sink) {
  for (size_t i = next_digit(t, 0); i < t.size(); i = next_digit(t, i)) {
    const size_t next = read_run(t, i, run);
    const RunShape shape(t, run);
    for (size_t g = 0; g < run.size();) {
      std::optional<NumberMatch> found = match_number(shape, g, on);
      if (!found) {
        ++g;
        continue;
      }
      if (!sink.add(kBuiltinNames[found->detector], found->begin, found->end,
                    std::move(found->masked))) {
        return false;
      }
      g = found->last + 1;
    }
    i = next;
  }
  return true;
}

// The run buffers are reused across calls on one thread, so a warm scan allocates nothing.
DigitRun& thread_run() {
  thread_local DigitRun run;
  return run;
}

// One 200,000-character prompt must not pin megabytes to a worker thread for good.
void trim(DigitRun& run) {
  constexpr size_t kKeepBytes = size_t{1} << 16;
  if (run.groups.capacity() > kKeepBytes / sizeof(DigitGroup)) {
    run = DigitRun();
  }
}

}  // namespace

bool has_cue_before(std::string_view t, size_t pos, std::initializer_list<std::string_view> cues) {
  constexpr size_t kWindow = 48;
  for (size_t k = pos > kWindow ? pos - kWindow : 0; k < pos; ++k) {
    for (std::string_view cue : cues) {
      if (k + cue.size() <= pos && matches_word_at(t, k, cue)) {
        return true;
      }
    }
  }
  return false;
}

bool detect_numbers(std::string_view t, const Enabled& on, FindingSink& sink) {
  DigitRun& run = thread_run();
  const bool go_on = detect_runs(t, on, run, sink);
  trim(run);
  return go_on;
}

}  // namespace tandem::routing::privacy_detail
