#pragma once
// The privacy signal of the router: finds data that must not leave the device (contact details,
// government ids, payment cards, bank accounts, machine addresses, credentials, and whatever the
// configuration adds) in prompt text. A query with a finding is pinned to the edge tier.
//
// Evasions are folded away before the detectors look: full-width forms (U+FF01-FF5E, U+3000),
// other Unicode spaces, dashes and digits become ASCII, ideographic full stops become '.',
// invisible characters (zero-width, soft hyphen, bidi controls, BOM) are dropped. Digits may be
// separated by spaces, dots, hyphens, slashes or underscores; e-mail addresses may spell out
// "[at]" and "[dot]". Offsets are always reported in the original text. Invalid UTF-8 is read as
// opaque bytes.
//
// Cost: linear in the text. For 2,000 characters of English prose without findings, about 6 µs of
// CPU with the built-in detectors (half of it the credential regex) and about 10 µs with two
// keyword lists and two patterns; 20,000 characters take about ten times as long.
//
// Thread-safety: a PrivacyScanner is immutable; scan() and first() may run concurrently on one
// instance from any number of threads. Copies are cheap and share the compiled rules.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tandem::routing {

// A configured detector, reported as "pattern:<name>". RE2 syntax (linear time: no
// backreferences, no lookaround), case-sensitive unless the regex says (?i). It runs on the
// folded text, so it sees ASCII where the prompt had full-width forms and never sees zero-width
// characters. The whole match is the finding.
struct PrivacyPattern {
  std::string name;
  std::string regex;
};

// Words whose presence alone makes a query private, e.g. "medical": {"diagnosis", "HIV"},
// reported as "keyword:<name>". Case-insensitive. A word of ASCII characters only matches as a
// whole word ("HIV" not in "ARCHIVE"); any other word matches anywhere, since CJK text has no
// spaces between words. Spaces inside a word match any run of white space. A word that is in
// several lists is reported for the first of them.
struct KeywordList {
  std::string name;
  std::vector<std::string> words;
};

struct PrivacyRules {
  std::vector<PrivacyPattern> patterns;
  std::vector<KeywordList> keyword_lists;
  // Names from PrivacyScanner::builtin_detectors() to switch off.
  std::vector<std::string> disabled_detectors;
};

struct PrivacyFinding {
  // A built-in name ("email", "phone", "payment_card", "us_ssn", "cn_resident_id", "iban",
  // "ip_address", "credential"), "pattern:<name>" or "keyword:<list name>".
  std::string detector;
  // The value's bytes in the ORIGINAL text, separators, full-width forms and invisible characters
  // inside the value included ("4111 1111 1111 1111", "john [at] example [dot] com"). For
  // "password=..." style assignments and bearer tokens: the secret only, not the key.
  size_t offset = 0;
  size_t length = 0;
  // A hint that is safe to log; it never holds more of the value than its last 4 digits:
  //   payment_card, phone:     "****1111"            us_ssn: "***-**-6789"
  //   cn_resident_id:          "****002X"            iban:   "DE****3000"
  //   email:                   "***@***.com" (neither the local part nor the domain name)
  //   ip_address:              "*.*.*.*" or "*:*:*:*"
  //   credential:              its kind: "aws_access_key", "openai_key", "github_token",
  //                            "slack_token", "google_api_key", "stripe_key", "jwt",
  //                            "private_key", "bearer_token", "secret_assignment"
  //   pattern:, keyword:       "***" (a keyword such as "HIV" is itself telling)
  std::string masked;
  // Where the finding sat in a JSON document (privacy_json.h): "messages[1].content",
  // "tools[0].function.description"; "" for plain text.
  std::string field;

  friend bool operator==(const PrivacyFinding&, const PrivacyFinding&) = default;
};

class PrivacyScanner {
 public:
  // Every built-in detector, nothing configured.
  PrivacyScanner();

  // Compiles the configured patterns and keyword lists. Fails (kInvalidArgument, naming the
  // pattern or list) on an empty or duplicate name, a regex RE2 rejects or one that matches the
  // empty string, a list without words, an empty word, or an unknown disabled detector.
  static Result<PrivacyScanner> create(const PrivacyRules& rules);

  // All findings, in text order (offset, then longer first, then detector name). A finding that
  // lies strictly inside another one (an IPv4 address inside an IPv6 one, the digits of an IBAN)
  // is dropped; findings of different detectors on the same bytes are all kept.
  std::vector<PrivacyFinding> scan(std::string_view text) const;

  // scan(text).front(), or nullopt: each detector stops at its first finding, since the router
  // only needs to know whether one exists and which.
  std::optional<PrivacyFinding> first(std::string_view text) const;

  // The built-in detector names, for validating configuration.
  static const std::vector<std::string>& builtin_detectors();

 private:
  struct Rules;  // the compiled configuration, shared by copies
  explicit PrivacyScanner(std::shared_ptr<const Rules> rules);

  std::shared_ptr<const Rules> rules_;
};

}  // namespace tandem::routing
