#include "common/json_syntax.h"

#include <algorithm>
#include <cstdio>

namespace tandem {
namespace {

std::string_view expectation(JsonSyntaxError error) {
  switch (error) {
    case JsonSyntaxError::kNone:
    case JsonSyntaxError::kStopped:
      return "the read stopped";
    case JsonSyntaxError::kExpectedValue:
      return "expected a value (an object, array, string, number, true, false or null)";
    case JsonSyntaxError::kExpectedKey:
      return "expected a member name in double quotes";
    case JsonSyntaxError::kExpectedColon:
      return "expected ':' after the member name";
    case JsonSyntaxError::kExpectedCommaOrBrace:
      return "expected ',' or '}' after an object member";
    case JsonSyntaxError::kExpectedCommaOrBracket:
      return "expected ',' or ']' after an array element";
    case JsonSyntaxError::kTrailingText:
      return "expected nothing after the JSON value";
    case JsonSyntaxError::kUnterminatedString:
      return "expected the string's closing '\"'";
    case JsonSyntaxError::kControlCharacter:
      return "a control character in a string must be escaped (\\n, \\t, \\u0000)";
    case JsonSyntaxError::kBadEscape:
      return R"(expected an escape: \", \\, \/, \b, \f, \n, \r, \t or \u and four hex digits)";
    case JsonSyntaxError::kLoneSurrogate:
      return "a \\u escape of a UTF-16 surrogate must be a whole pair (\\ud83d\\ude00)";
    case JsonSyntaxError::kBadUtf8:
      return "a string must be valid UTF-8";
    case JsonSyntaxError::kBadNumber:
      return "expected a number (digits, an optional fraction and exponent)";
    case JsonSyntaxError::kNumberOverflow:
      return "a number must fit a double";
  }
  return "the read stopped";
}

// What is at `offset`: the character quoted when it is printable ASCII, else its byte value.
std::string found_at(std::string_view text, size_t offset) {
  if (offset >= text.size()) {
    return "the end of the text";
  }
  const auto c = static_cast<unsigned char>(text[offset]);
  if (c >= 0x20 && c < 0x7f) {
    return std::string("'") + static_cast<char>(c) + "'";
  }
  char hex[16];
  std::snprintf(hex, sizeof hex, "byte 0x%02x", c);
  return hex;
}

}  // namespace

std::string describe_json_syntax_error(std::string_view text, size_t offset,
                                       JsonSyntaxError error) {
  offset = std::min(offset, text.size());
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) {
      ++column;  // a character starts here; continuation bytes do not count
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
         std::string(expectation(error)) + ", found " + found_at(text, offset);
}

}  // namespace tandem
