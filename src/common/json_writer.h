#pragma once
// Writes JSON text straight into a string, for the answers the gateway sends on every request:
// building an nlohmann::json tree first costs a heap node per value and a copy per nesting
// level, several times what writing the text costs. The writer checks nothing about structure
// (the caller pairs begin/end and puts a key before each member); it does guarantee valid JSON
// text for every value: strings escaped, invalid UTF-8 replaced by U+FFFD (as nlohmann's dump
// with error_handler_t::replace does), and a non-finite number written as null.
//
// Not thread-safe: one writer, one string, one thread.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/json_plain.h"

namespace tandem {

// A member name known when the program is built, written "name"_key. It is checked then (at
// most 64 plain bytes, json_plain.h: ASCII, no control byte, '"' or '\\'; a name that is not
// fails to compile) and kept quoted with its separators, so writing it is one append: a
// response writes some fifty names, and checking and quoting each at run time cost more than
// writing its value.
template <size_t N>
struct JsonKey {
  // NOLINTNEXTLINE(google-explicit-constructor): built from the literal by operator""_key
  consteval JsonKey(const char (&name)[N]) {
    static_assert(N >= 2 && N <= 65, "a JSON key literal holds 1 to 64 bytes");
    text[0] = ',';
    text[1] = '"';
    for (size_t i = 0; i + 1 < N; ++i) {
      if (!json_plain_byte(static_cast<unsigned char>(name[i]))) {
        throw "a JSON key literal holds only ASCII, without control bytes, '\"' or '\\'";
      }
      text[i + 2] = name[i];
    }
    text[N + 1] = '"';
    text[N + 2] = ':';
  }

  // ,"name":  (the comma is skipped for a first member)
  char text[N + 3]{};
};

template <JsonKey kName>
consteval const auto& operator""_key() {
  return kName;
}

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  template <size_t N>
  JsonWriter& key(const JsonKey<N>& name) {
    const bool comma = need_comma_;
    out_.append(name.text + (comma ? 0 : 1), comma ? N + 3 : N + 2);
    need_comma_ = false;
    return *this;
  }

  JsonWriter& string(std::string_view text);
  JsonWriter& number(int64_t value);
  // The shortest text that reads back as `value`, with ".0" on integral values (so a reader
  // that tells integers from fractions sees a fraction, as nlohmann writes them).
  JsonWriter& number(double value);
  JsonWriter& boolean(bool value);
  JsonWriter& null();
  // JSON text written as it is: the caller vouches that it is one valid value.
  JsonWriter& raw(std::string_view json);

  // Convenience for the common member shapes.
  JsonWriter& member(std::string_view name, std::string_view text) {
    return key(name).string(text);
  }
  JsonWriter& member(std::string_view name, const char* text) { return key(name).string(text); }
  JsonWriter& member(std::string_view name, int64_t value) { return key(name).number(value); }
  JsonWriter& member(std::string_view name, int value) { return key(name).number(int64_t{value}); }
  JsonWriter& member(std::string_view name, double value) { return key(name).number(value); }
  JsonWriter& member(std::string_view name, bool value) { return key(name).boolean(value); }
  // The same with a name checked when the program is built ("name"_key).
  template <size_t N, typename Value>
  JsonWriter& member(const JsonKey<N>& name, const Value& value) {
    key(name);
    if constexpr (std::is_same_v<Value, bool>) {
      return boolean(value);
    } else if constexpr (std::is_integral_v<Value>) {
      return number(static_cast<int64_t>(value));
    } else if constexpr (std::is_floating_point_v<Value>) {
      return number(double{value});
    } else {
      return string(value);
    }
  }

 private:
  void separate();

  std::string& out_;
  bool need_comma_ = false;  // a value was just written at this level
};

// `text` as a JSON string literal, quotes included (the escaping JsonWriter::string does).
void append_json_string(std::string& out, std::string_view text);

}  // namespace tandem
