// The privacy scanner over arbitrary prompt bytes (invalid UTF-8 included): with every built-in
// detector, and with configured patterns, keyword lists and a disabled detector. The contract
// in privacy_scanner.h is checked on every result.

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz/fuzz_targets.h"
#include "fuzz/property_check.h"
#include "routing/privacy_scanner.h"

namespace tandem::fuzz {
namespace {

using routing::PrivacyFinding;
using routing::PrivacyScanner;

const PrivacyScanner& configured_scanner() {
  static const PrivacyScanner scanner = [] {
    routing::PrivacyRules rules;
    rules.patterns = {{"employee_id", "EMP-[0-9]{6}"}, {"project", "(?i)project\\s+falcon"}};
    rules.keyword_lists = {{"medical", {"diagnosis", "HIV", "病历"}},
                           {"legal", {"attorney client", "lawsuit"}}};
    rules.disabled_detectors = {"ip_address"};
    return PrivacyScanner::create(rules).value();
  }();
  return scanner;
}

bool known_detector(const std::string& detector, bool configured) {
  const auto& builtins = PrivacyScanner::builtin_detectors();
  if (std::find(builtins.begin(), builtins.end(), detector) != builtins.end()) {
    return !configured || detector != "ip_address";
  }
  if (!configured) {
    return false;
  }
  for (const char* name :
       {"pattern:employee_id", "pattern:project", "keyword:medical", "keyword:legal"}) {
    if (detector == name) {
      return true;
    }
  }
  return false;
}

// The kinds a credential finding is masked as (privacy_scanner.h).
bool credential_kind(const std::string& masked) {
  for (const char* kind :
       {"aws_access_key", "openai_key", "github_token", "slack_token", "google_api_key",
        "stripe_key", "jwt", "private_key", "bearer_token", "secret_assignment"}) {
    if (masked == kind) {
      return true;
    }
  }
  return false;
}

bool comes_before(const PrivacyFinding& a, const PrivacyFinding& b) {
  if (a.offset != b.offset) {
    return a.offset < b.offset;
  }
  if (a.length != b.length) {
    return a.length > b.length;
  }
  return a.detector < b.detector;
}

void check_findings(std::string_view text, const std::vector<PrivacyFinding>& findings,
                    bool configured) {
  for (size_t i = 0; i < findings.size(); ++i) {
    const PrivacyFinding& f = findings[i];
    FUZZ_CHECK_MSG(known_detector(f.detector, configured), f.detector);
    FUZZ_CHECK(f.length > 0);
    FUZZ_CHECK_MSG(f.offset <= text.size() && f.length <= text.size() - f.offset,
                   f.detector + " at " + std::to_string(f.offset) + "+" + std::to_string(f.length));
    // The hint is safe to log: at most the last 4 digits, never the value itself.
    const auto digits = std::count_if(f.masked.begin(), f.masked.end(),
                                      [](char c) { return c >= '0' && c <= '9'; });
    FUZZ_CHECK_MSG(digits <= 4, f.detector + " masked as " + f.masked);
    if (f.detector == "credential") {
      // Its hint is its kind, a fixed label: it tells nothing of the value even where the value
      // happens to be part of the label ("password = ecret_assignment").
      FUZZ_CHECK_MSG(credential_kind(f.masked), "credential masked as " + f.masked);
    } else if (f.length > 4) {
      FUZZ_CHECK_MSG(f.masked.find(text.substr(f.offset, f.length)) == std::string::npos,
                     f.detector + " masked as " + f.masked);
    }
    if (i > 0) {
      FUZZ_CHECK(!comes_before(f, findings[i - 1]));
    }
  }
  // None lies strictly inside another (the findings are few: quadratic is fine).
  for (const auto& inner : findings) {
    for (const auto& outer : findings) {
      const bool inside = outer.offset <= inner.offset &&
                          inner.offset + inner.length <= outer.offset + outer.length;
      const bool same_span = outer.offset == inner.offset && outer.length == inner.length;
      FUZZ_CHECK_MSG(!inside || same_span, inner.detector + " inside " + outer.detector);
    }
  }
}

std::vector<PrivacyFinding> scan_checked(const PrivacyScanner& scanner, std::string_view text,
                                         bool configured) {
  std::vector<PrivacyFinding> findings = scanner.scan(text);
  check_findings(text, findings, configured);
  // first() is scan().front(), found with early exits.
  const std::optional<PrivacyFinding> first = scanner.first(text);
  FUZZ_CHECK(first.has_value() == !findings.empty());
  if (first) {
    FUZZ_CHECK_MSG(*first == findings.front(),
                   first->detector + "@" + std::to_string(first->offset) + " vs " +
                       findings.front().detector + "@" + std::to_string(findings.front().offset));
  }
  return findings;
}

}  // namespace

void fuzz_privacy_scan(const uint8_t* data, size_t size) {
  const std::string_view text = as_text(data, size);
  static const PrivacyScanner builtin;
  const auto findings = scan_checked(builtin, text, /*configured=*/false);
  (void)scan_checked(configured_scanner(), text, /*configured=*/true);
  // The per-thread scratch buffers carry nothing from one scan to the next.
  FUZZ_CHECK(builtin.scan(text) == findings);
}

}  // namespace tandem::fuzz
