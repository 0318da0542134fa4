#include "routing/request_spans.h"

#include <algorithm>
#include <array>

#include "common/ascii.h"
#include "common/utf8.h"

namespace tandem::routing {
namespace {

// A line longer than this many characters is material, as in the cue scan
// (kMaxInstructionLineChars in prompt_scanner.cpp): its first or last sentence is the request.
constexpr size_t kMaxRequestLineChars = 400;

bool is_blank(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

size_t count_chars(std::string_view text) {
  size_t chars = 0;
  for (const char c : text) {
    chars += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
  }
  return chars;
}

// Whether a line is at most kMaxRequestLineChars characters; counts only when the byte length
// cannot tell (a character is one to four bytes).
bool short_line(std::string_view line) {
  if (line.size() <= kMaxRequestLineChars) {
    return true;
  }
  return line.size() <= 4 * kMaxRequestLineChars && count_chars(line) <= kMaxRequestLineChars;
}

// The lead bytes of what add_request looks for: ':' and '：' (EF BC 9A), the ASCII quotes, and
// the quotation marks of U+2018..U+201D (E2 80 ..) and U+300C..U+300F (E3 80 ..). Chinese
// ideographs (E4..E9) and ASCII letters are skipped with one load each.
constexpr std::array<bool, 256> kMarkerLead = [] {
  std::array<bool, 256> table{};
  for (const int c : {int{':'}, int{'"'}, int{'\''}, 0xe2, 0xe3, 0xef}) {
    table[c] = true;
  }
  return table;
}();

size_t next_marker(std::string_view text, size_t i, size_t end) {
  while (i < end && !kMarkerLead[static_cast<unsigned char>(text[i])]) {
    ++i;
  }
  return i;
}

bool blank_line(std::string_view text, TextSpan line) {
  for (size_t i = line.begin; i < line.end; ++i) {
    if (!is_blank(static_cast<unsigned char>(text[i]))) {
      return false;
    }
  }
  return true;
}

// The length of a sentence terminator at text[i] (". " "? " "! ", 。？！, the Arabic ؟ and ۔,
// the Devanagari । and ॥), else 0.
size_t terminator_at(std::string_view text, size_t i, size_t end) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c == '.' || c == '?' || c == '!') {
    return i + 1 == end || is_blank(static_cast<unsigned char>(text[i + 1])) ? 1 : 0;
  }
  if (c < 0xd8) {
    return 0;  // ASCII letters, Latin, Cyrillic: most bytes
  }
  if (i + 2 <= end) {
    const std::string_view two = text.substr(i, 2);
    if (two == "\xd8\x9f" || two == "\xdb\x94") {
      return 2;
    }
  }
  if (i + 3 <= end) {
    const std::string_view three = text.substr(i, 3);
    if (three == "\xe3\x80\x82" || three == "\xef\xbc\x9f" || three == "\xef\xbc\x81" ||
        three == "\xe0\xa5\xa4" || three == "\xe0\xa5\xa5") {
      return 3;
    }
  }
  return 0;
}

TextSpan first_sentence(std::string_view text, TextSpan line) {
  for (size_t i = line.begin; i < line.end; ++i) {
    const size_t length = terminator_at(text, i, line.end);
    if (length > 0) {
      return {line.begin, i + length};
    }
  }
  return line;
}

// The sentence that ends the line: after the last terminator that is not the line's own end.
TextSpan last_sentence(std::string_view text, TextSpan line) {
  size_t end = line.end;
  while (end > line.begin && is_blank(static_cast<unsigned char>(text[end - 1]))) {
    --end;
  }
  size_t begin = line.begin;
  for (size_t i = line.begin; i < end; ++i) {
    const size_t length = terminator_at(text, i, line.end);
    if (length > 0 && i + length < end) {
      begin = i + length;
    }
  }
  return {begin, line.end};
}

// A colon that introduces material: ':' outside "11:20", or the full-width '：'; its length.
size_t colon_at(std::string_view text, size_t i, TextSpan span) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c == ':') {
    const bool digit_before = i > span.begin && text[i - 1] >= '0' && text[i - 1] <= '9';
    const bool digit_after = i + 1 < span.end && text[i + 1] >= '0' && text[i + 1] <= '9';
    return digit_before || digit_after ? 0 : 1;
  }
  return i + 3 <= span.end && text.substr(i, 3) == "\xef\xbc\x9a" ? 3 : 0;
}

// Whether what precedes a colon asks for something ("Label this ticket", "请翻译"), not a
// field name ("Question", "Context") that the text it names belongs to.
bool asks_before_colon(std::string_view head) {
  bool seen_word = false;
  bool blank_after_word = false;
  for (const char c : head) {
    const auto byte = static_cast<unsigned char>(c);
    if (is_blank(byte)) {
      blank_after_word = seen_word;
    } else if (blank_after_word) {
      return true;  // two words
    } else {
      seen_word = true;
    }
  }
  return head.size() - count_chars(head) >= 4;  // two CJK characters ("翻译"), four Cyrillic
}

// The span without a long tail after its first introducing colon.
TextSpan without_colon_tail(std::string_view text, TextSpan span) {
  for (size_t i = next_marker(text, span.begin, span.end); i < span.end;
       i = next_marker(text, i + 1, span.end)) {
    const size_t length = colon_at(text, i, span);
    if (length == 0) {
      continue;
    }
    const bool long_tail = span.end - (i + length) >= kMinColonTailBytes;
    if (long_tail && asks_before_colon(text.substr(span.begin, i - span.begin))) {
      return {span.begin, i};
    }
    return span;
  }
  return span;
}

