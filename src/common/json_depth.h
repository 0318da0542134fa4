#pragma once
// How deeply a JSON text nests arrays and objects, read without parsing. nlohmann::json parses
// iteratively but copies, compares and serialises recursively, so a body of a few hundred
// kilobytes of brackets would overflow the stack of whatever copies or dumps it: callers that
// parse untrusted JSON refuse texts deeper than kMaxJsonDepth first, with this walk or, where
// the parser can count the depth itself (parse_json_document with a limit, a simdjson parser
// allocated with one), in the parse.

#include <cstddef>
#include <cstring>
#include <string_view>

namespace tandem {

// Far deeper than any request, stream event or trace row (OpenAI limits the JSON schemas inside
// a request to a few levels), far shallower than a stack can take.
inline constexpr size_t kMaxJsonDepth = 64;

namespace json_depth_detail {

inline const char* find(const char* from, const char* end, char c) {
  const void* hit = std::memchr(from, c, static_cast<size_t>(end - from));
  return hit != nullptr ? static_cast<const char*>(hit) : end;
}

// From just inside a string's opening quote to just past its closing one (`end` when it has
// none). Bodies are mostly string content (prompts, tool arguments), which memchr skips many
// bytes at a time. Each byte is searched at most once for a quote and once for a backslash, so
// even a string of nothing but escapes takes linear time.
inline const char* skip_string(const char* p, const char* end) {
  const char* quote = find(p, end, '"');
  while (quote != end) {
    const char* backslash = find(p, quote, '\\');
    if (backslash == quote) {
      return quote + 1;
    }
    if (end - backslash <= 2) {
      return end;  // the escaped character is the text's last byte, or missing
    }
    p = backslash + 2;  // past the escaped character
    if (p > quote) {    // the escaped character was that quote: the string goes on
      quote = find(p, end, '"');
    }
  }
  return end;
}

}  // namespace json_depth_detail

// The deepest nesting in `text`, brackets inside strings not counted. Linear; `text` need not
// be valid JSON.
inline size_t json_nesting_depth(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  size_t depth = 0;
  size_t deepest = 0;
  while (p < end) {
    const char c = *p++;
    if (c == '"') {
      p = json_depth_detail::skip_string(p, end);
    } else if (c == '[' || c == '{') {
      deepest = ++depth > deepest ? depth : deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace tandem
