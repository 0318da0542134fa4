#pragma once
// The configured detectors: the patterns and keyword lists of PrivacyRules, compiled with RE2
// once per scanner and shared by its copies. Apart from privacy_detectors.h because only this
// part and the scanner that owns it need RE2's headers.
//
// Internal to the routing library: see privacy_scanner.h for the contract.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>
#include <re2/set.h>

#include "common/result.h"
#include "routing/privacy_detectors.h"
#include "routing/privacy_scanner.h"

namespace tandem::routing::privacy_detail {

// Immutable once compiled: detect() may run concurrently from any number of threads.
class ConfiguredRules {
 public:
  // Compiles the patterns, then the keyword lists. Fails (kInvalidArgument, naming the pattern
  // or list) on an empty or duplicate name, a regex RE2 rejects or one that matches the empty
  // string, a list without words, or an empty word.
  Status compile(const std::vector<PrivacyPattern>& patterns,
                 const std::vector<KeywordList>& keyword_lists);

  // Every match of the patterns, then of the keyword lists, as "pattern:<name>" and
  // "keyword:<list name>" findings.
  void detect(std::string_view t, FindingSink& sink) const {
    detect_patterns(t, sink);
    detect_keywords(t, sink);
  }

 private:
  static constexpr size_t kPatternSetThreshold = 8;

  struct Pattern {
    std::string detector;  // "pattern:<name>"
    std::unique_ptr<RE2> regex;
  };

  Status compile_patterns(const std::vector<PrivacyPattern>& configured);
  Status compile_keywords(const std::vector<KeywordList>& lists);
  void detect_patterns(std::string_view t, FindingSink& sink) const;
  void detect_keywords(std::string_view t, FindingSink& sink) const;

  std::vector<Pattern> patterns_;
  std::unique_ptr<RE2::Set> pattern_set_;       // which patterns match at all, in one pass
  std::unique_ptr<RE2> keywords_;               // all lists; capture group k + 1 is list k
  std::vector<std::string> keyword_detectors_;  // "keyword:<name>", by list
};

}  // namespace tandem::routing::privacy_detail
