#pragma once
// Why a text is not JSON, as the strict reader (json_events.h) finds it, and the message that
// tells a client where and why: "line 3, column 14: expected ',' or '}' after an object member,
// found '\"'". A client whose body is refused learns what to fix without a JSON linter.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tandem {

enum class JsonSyntaxError : uint8_t {
  kNone,
  kStopped,  // the handler stopped the read (a depth limit, a key it refuses): not the text's fault
  kExpectedValue,
  kExpectedKey,
  kExpectedColon,
  kExpectedCommaOrBrace,
  kExpectedCommaOrBracket,
  kTrailingText,
  kUnterminatedString,
  kControlCharacter,
  kBadEscape,
  kLoneSurrogate,
  kBadUtf8,
  kBadNumber,
  kNumberOverflow,
};

// "line L, column C: <what was expected or wrong>, found <what is there>". The column counts
// characters (UTF-8 code points) from 1; `offset` is the byte where the text stopped being JSON.
std::string describe_json_syntax_error(std::string_view text, size_t offset, JsonSyntaxError error);

}  // namespace tandem
