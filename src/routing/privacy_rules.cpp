#include "routing/privacy_rules.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

// The configured detectors: each pattern is its own RE2 (a set says which to run when there are
// many); all keyword lists are one case-insensitive alternation with a capture group per list.

namespace tandem::routing::privacy_detail {
namespace {

// Every non-empty match of `regex`, in order.
bool detect_regex(const RE2& regex, std::string_view t, std::string_view detector,
                  FindingSink& sink) {
  const re2::StringPiece text(t.data(), t.size());
  re2::StringPiece match;
  for (size_t pos = 0; pos <= t.size();) {
    if (!regex.Match(text, pos, t.size(), RE2::UNANCHORED, &match, 1)) {
      break;
    }
    const auto begin = static_cast<size_t>(match.data() - t.data());
    const size_t end = begin + match.size();
    if (end == begin) {
      pos = begin + 1;
      continue;
    }
    if (!sink.add(detector, begin, end, "***")) {
      return false;
    }
    pos = end;
  }
  return true;
}

std::string trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) {
    return {};
  }
  const size_t end = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(begin, end - begin + 1));
}

// A configured word as the folded text will show it ("ＨＩＶ" is "HIV").
std::string fold_word(std::string_view word) {
  Scratch scratch;
  const FoldedText folded(word, scratch);
  return trim(folded.text());
}

// The keyword regex's alternative for one folded word: a whole word for ASCII words, anywhere
// for the others; spaces inside match any white space.
std::string keyword_regex(std::string_view word) {
  std::vector<std::string> parts;
  for (size_t begin = 0; begin < word.size();) {
    size_t end = word.find(' ', begin);
    end = end == std::string_view::npos ? word.size() : end;
    if (end > begin) {
      parts.push_back(RE2::QuoteMeta(re2::StringPiece(word.data() + begin, end - begin)));
    }
    begin = end + 1;
  }
  std::string regex;
  const bool whole_word = is_ascii(word);
  if (whole_word && is_word(word.front())) {
    regex += "\\b";
  }
  for (size_t k = 0; k < parts.size(); ++k) {
    regex += (k > 0 ? "\\s+" : "") + parts[k];
  }
  if (whole_word && is_word(word.back())) {
    regex += "\\b";
  }
  return regex;
}

Error invalid(std::string message) {
  return make_error(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace

Status ConfiguredRules::compile(const std::vector<PrivacyPattern>& patterns,
                                const std::vector<KeywordList>& keyword_lists) {
  if (Status status = compile_patterns(patterns); !status) {
    return status;
  }
  return compile_keywords(keyword_lists);
}

Status ConfiguredRules::compile_patterns(const std::vector<PrivacyPattern>& configured) {
  RE2::Options options;
  options.set_log_errors(false);
  auto set = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
  for (const PrivacyPattern& pattern : configured) {
    const std::string detector = "pattern:" + pattern.name;
    if (pattern.name.empty()) {
      return invalid("a privacy pattern has no name (regex '" + pattern.regex + "')");
    }
    if (std::any_of(patterns_.begin(), patterns_.end(),
                    [&](const Pattern& known) { return known.detector == detector; })) {
      return invalid("privacy pattern '" + pattern.name + "' is defined twice");
    }
    auto regex = std::make_unique<RE2>(pattern.regex, options);
    if (!regex->ok()) {
      return invalid("privacy pattern '" + pattern.name + "': invalid regex '" + pattern.regex +
                     "': " + regex->error());
    }
    if (RE2::FullMatch("", *regex)) {
      return invalid("privacy pattern '" + pattern.name + "' matches the empty string");
    }
    set->Add(pattern.regex, nullptr);
    patterns_.push_back({detector, std::move(regex)});
  }
  // A pattern with a literal prefix ("EMP-[0-9]{6}") runs at memchr speed on its own, so a
  // set (one DFA pass, ~2 ns a byte) that says which patterns to run at all pays off only
  // when there are many.
  if (patterns_.size() >= kPatternSetThreshold && set->Compile()) {
    pattern_set_ = std::move(set);
  }
  return {};
}

Status ConfiguredRules::compile_keywords(const std::vector<KeywordList>& lists) {
  std::string combined = "(?i)";
  for (const KeywordList& list : lists) {
    const std::string detector = "keyword:" + list.name;
    if (list.name.empty()) {
      return invalid("a keyword list has no name");
    }
    if (std::find(keyword_detectors_.begin(), keyword_detectors_.end(), detector) !=
        keyword_detectors_.end()) {
      return invalid("keyword list '" + list.name + "' is defined twice");
    }
    if (list.words.empty()) {
      return invalid("keyword list '" + list.name + "' has no words");
    }
    std::vector<std::string> alternatives;
    for (size_t k = 0; k < list.words.size(); ++k) {
      const std::string word = fold_word(list.words[k]);
      if (word.empty()) {
        return invalid("keyword list '" + list.name + "': word " + std::to_string(k + 1) +
                       " is empty");
      }
      alternatives.push_back(keyword_regex(word));
    }
    // Longer words first, so that "HIV positive" wins over "HIV" where both match.
    std::stable_sort(
        alternatives.begin(), alternatives.end(),
        [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    combined += keyword_detectors_.empty() ? "(" : "|(";
    for (size_t k = 0; k < alternatives.size(); ++k) {
      combined += (k > 0 ? "|" : "") + alternatives[k];
    }
    combined += ")";
    keyword_detectors_.push_back(detector);
  }
  if (keyword_detectors_.empty()) {
    return {};
  }
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(int64_t{64} << 20);  // room for large lists
  keywords_ = std::make_unique<RE2>(combined, options);
  if (!keywords_->ok()) {
    return invalid("keyword lists do not compile: " + keywords_->error());
  }
  return {};
}

void ConfiguredRules::detect_patterns(std::string_view t, FindingSink& sink) const {
  if (patterns_.empty()) {
    return;
  }
  std::vector<int> matched;
  if (pattern_set_) {
    RE2::Set::ErrorInfo error{};
    if (!pattern_set_->Match(re2::StringPiece(t.data(), t.size()), &matched, &error) &&
        error.kind == RE2::Set::kNoError) {
      return;  // none matches
    }
  }
  if (matched.empty()) {  // few patterns, or the set ran out of memory: try each
    for (size_t k = 0; k < patterns_.size(); ++k) {
      matched.push_back(static_cast<int>(k));
    }
  }
  for (int k : matched) {
    const Pattern& pattern = patterns_[static_cast<size_t>(k)];
    detect_regex(*pattern.regex, t, pattern.detector, sink);
  }
}

void ConfiguredRules::detect_keywords(std::string_view t, FindingSink& sink) const {
  if (!keywords_) {
    return;
  }
  std::vector<re2::StringPiece> match(keyword_detectors_.size() + 1);
  const re2::StringPiece text(t.data(), t.size());
  for (size_t pos = 0; pos < t.size();) {
    if (!keywords_->Match(text, pos, t.size(), RE2::UNANCHORED, match.data(),
                          static_cast<int>(match.size()))) {
      return;
    }
    const auto begin = static_cast<size_t>(match[0].data() - t.data());
    const size_t end = begin + match[0].size();
    pos = std::max(end, begin + 1);
    size_t list = 0;
    while (list + 1 < match.size() && match[list + 1].data() == nullptr) {
      ++list;
    }
    if (end > begin && list < keyword_detectors_.size() &&
        !sink.add(keyword_detectors_[list], begin, end, "***")) {
      return;
    }
  }
}

}  // namespace tandem::routing::privacy_detail
