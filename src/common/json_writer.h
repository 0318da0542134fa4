#pragma once
// Writes JSON text straight into a string, for the answers the gateway sends on every request:
// building an nlohmann::json tree first costs a heap node per value and a copy per nesting
// level, several times what writing the text costs. The writer checks nothing about structure
// (the caller pairs begin/end and puts a key before each member); it does guarantee valid JSON
// text for every value: strings escaped, invalid UTF-8 replaced by U+FFFD (as nlohmann's dump
// with error_handler_t::replace does), and a non-finite number written as null.
//
// Not thread-safe: one writer, one string, one thread.

#include <cstdint>
#include <string>
#include <string_view>

namespace tandem {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

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

 private:
  void separate();

  std::string& out_;
  bool need_comma_ = false;  // a value was just written at this level
};

// `text` as a JSON string literal, quotes included (the escaping JsonWriter::string does).
void append_json_string(std::string& out, std::string_view text);

}  // namespace tandem
