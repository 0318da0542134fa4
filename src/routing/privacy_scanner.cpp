#include "routing/privacy_scanner.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "routing/privacy_detectors.h"
#include "routing/privacy_fold.h"
#include "routing/privacy_memo.h"
#include "routing/privacy_rules.h"

// How the scanner stays fast: the text is folded once into a per-thread buffer (and not at all
// when it is plain ASCII, the common case); the numeric detectors read digit runs by hand and
// check their checksums; e-mail, IPv6 and IBAN are hand-written scans anchored on characters
// that prose rarely has; RE2 (linear time, one DFA pass) runs the credential patterns, the
// keyword lists and the configured patterns.
//
// Where each part lives: folding in privacy_fold.cpp; the built-in detectors in
// privacy_numbers.cpp, privacy_id_numbers.cpp, privacy_phones.cpp, privacy_text.cpp,
// privacy_iban.cpp and privacy_credentials.cpp; the configured ones in privacy_rules.cpp. This
// file runs them and merges their findings.

namespace tandem::routing {
namespace privacy_detail {

// ---------------------------------------------------------------------------------------------
// Collecting findings

namespace {

bool comes_before(const PrivacyFinding& a, const PrivacyFinding& b) {
  if (a.offset != b.offset) {
    return a.offset < b.offset;
  }
  if (a.length != b.length) {
    return a.length > b.length;
  }
  return a.detector < b.detector;
}

}  // namespace

bool FindingSink::add(std::string_view detector, size_t begin, size_t end, std::string masked) {
  const auto [offset, length] = text_.original_span(begin, end);
  PrivacyFinding finding{std::string(detector), offset, length, std::move(masked), {}};
  if (!first_only_) {
    findings_.push_back(std::move(finding));
    return true;
  }
  if (!best_ || comes_before(finding, *best_)) {
    best_ = std::move(finding);
  }
  return false;
}

std::vector<PrivacyFinding> FindingSink::take_all() {
  std::sort(findings_.begin(), findings_.end(), comes_before);
  std::vector<PrivacyFinding> kept;
  size_t reach = 0;  // the furthest end of the spans sorted before the current one
  for (size_t i = 0; i < findings_.size();) {
    const size_t offset = findings_[i].offset;
    const size_t end = offset + findings_[i].length;
    // A span sorted earlier that reaches this far starts no later and is longer.
    const bool contained = reach >= end;
    size_t j = i;
    for (; j < findings_.size() && findings_[j].offset == offset &&
           findings_[j].offset + findings_[j].length == end;
         ++j) {
      const bool duplicate = j > i && !kept.empty() && kept.back() == findings_[j];
      if (!contained && !duplicate) {
        kept.push_back(std::move(findings_[j]));
      }
    }
    reach = std::max(reach, end);
    i = j;
  }
  return kept;
}

// ---------------------------------------------------------------------------------------------
// Running the detectors

namespace {

Error unknown_detector(const std::string& name) {
  std::string message = "unknown built-in privacy detector '" + name + "' (known: ";
  for (size_t k = 0; k < kBuiltinNames.size(); ++k) {
    message += k > 0 ? ", " : "";
    message += kBuiltinNames[k];
  }
  return make_error(ErrorCode::kInvalidArgument, message + ")");
}

// Every built-in detector but the disabled ones.
Result<Enabled> enabled_builtins(const std::vector<std::string>& disabled) {
  Enabled enabled{};
  enabled.fill(true);
  for (const std::string& name : disabled) {
    const auto* it = std::find(kBuiltinNames.begin(), kBuiltinNames.end(), name);
    if (it == kBuiltinNames.end()) {
      return unknown_detector(name);
    }
    enabled[static_cast<size_t>(it - kBuiltinNames.begin())] = false;
  }
  return enabled;
}

void detect_builtins(const Enabled& enabled, std::string_view t, FindingSink& sink) {
  if (enabled[kEmail]) {
    detect_emails(t, sink);
  }
  if (enabled[kIban]) {
    detect_ibans(t, sink);
  }
  if (enabled[kIpAddress]) {
    detect_ipv6(t, sink);
  }
  if (enabled[kPaymentCard] || enabled[kUsSsn] || enabled[kCnResidentId] || enabled[kPhone] ||
      enabled[kIpAddress]) {
    detect_numbers(t, enabled, sink);
  }
  if (enabled[kCredential]) {
    detect_credentials(t, sink);
  }
}

// Offsets into the folded text are 32-bit; a longer prompt is scanned in its first 4 GiB.
std::string_view scannable(std::string_view text) {
  return text.substr(0, std::min<size_t>(text.size(), std::numeric_limits<uint32_t>::max()));
}

}  // namespace
}  // namespace privacy_detail

using privacy_detail::ConfiguredRules;
using privacy_detail::detect_builtins;
using privacy_detail::Enabled;
using privacy_detail::enabled_builtins;
using privacy_detail::FindingSink;
using privacy_detail::FoldedText;
using privacy_detail::kBuiltinNames;
using privacy_detail::known_clean;
using privacy_detail::remember_clean;
using privacy_detail::scannable;
using privacy_detail::Scratch;
using privacy_detail::thread_scratch;

// ---------------------------------------------------------------------------------------------
// PrivacyScanner

struct PrivacyScanner::Rules {
  // Unique for the process's life (never reused, unlike an address): the memo's key.
  uint64_t id = next_id();
  Enabled enabled{};
  ConfiguredRules configured;

