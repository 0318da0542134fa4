#pragma once
// Random JSON texts for the differential tests of common/json_events.h and json_document.h:
// nested objects and arrays with varied escapes, UTF-8, numbers at the integer and double
// limits, and spacing. Valid JSON, deterministic for a seed.

#include <iterator>
#include <random>
#include <string>

namespace tandem::testing {

// A random JSON document with varied escapes, numbers and spacing.
class JsonGenerator {
 public:
  explicit JsonGenerator(uint32_t seed) : random_(seed) {}

  std::string document() {
    std::string out;
    value(out, 0);
    return out;
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }

  void space(std::string& out) {
    static const char* const kSpaces[] = {"", "", "", " ", "\n", "\t ", "\r\n  "};
    out += kSpaces[pick(7)];
  }

  void string(std::string& out) {
    static const char* const kPieces[] = {"a",
                                          "hello",
                                          " ",
                                          "\\n",
                                          "\\\"",
                                          "\\\\",
                                          "\\/",
                                          "\\u00e9",
                                          "\\u4e2d",
                                          "\\ud83d\\ude00",
                                          "\xc3\xa9",
                                          "\xe4\xb8\xad",
                                          "\xf0\x9f\x98\x80",
                                          "4111 1111 1111 1111",
                                          "x@y.com",
                                          "\\t",
                                          "\\u0001",
                                          "0",
                                          "type",
                                          "text",
                                          "content"};
    out += '"';
    const size_t n = pick(5);
    for (size_t i = 0; i < n; ++i) {
      out += kPieces[pick(std::size(kPieces))];
    }
    out += '"';
  }

  void number(std::string& out) {
    static const char* const kNumbers[] = {"0",
                                           "-0",
                                           "7",
                                           "-12",
                                           "3.25",
                                           "1e3",
                                           "-2E-2",
                                           "0.5e+10",
                                           "4111111111111111",
                                           "99999999999999999999",
                                           "1.0",
                                           "-0.0"};
    out += kNumbers[pick(std::size(kNumbers))];
  }

  // An object of up to 3 members or an array of up to 3 elements, space around every token.
  void container(std::string& out, int depth, bool object) {
    out += object ? '{' : '[';
    const size_t n = pick(4);
    for (size_t i = 0; i < n; ++i) {
      space(out);
      if (object) {
        string(out);
        space(out);
        out += ':';
        space(out);
      }
      value(out, depth + 1);
      space(out);
      if (i + 1 < n) {
        out += ',';
      }
    }
    out += object ? '}' : ']';
  }

  void value(std::string& out, int depth) {
    const size_t kind = depth > 4 ? 2 + pick(4) : pick(6);
    switch (kind) {
      case 0:
        container(out, depth, /*object=*/true);
        break;
      case 1:
        container(out, depth, /*object=*/false);
        break;
      case 2:
        string(out);
        break;
      case 3:
        number(out);
        break;
      case 4:
        out += pick(2) ? "true" : "false";
        break;
      default:
        out += "null";
        break;
    }
  }

  std::mt19937 random_;
};

}  // namespace tandem::testing
