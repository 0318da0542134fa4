#pragma once
// How deeply a JSON text nests arrays and objects, read without parsing. nlohmann::json parses
// iteratively but copies, compares and serialises recursively, so a body of a few hundred
// kilobytes of brackets would overflow the stack of whatever copies or dumps it: callers that
// parse untrusted JSON refuse texts deeper than kMaxJsonDepth first.

#include <cstddef>
#include <string_view>

namespace tandem {

// Far deeper than any request, stream event or trace row (OpenAI limits the JSON schemas inside
// a request to a few levels), far shallower than a stack can take.
inline constexpr size_t kMaxJsonDepth = 64;

// The deepest nesting in `text`, brackets inside strings not counted. Linear; `text` need not
// be valid JSON.
inline size_t json_nesting_depth(std::string_view text) {
  size_t depth = 0;
  size_t deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote perhaps
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = ++depth > deepest ? depth : deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace tandem
