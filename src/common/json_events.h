#pragma once
// A strict JSON reader that reports a document as events to a handler, without building it:
// the egress guard scans every body about to leave this way. It accepts and rejects exactly
// what nlohmann::json::sax_parse does (RFC 8259: no comments, no trailing commas, strings of
// valid UTF-8 without raw control characters, surrogate pairs whole, a leading UTF-8 BOM
// skipped, nothing but whitespace after the value, a number that overflows a double refused),
// with one difference: a NUL byte outside a string, where nlohmann ends its input and ignores
// what follows (bytes that would then leave unscanned), is refused like any other byte that is
// not JSON. It calls the handler with nlohmann's SAX names, so one handler serves both
// (tests/common/json_events_test.cpp compares the two on generated and mutated documents).
// Why: nlohmann's lexer reads a character at a time through its input adapter; here a run of
// plain string bytes is appended at once, and a body costs a fraction of the instructions.
//
// The handler: null(), boolean(bool), number_integer(int64_t), number_unsigned(uint64_t),
// number_float(double, const std::string& text), string(std::string&), key(std::string&),
// start_object(size_t), end_object(), start_array(size_t), end_array(), each returning false
// to stop the read. Numbers come as nlohmann reports them: an integer that fits 64 bits as one
// (unsigned without a sign), anything else as a double with its text.
//
// Thread-safety: a pure function over its arguments.

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/hex.h"
#include "common/json_plain.h"
#include "common/json_syntax.h"
#include "common/utf8.h"

namespace tandem {

struct JsonEventsResult {
  bool ok = false;
  size_t offset = 0;  // where the text stopped being JSON (or the handler stopped), when !ok
  JsonSyntaxError error = JsonSyntaxError::kNone;  // why, when !ok (describe_json_syntax_error)
};

namespace json_events_detail {

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  template <typename Handler>
  JsonEventsResult run(Handler& handler) {
    skip_bom();
    skip_space();
    std::vector<bool> open;  // per open container: true for an object; no recursion, any depth
    while (true) {
      // A value is expected at pos_: a scalar, or a container's start.
      const char c = peek();
      if (c == '{' || c == '[') {
        const size_t depth = open.size();
        if (!start_container(handler, open)) {
          return fail();
        }
        if (open.size() > depth) {
          continue;  // opened, not empty: its first value is next
        }
      } else if (!scalar(handler)) {
        return fail();
      }
      // After a value: close containers, or find the next member or element.
      if (!after_value(handler, open)) {
        return fail();
      }
      if (open.empty()) {
        return {true, 0, JsonSyntaxError::kNone};
      }
    }
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= text_.size(); }

  JsonEventsResult fail() const {
    if (error_ == JsonSyntaxError::kNone) {
      return {false, pos_, JsonSyntaxError::kStopped};
    }
    return {false, error_at_, error_};
  }

  // Records why the text is not JSON, at `at`; false, for the caller to return.
  bool refuse(JsonSyntaxError error, size_t at) {
    error_ = error;
    error_at_ = at;
    return false;
  }
  bool refuse(JsonSyntaxError error) { return refuse(error, pos_); }