struct QuoteKind {
  std::string_view open;
  std::string_view close;
  // Also an apostrophe ("don't", "users' data"): opens only after a non-word byte, closes only
  // before one.
  bool apostrophe;
};

constexpr QuoteKind kQuotes[] = {
    {"\"", "\"", false},
    {"'", "'", true},
    {"\xe2\x80\x9c", "\xe2\x80\x9d", false},  // “ ”
    {"\xe2\x80\x98", "\xe2\x80\x99", true},   // ‘ ’
    {"\xe3\x80\x8c", "\xe3\x80\x8d", false},  // 「 」
    {"\xe3\x80\x8e", "\xe3\x80\x8f", false},  // 『 』
};

const QuoteKind* quote_opening_at(std::string_view text, size_t i, TextSpan span) {
  const std::string_view rest = text.substr(i, span.end - i);
  for (const QuoteKind& kind : kQuotes) {
    if (rest.starts_with(kind.open) && (!kind.apostrophe || i == span.begin ||
                                        !is_ascii_alnum(static_cast<unsigned char>(text[i - 1])))) {
      return &kind;
    }
  }
  return nullptr;
}

// Where the quotation opened before `from` closes (the position of its closing mark), or npos.
size_t quote_close(std::string_view text, const QuoteKind& kind, size_t from, TextSpan span) {
  for (size_t at = text.find(kind.close, from); at != std::string_view::npos && at < span.end;
       at = text.find(kind.close, at + 1)) {
    const size_t after = at + kind.close.size();
    if (after > span.end) {
      break;
    }
    if (!kind.apostrophe || after == span.end ||
        !is_ascii_alnum(static_cast<unsigned char>(text[after]))) {
      return at;
    }
  }
  return std::string_view::npos;
}

void add_span(RequestSpans& out, TextSpan span) {
  if (span.end > span.begin && out.count < RequestSpans::kCapacity) {
    out.spans[out.count++] = span;
  }
}

// Adds `span` to the request, less its material.
void add_request(std::string_view text, TextSpan span, RequestSpans& out) {
  span = without_colon_tail(text, span);
  size_t kept_from = span.begin;
  for (size_t i = next_marker(text, span.begin, span.end); i < span.end;
       i = next_marker(text, i, span.end)) {
    const QuoteKind* kind = quote_opening_at(text, i, span);
    if (kind == nullptr) {
      ++i;
      continue;
    }
    const size_t inner = i + kind->open.size();
    const size_t close = quote_close(text, *kind, inner, span);
    if (close == std::string_view::npos) {
      i = inner;
      continue;
    }
    const size_t after = close + kind->close.size();
    // One span is kept back for the rest of the line.
    if (close - inner >= kMinQuotedBytes && out.count + 1 < RequestSpans::kCapacity) {
      add_span(out, {kept_from, i});
      kept_from = after;
    }
    i = after;
  }
  add_span(out, {kept_from, span.end});
}

}  // namespace

PromptRequest find_prompt_request(std::string_view text) {
  return find_prompt_request(text, kRequestWindowBytes);
}

PromptRequest find_prompt_request(std::string_view text, size_t window_bytes) {
  PromptRequest out;
  if (text.size() <= 2 * window_bytes) {
    out.windows[0] = {text, find_request_spans(text, true, true)};
    out.count = 1;
    return out;
  }
  const std::string_view head = text.substr(0, back_to_boundary(text, window_bytes));
  const std::string_view tail = text.substr(forward_to_boundary(text, text.size() - window_bytes));
  out.windows[0] = {head, find_request_spans(head, true, false)};
  out.windows[1] = {tail, find_request_spans(tail, false, true)};
  out.count = 2;
  return out;
}

RequestSpans find_request_spans(std::string_view text, bool read_first, bool read_last) {
  RequestSpans out;
  const TextSpan first = first_content_line(text);
  if (first.begin == first.end) {
    return out;
  }
  const TextSpan last = last_content_line(text);
  const bool one_line = first.begin == last.begin;
  auto is_short = [&](TextSpan line) {
    return short_line(text.substr(line.begin, line.end - line.begin));
  };
  TextSpan head{first.begin, first.begin};
  if (read_first) {
    head = is_short(first) ? first : first_sentence(text, first);
    add_request(text, head, out);
  }
  if (read_last && (!one_line || !is_short(last))) {
    TextSpan tail = is_short(last) ? last : last_sentence(text, last);
    tail.begin = std::max(tail.begin, head.end);  // a one-line text: its two ends do not overlap
    add_request(text, tail, out);
  }
  return out;
}

TextSpan first_content_line(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t newline = text.find('\n', begin);
    const TextSpan line{begin, newline == std::string_view::npos ? text.size() : newline};
    if (!blank_line(text, line)) {
      return line;
    }
    begin = line.end + 1;
  }
  return {text.size(), text.size()};
}

TextSpan last_content_line(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    const size_t newline = text.rfind('\n', end - 1);
    const TextSpan line{newline == std::string_view::npos ? 0 : newline + 1, end};
    if (!blank_line(text, line)) {
      return line;
    }
    if (newline == std::string_view::npos) {
      break;
    }
    end = newline;
  }
  return {0, 0};
}

}  // namespace tandem::routing
