#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <re2/re2.h>

#include "routing/privacy_detectors.h"

namespace tandem::routing::privacy_detail {

// ---------------------------------------------------------------------------------------------
// Credentials: one RE2 alternation with a capture group per kind, each match validated after

namespace {

enum class SecretCheck {
  kNone,         // the pattern is precise enough on its own
  kRandom,       // the token must mix letters and digits, which placeholders do not
  kSecretValue,  // an assigned value: see looks_like_secret()
};

struct CredentialKind {
  const char* name;
  // No capturing groups, except one around the secret where value_group is set. A match is
  // ASCII, starts with two ASCII letters in a row or reaches them before any other byte, and
  // only a secret assignment's value may hold non-ASCII: CredentialMatcher's windows rely on it.
  const char* regex;
  bool value_group;
  SecretCheck check;
};

constexpr std::array<CredentialKind, 10> kCredentialKinds = {{
    // The header only; the block's END line is found by hand (a lazy ".*?" up to it would
    // rescan the rest of the text for every header that has none).
    {"private_key", R"(-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)", false,
     SecretCheck::kNone},
    {"aws_access_key", R"(\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b)", false, SecretCheck::kNone},
    {"openai_key", R"(\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})", false,
     SecretCheck::kRandom},
    {"github_token", R"(\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}))", false,
     SecretCheck::kRandom},
    {"slack_token", R"(\bxox[abposr]-[A-Za-z0-9-]{10,})", false, SecretCheck::kRandom},
    {"google_api_key", R"(\bAIza[0-9A-Za-z_-]{35})", false, SecretCheck::kRandom},
    {"stripe_key", R"(\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,})", false, SecretCheck::kRandom},
    {"jwt", R"(\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})", false,
     SecretCheck::kNone},
    {"bearer_token", R"((?i:\bbearer)\s+([A-Za-z0-9._~+/-]{16,}=*))", true, SecretCheck::kRandom},
    // password=..., "api_key": "...", DB_PASSWORD: ...; the finding is the value.
    {"secret_assignment",
     R"((?i:\b(?:[a-z0-9]+[_.-])*(?:password|passwd|pwd|passphrase|secret|secret[_-]?key|)"
     R"(api[_-]?key|apikey|access[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|)"
     R"(refresh[_-]?token|private[_-]?key))["']?\s*[:=]\s*["']?([^\s"'`<>,;(){}\[\]]+))",
     true, SecretCheck::kSecretValue},
}};

constexpr size_t kPrivateKeyKind = 0;

bool mixes_letters_and_digits(std::string_view value) {
  return std::any_of(value.begin(), value.end(), is_digit) &&
         std::any_of(value.begin(), value.end(), is_alpha);
}

// A value worth protecting: not a placeholder, not a reference to somewhere else, not code.
bool looks_like_secret(std::string_view value, char after) {
  // Judge the value without trailing sentence punctuation: "password: strong?" is prose.
  while (!value.empty() &&
         std::string_view(".,;:!?").find(value.back()) != std::string_view::npos) {
    value.remove_suffix(1);
  }
  if (value.size() < 6 || value.size() > 256 || after == '(' || after == '[') {
    return false;  // too short to be one, or a call or an index expression
  }
  const char head = value.front();
  if (head == '$' || head == '%' || head == '*' || head == '.' ||
      std::all_of(value.begin(), value.end(), [&](char c) { return c == head; })) {
    return false;  // ${ENV}, %VAR%, ******, xxxxxx
  }
  std::string lower(value);
  std::transform(lower.begin(), lower.end(), lower.begin(), to_lower);
  static constexpr std::array<std::string_view, 12> kNotSecrets = {
      "none",   "null",     "undefined", "required",    "optional", "redacted",
      "hidden", "password", "secret",    "placeholder", "example",  "changeme"};
  const auto has = [&](std::string_view part) { return lower.find(part) != std::string::npos; };
  if (std::find(kNotSecrets.begin(), kNotSecrets.end(), lower) != kNotSecrets.end() ||
      has("environ") || has("getenv") || has("process.env") || has("...") ||
      lower.rfind("your", 0) == 0) {
    return false;
  }
  const int classes =
      int{std::any_of(value.begin(), value.end(), is_lower)} +
      int{std::any_of(value.begin(), value.end(), is_upper)} +
      int{std::any_of(value.begin(), value.end(), is_digit)} +
      int{std::any_of(value.begin(), value.end(), [](char c) { return !is_word(c); })};
  return classes >= 2 || value.size() >= 16;
}

// The end of the private key block whose header ends at `header_end`: past its END line, or the
// header's end if it has none. Searches resume where the last one stopped, so many headers
// without an END line cost one pass, not one each.
class PrivateKeyEnds {
 public:
  explicit PrivateKeyEnds(std::string_view t) : t_(t) {}

  size_t block_end(size_t header_end) {
    // An END line before this header belongs to an earlier block; none at all stays none.
    if (!searched_ || (next_end_ != std::string_view::npos && next_end_ < header_end)) {
      searched_ = true;
      next_end_ = t_.find("-----END", header_end);
    }
    if (next_end_ == std::string_view::npos) {
      return header_end;
    }
    const size_t label_end = t_.find("-----", next_end_ + 8);
    const bool private_key =
        label_end != std::string_view::npos && label_end - next_end_ <= 64 &&
        t_.substr(next_end_, label_end - next_end_).find("PRIVATE KEY") != std::string_view::npos;
    return private_key ? label_end + 5 : header_end;
  }

 private:
  std::string_view t_;
  bool searched_ = false;
  size_t next_end_ = std::string_view::npos;  // the next "-----END" at or after the last search
};

class CredentialMatcher {
 public:
  CredentialMatcher() {
    std::string combined;
    int group = 1;
    for (size_t k = 0; k < kCredentialKinds.size(); ++k) {
      const CredentialKind& kind = kCredentialKinds[k];
      combined += combined.empty() ? "(" : "|(";
      combined += kind.regex;
      combined += ")";
      groups_[k] = {group, kind.value_group ? group + 1 : 0};
      group += kind.value_group ? 2 : 1;
    }
    match_count_ = group;
    RE2::Options options;
    options.set_log_errors(false);
    regex_ = std::make_unique<RE2>(combined, options);
  }

  bool ok() const { return regex_->ok() && match_count_ <= static_cast<int>(kMaxGroups); }

  // The regex runs only over windows of the text that can hold a credential, not over all of
  // it: in CJK prose that is a few English words among thousands of bytes the DFA would
  // otherwise step through one by one.
  bool detect(std::string_view t, FindingSink& sink) const {
    if (!ok()) {
      return true;  // cannot happen: the patterns are constants, and a test compiles them
    }
    PrivateKeyEnds private_key_ends(t);
    size_t pos = 0;
    for (Window window = next_window(t, 0); window.begin < t.size();
         window = next_window(t, std::max(window.end, pos))) {
      pos = std::max(pos, window.begin);
      if (!detect_in(t, window.end, pos, private_key_ends, sink)) {
        return false;
      }
    }
    return true;
  }

 private:
  static constexpr size_t kMaxGroups = 2 * kCredentialKinds.size() + 1;

  // Where a credential may be. Every kind is ASCII and holds two ASCII letters in a row ("sk-",
  // "eyJ", "pwd="), except a secret assignment's value, which may hold any bytes up to a
  // delimiter ([^\s"'`<>,;(){}\[\]]+) and starts after the ":" or "=" of its run. So a match
  // starts in a run of ASCII bytes with two letters in a row, and reaches at most to that run's
  // end or, when the run has ":" or "=", to the end of the value that may follow it. A window
  // covers such runs and their reach; runs close together share one.
  struct Window {
    size_t begin;
    size_t end;
  };

  struct Run {
    size_t begin;
    size_t end;
    size_t reach;  // how far a match that starts in the run may go
    bool lettered;
  };

  static bool is_ascii_byte(char c) { return static_cast<unsigned char>(c) < 0x80; }

  static bool ends_value(char c) {
    return std::string_view(" \t\n\f\r\"'`<>,;(){}[]").find(c) != std::string_view::npos;
  }

  // The first byte at or after i that is ASCII; eight bytes at a time through CJK text.
  static size_t next_ascii(std::string_view t, size_t i) {
    while (i < t.size()) {
      if (t.size() - i >= 8) {
        uint64_t word;
        std::memcpy(&word, t.data() + i, sizeof word);
        if ((word & kHighs) == kHighs) {
          i += 8;
          continue;
        }
      }
      if (is_ascii_byte(t[i])) {
        return i;
      }
      ++i;
    }
    return t.size();
  }

  // The run of ASCII bytes at or after `from` (from its start when `from` is inside one).
  static Run next_run(std::string_view t, size_t from) {
    Run run{next_ascii(t, from), 0, 0, false};
    bool glue = false;
    size_t i = run.begin;
    for (; i < t.size() && is_ascii_byte(t[i]) && !run.lettered; ++i) {
      run.lettered = i > run.begin && is_alpha(t[i]) && is_alpha(t[i - 1]);
      glue = glue || t[i] == ':' || t[i] == '=';
    }
    // The rest of a run, eight bytes at a time: English text is one long run.
    while (i < t.size()) {
      if (t.size() - i >= 8) {
        uint64_t word;
        std::memcpy(&word, t.data() + i, sizeof word);
        if ((word & kHighs) == 0) {
          glue = glue || has_byte(word, ':') || has_byte(word, '=');
          i += 8;
          continue;
        }
      }
      if (!is_ascii_byte(t[i])) {
        break;
      }
      glue = glue || t[i] == ':' || t[i] == '=';
      ++i;
    }
    run.end = i;
    run.reach = i;
    if (run.lettered && glue) {
      while (run.reach < t.size() && !ends_value(t[run.reach])) {
        ++run.reach;
      }
    }
    return run;
  }

  // The first window at or after `from`; begin == t.size() when there is none. A lettered run
  // that starts inside the window widens it to its reach, so a window never ends inside one.
  static Window next_window(std::string_view t, size_t from) {
    constexpr size_t kShortGap = 32;  // non-ASCII bytes the regex reads rather than restart
    Window window{t.size(), t.size()};
    for (Run run = next_run(t, from); run.begin < t.size(); run = next_run(t, run.end)) {
      if (window.begin == t.size()) {
        if (run.lettered) {
          window = {run.begin, run.reach};
        }
        continue;
      }
      if (run.begin >= window.end && run.begin - window.end >= kShortGap) {
        break;
      }
      if (run.lettered) {
        window.end = std::max(window.end, run.reach);
      }
    }
    return window;
  }

  // The matches that start in [pos, end); pos is left past the last one. False: the sink has
  // what it needs.
  bool detect_in(std::string_view t, size_t end_of_window, size_t& pos,
                 PrivateKeyEnds& private_key_ends, FindingSink& sink) const {
    std::array<re2::StringPiece, kMaxGroups> match;
    const re2::StringPiece text(t.data(), t.size());
    while (pos < end_of_window) {
      if (!regex_->Match(text, pos, end_of_window, RE2::UNANCHORED, match.data(), match_count_)) {
        pos = end_of_window;
        return true;
      }
      const size_t kind = kind_of(match);
      const re2::StringPiece& whole = match[0];
      const re2::StringPiece& value =
          groups_[kind].value != 0 ? match[static_cast<size_t>(groups_[kind].value)] : whole;
      const auto begin = static_cast<size_t>(value.data() - t.data());
      size_t end = begin + value.size();
      pos = static_cast<size_t>(whole.data() - t.data()) + std::max<size_t>(whole.size(), 1);
      if (!accept(kind, std::string_view(value.data(), value.size()), char_at(t, end))) {
        continue;
      }
      if (kind == kPrivateKeyKind) {
        end = private_key_ends.block_end(end);
        pos = end;
      }
      if (!sink.add(kBuiltinNames[kCredential], begin, end, kCredentialKinds[kind].name)) {
        return false;
      }
    }
    return true;
  }

  struct Groups {
    int whole = 0;
    int value = 0;  // 0: none
  };

  size_t kind_of(const std::array<re2::StringPiece, kMaxGroups>& match) const {
    for (size_t kind = 0; kind < groups_.size(); ++kind) {
      if (match[static_cast<size_t>(groups_[kind].whole)].data() != nullptr) {
        return kind;
      }
    }
    return 0;
  }

  static bool accept(size_t kind, std::string_view value, char after) {
    switch (kCredentialKinds[kind].check) {
      case SecretCheck::kNone:
        return true;
      case SecretCheck::kRandom:
        return mixes_letters_and_digits(value);
      case SecretCheck::kSecretValue:
        return looks_like_secret(value, after);
    }
    return false;
  }

  std::unique_ptr<RE2> regex_;
  std::array<Groups, kCredentialKinds.size()> groups_{};
  int match_count_ = 0;
};

const CredentialMatcher& credential_matcher() {
  static const CredentialMatcher matcher;
  return matcher;
}

}  // namespace

bool detect_credentials(std::string_view t, FindingSink& sink) {
  return credential_matcher().detect(t, sink);
}

}  // namespace tandem::routing::privacy_detail