  void skip_bom() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") {
      pos_ = 3;
    }
  }

  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        return;
      }
      ++pos_;
    }
  }

  // The '{' or '[' at pos_: an empty container is read whole (and not pushed); otherwise it is
  // pushed, and for an object its first key is read.
  template <typename Handler>
  bool start_container(Handler& handler, std::vector<bool>& open) {
    const bool object = peek() == '{';
    ++pos_;
    const bool going = object ? handler.start_object(static_cast<size_t>(-1))
                              : handler.start_array(static_cast<size_t>(-1));
    if (!going) {
      return false;
    }
    skip_space();
    if (peek() == (object ? '}' : ']')) {
      ++pos_;
      return object ? handler.end_object() : handler.end_array();
    }
    open.push_back(object);
    return !object || member_key(handler);
  }

  // Past a value: closes what ends here; true with pos_ at the next value, or with nothing open
  // and only whitespace left.
  template <typename Handler>
  bool after_value(Handler& handler, std::vector<bool>& open) {
    while (true) {
      skip_space();
      if (open.empty()) {
        return pos_ == text_.size() || refuse(JsonSyntaxError::kTrailingText);
      }
      const bool object = open.back();
      const char c = peek();
      if (c == (object ? '}' : ']')) {
        ++pos_;
        open.pop_back();
        const bool going = object ? handler.end_object() : handler.end_array();
        if (!going) {
          return false;
        }
        continue;
      }
      if (c != ',') {
        return refuse(object ? JsonSyntaxError::kExpectedCommaOrBrace
                             : JsonSyntaxError::kExpectedCommaOrBracket);
      }
      ++pos_;
      skip_space();
      return !object || member_key(handler);
    }
  }

  template <typename Handler>
  bool scalar(Handler& handler) {
    const char c = peek();
    if (at_end()) {
      return refuse(JsonSyntaxError::kExpectedValue);
    }
    if (c == '"') {
      return string() && handler.string(buffer_);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      const size_t start = pos_;
      const Number kind = number();
      if (kind == Number::kNone) {
        return refuse(JsonSyntaxError::kBadNumber, start);
      }
      return number_event(handler, kind, start);
    }
    if (literal("true")) {
      return handler.boolean(true);
    }
    if (literal("false")) {
      return handler.boolean(false);
    }
    if (literal("null")) {
      return handler.null();
    }
    return refuse(JsonSyntaxError::kExpectedValue);
  }

  // "key": with the space around the colon; pos_ is then at the member's value.
  template <typename Handler>
  bool member_key(Handler& handler) {
    if (peek() != '"') {
      return refuse(JsonSyntaxError::kExpectedKey);
    }
    if (!string() || !handler.key(buffer_)) {
      return false;
    }
    skip_space();
    if (peek() != ':') {
      return refuse(JsonSyntaxError::kExpectedColon);
    }
    ++pos_;
    skip_space();
    return true;
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      return false;
    }
    pos_ += word.size();
    return true;
  }

  // The string at pos_ (its opening quote), decoded into buffer_.
  bool string() {
    ++pos_;
    buffer_.clear();
    while (true) {
      const size_t run = pos_;
      pos_ = json_plain_run_end(text_, pos_);
      buffer_.append(text_.data() + run, pos_ - run);
      if (at_end()) {
        return refuse(JsonSyntaxError::kUnterminatedString);
      }
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (!escape()) {
          return false;
        }
        continue;
      }
      if (c < 0x20) {
        return refuse(JsonSyntaxError::kControlCharacter);
      }
      const size_t length = utf8_sequence(text_, pos_);
      if (length == 0) {
        return refuse(JsonSyntaxError::kBadUtf8);
      }
      buffer_.append(text_.data() + pos_, length);
      pos_ += length;
    }
  }

  bool hex4(uint32_t& out) {
    if (pos_ + 4 > text_.size()) {
      return false;
    }
    out = 0;
    for (size_t i = 0; i < 4; ++i) {
      const int digit = hex_digit_value(text_[pos_ + i]);
      if (digit < 0) {
        return false;
      }
      out = out * 16 + static_cast<uint32_t>(digit);
    }
    pos_ += 4;
    return true;
  }

  // The escape at pos_ (its backslash), appended to buffer_.
  bool escape() {
    const size_t backslash = pos_;
    ++pos_;
    const char c = peek();
    ++pos_;
    switch (c) {
      case '"':
      case '\\':
      case '/':
        buffer_ += c;
        return true;
      case 'b':
        buffer_ += '\b';
        return true;
      case 'f':
        buffer_ += '\f';
        return true;
      case 'n':
        buffer_ += '\n';
        return true;
      case 'r':
        buffer_ += '\r';
        return true;
      case 't':
        buffer_ += '\t';
        return true;
      case 'u':
        return unicode_escape(backslash);
      default:
        return refuse(JsonSyntaxError::kBadEscape, backslash);
    }
  }

  // A \u escape, from just past its "u"; `backslash` is where it starts.
  bool unicode_escape(size_t backslash) {
    uint32_t cp = 0;
    if (!hex4(cp)) {
      return refuse(JsonSyntaxError::kBadEscape, backslash);
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return refuse(JsonSyntaxError::kLoneSurrogate, backslash);
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: its low half must follow
      uint32_t low = 0;
      if (text_.substr(pos_, 2) != "\\u") {
        return refuse(JsonSyntaxError::kLoneSurrogate, backslash);
      }
      const size_t second = pos_;
      pos_ += 2;
      if (!hex4(low)) {
        return refuse(JsonSyntaxError::kBadEscape, second);
      }
      if (low < 0xDC00 || low > 0xDFFF) {
        return refuse(JsonSyntaxError::kLoneSurrogate, backslash);
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(buffer_, cp);
    return true;
  }

  void digits() {
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      ++pos_;
    }
  }

  bool digit_here() const { return peek() >= '0' && peek() <= '9'; }

  enum class Number { kNone, kInteger, kFloat };

  // The number at pos_, its text into buffer_: what kind of number it is, kNone if it is not.
  Number number() {
    const size_t start = pos_;
    if (peek() == '-') {
      ++pos_;
    }
    if (peek() == '0') {
      ++pos_;
    } else if (digit_here()) {
      digits();
    } else {
      return Number::kNone;
    }
    bool fraction = false;
    if (peek() == '.') {
      ++pos_;
      if (!digit_here()) {
        return Number::kNone;
      }
      digits();
      fraction = true;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') {
        ++pos_;
      }
      if (!digit_here()) {
        return Number::kNone;
      }
      digits();
      fraction = true;
    }
    buffer_.assign(text_.data() + start, pos_ - start);
    return fraction ? Number::kFloat : Number::kInteger;
  }

  // The number in buffer_ as nlohmann reports it: an integer that fits 64 bits as one (unsigned
  // when it has no sign), anything else as a double with its text; a double that overflows is
  // refused ("number overflow").
  template <typename Handler>
  bool number_event(Handler& handler, Number kind, size_t start) {
    const char* first = buffer_.data();
    const char* last = first + buffer_.size();
    if (kind == Number::kInteger) {
      if (buffer_[0] != '-') {
        uint64_t value = 0;
        if (std::from_chars(first, last, value).ec == std::errc()) {
          return handler.number_unsigned(value);
        }
      } else {
        int64_t value = 0;
        if (std::from_chars(first, last, value).ec == std::errc()) {
          return handler.number_integer(value);
        }
      }
    }
    double value = 0;
    if (std::from_chars(first, last, value).ec == std::errc::result_out_of_range) {
      // Too large, or too small: strtod gives the infinity or the subnormal nlohmann reads.
      value = std::strtod(buffer_.c_str(), nullptr);
    }
    if (!std::isfinite(value)) {
      return refuse(JsonSyntaxError::kNumberOverflow, start);
    }
    return handler.number_float(value, buffer_);
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string buffer_;                              // the last string, key or number read
  JsonSyntaxError error_ = JsonSyntaxError::kNone;  // why the text is not JSON, once found
  size_t error_at_ = 0;
};

}  // namespace json_events_detail

// Reads `text` as one JSON value, calling `handler` for each event in document order.
template <typename Handler>
JsonEventsResult read_json_events(std::string_view text, Handler& handler) {
  json_events_detail::Reader reader(text);
  return reader.run(handler);
}

}  // namespace tandem
