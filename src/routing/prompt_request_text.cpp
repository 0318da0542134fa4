#include "routing/prompt_request_text.h"

#include <algorithm>

#include "common/ascii.h"
#include "routing/request_spans.h"

namespace tandem::routing {
namespace {

constexpr size_t kNegationWindowBytes = 36;  // twelve Chinese characters
constexpr size_t kNegationWindowWords = 3;
constexpr std::string_view kEnNegations[] = {"not", "no",   "never", "without",
                                             "don", "dont", "avoid", "skip"};
constexpr std::string_view kZhNegations[] = {"不要", "不用", "无需", "无须",
                                             "不必", "请勿", "不需"};

bool is_english_negation(std::string_view word) {
  auto same = [](char a, char b) { return (a | 0x20) == b; };  // `word` is ASCII letters
  return std::any_of(std::begin(kEnNegations), std::end(kEnNegations), [&](std::string_view n) {
    return word.size() == n.size() && std::equal(word.begin(), word.end(), n.begin(), same);
  });
}

bool word_char(char c) {
  return is_ascii_alnum(static_cast<unsigned char>(c));
}

// How far back a parameter's opening quote is looked for: a tool header's values are short.
constexpr size_t kParameterValueBytes = 64;

bool inside_parameter_value(std::string_view text, size_t begin) {
  const size_t floor = begin > kParameterValueBytes ? begin - kParameterValueBytes : 0;
  for (size_t i = begin; i > floor; --i) {
    const char c = text[i - 1];
    if (c == '\n') {
      return false;
    }
    if (c == '"' || c == '\'') {
      return i >= 2 && text[i - 2] == '=';  // the nearest quote opens a value: `title="`
    }
  }
  return false;
}

}  // namespace

bool part_of_identifier(std::string_view text, size_t begin, size_t end) {
  if (begin > end || end > text.size()) {
    return false;
  }
  const char before = begin > 0 ? text[begin - 1] : ' ';
  const char after = end < text.size() ? text[end] : ' ';
  const bool joined_before =
      (before == '_' || before == '.') && begin >= 2 && word_char(text[begin - 2]);
  const bool joined_after =
      (after == '_' || after == '.') && end + 1 < text.size() && word_char(text[end + 1]);
  return joined_before || joined_after || after == '=' || after == '(' ||
         inside_parameter_value(text, begin);
}

double weighed_prompt_length(std::string_view text) {
  const TextSpan first = first_content_line(text);
  const TextSpan last = last_content_line(text);
  if (first.end >= last.begin) {
    return static_cast<double>(text.size());  // one line, or none
  }
  return weigh_material(text.size(), (first.end - first.begin) + (last.end - last.begin));
}

double weigh_material(size_t total, size_t request) {
  return static_cast<double>(request) +
         kMaterialLengthWeight * static_cast<double>(total - request);
}

bool task_negated_before(std::string_view text, size_t clause_start, size_t at) {
  if (at <= clause_start || at > text.size()) {
    return false;  // the cue opens its clause (or a run read after its clause closed: Thai)
  }
  const size_t begin =
      std::max(clause_start, at > kNegationWindowBytes ? at - kNegationWindowBytes : 0);
  const std::string_view before = text.substr(begin, at - begin);
  for (const std::string_view negation : kZhNegations) {
    if (before.find(negation) != std::string_view::npos) {
      return true;
    }
  }
  size_t end = before.size();
  for (size_t words = 0; words < kNegationWindowWords && end > 0;) {
    while (end > 0 && !is_ascii_letter(static_cast<unsigned char>(before[end - 1]))) {
      --end;
    }
    size_t start = end;
    while (start > 0 && is_ascii_letter(static_cast<unsigned char>(before[start - 1]))) {
      --start;
    }
    if (start == end) {
      break;
    }
    const std::string_view word = before.substr(start, end - start);
    if (is_english_negation(word)) {
      return true;
    }
    words += word.size() > 1 ? 1 : 0;  // the "t" of "don't"
    end = start;
  }
  return false;
}

}  // namespace tandem::routing