  static uint64_t next_id() {
    static std::atomic<uint64_t> last{0};
    return ++last;
  }

  static Result<std::shared_ptr<const Rules>> compile(const PrivacyRules& config) {
    Result<Enabled> enabled = enabled_builtins(config.disabled_detectors);
    if (!enabled) {
      return enabled.error();
    }
    auto rules = std::make_shared<Rules>();
    rules->enabled = enabled.value();
    if (Status status = rules->configured.compile(config.patterns, config.keyword_lists); !status) {
      return status.error();
    }
    return std::shared_ptr<const Rules>(std::move(rules));
  }

  void detect(std::string_view t, FindingSink& sink) const {
    detect_builtins(enabled, t, sink);
    configured.detect(t, sink);
  }
};

PrivacyScanner::PrivacyScanner() {
  static const std::shared_ptr<const Rules> defaults = Rules::compile(PrivacyRules{}).value();
  rules_ = defaults;
}

PrivacyScanner::PrivacyScanner(std::shared_ptr<const Rules> rules) : rules_(std::move(rules)) {}

Result<PrivacyScanner> PrivacyScanner::create(const PrivacyRules& rules) {
  Result<std::shared_ptr<const Rules>> compiled = Rules::compile(rules);
  if (!compiled) {
    return compiled.error();
  }
  return PrivacyScanner(std::move(compiled).value());
}

std::vector<PrivacyFinding> PrivacyScanner::scan(std::string_view text) const {
  if (!rules_) {
    return {};  // moved from
  }
  if (known_clean(rules_->id, text)) {
    return {};
  }
  Scratch& scratch = thread_scratch();
  const FoldedText folded(scannable(text), scratch);
  FindingSink sink(folded, /*first_only=*/false);
  rules_->detect(folded.text(), sink);
  std::vector<PrivacyFinding> findings = sink.take_all();
  scratch.trim();
  if (findings.empty()) {
    remember_clean(rules_->id, text);
  }
  return findings;
}

std::optional<PrivacyFinding> PrivacyScanner::first(std::string_view text) const {
  if (!rules_) {
    return std::nullopt;  // moved from
  }
  if (known_clean(rules_->id, text)) {
    return std::nullopt;
  }
  Scratch& scratch = thread_scratch();
  const FoldedText folded(scannable(text), scratch);
  FindingSink sink(folded, /*first_only=*/true);
  rules_->detect(folded.text(), sink);
  std::optional<PrivacyFinding> finding = sink.take_first();
  scratch.trim();
  if (!finding) {
    remember_clean(rules_->id, text);
  }
  return finding;
}

const std::vector<std::string>& PrivacyScanner::builtin_detectors() {
  static const std::vector<std::string> names(kBuiltinNames.begin(), kBuiltinNames.end());
  return names;
}

}  // namespace tandem::routing
