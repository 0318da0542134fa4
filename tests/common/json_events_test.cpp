#include "common/json_events.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include <gtest/gtest.h>

#include "json_generator.h"

namespace tandem {
namespace {

// Writes every event as a line, so two readers' events compare as text. It speaks nlohmann's
// SAX interface in full, so nlohmann::json::sax_parse can drive it too.
class Recorder {
 public:
  bool null() { return add("null"); }
  bool boolean(bool value) { return add(value ? "true" : "false"); }
  bool number_integer(int64_t value) { return add("integer " + std::to_string(value)); }
  bool number_unsigned(uint64_t value) { return add("unsigned " + std::to_string(value)); }
  bool number_float(double value, const std::string& text) {
    char exact[32];
    std::snprintf(exact, sizeof(exact), "%.17g", value);
    return add("float " + text + " = " + exact);
  }
  bool string(std::string& value) { return add("string " + value); }
  bool binary(nlohmann::json::binary_t& /*value*/) { return add("binary"); }
  bool start_object(size_t /*size*/) { return add("{"); }
  bool key(std::string& value) { return add("key " + value); }
  bool end_object() { return add("}"); }
  bool start_array(size_t /*size*/) { return add("["); }
  bool end_array() { return add("]"); }
  bool parse_error(size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) {
    return false;
  }

  const std::string& events() const { return events_; }

 private:
  bool add(const std::string& line) {
    events_ += line;
    events_ += '\n';
    return true;
  }
  std::string events_;
};

struct Read {
  bool ok = false;
  std::string events;
};

Read with_nlohmann(std::string_view text) {
  Recorder recorder;
  const bool ok = nlohmann::json::sax_parse(text, &recorder);
  return {ok, recorder.events()};
}

Read with_events(std::string_view text) {
  Recorder recorder;
  const bool ok = read_json_events(text, recorder).ok;
  return {ok, recorder.events()};
}

// Compares acceptance and, when both accept, every event. One difference is by design: nlohmann
// ends its input at a NUL byte outside a string and ignores the rest, where the rest would still
// leave the device unscanned; a NUL is never JSON, so the reader refuses it.
void expect_same(std::string_view text) {
  const Read got = with_events(text);
  if (text.find('\0') != std::string_view::npos) {
    ASSERT_FALSE(got.ok) << "a text with a NUL byte";
    return;
  }
  const Read expected = with_nlohmann(text);
  ASSERT_EQ(got.ok, expected.ok) << "text: "
                                 << nlohmann::json(std::string(text))
                                        .dump(-1, ' ', true,
                                              nlohmann::json::error_handler_t::replace);
  if (expected.ok) {
    ASSERT_EQ(got.events, expected.events) << text;
  }
}

TEST(JsonEventsTest, EdgeCasesReadAsNlohmannReadsThem) {
  const std::vector<std::string> cases = {"",
                                          " ",
                                          "{}",
                                          "[]",
                                          " { } ",
                                          "[ ]",
                                          "null",
                                          "true",
                                          "false",
                                          "nul",
                                          "truex",
                                          "tru",
                                          "0",
                                          "-0",
                                          "-0.0",
                                          "01",
                                          "-",
                                          "1.",
                                          ".5",
                                          "+1",
                                          "1e5",
                                          "1E+5",
                                          "1e-5",
                                          "1e",
                                          "1e+",
                                          "2.5e-3",
                                          "9223372036854775807",
                                          "9223372036854775808",
                                          "18446744073709551615",
                                          "18446744073709551616",
                                          "-9223372036854775808",
                                          "-9223372036854775809",
                                          "123456789012345678901234567890",
                                          "1e308",
                                          "1e309",
                                          "-1e309",
                                          "1e-400",
                                          "0.0000001",
                                          "\"\"",
                                          "\"abc\"",
                                          "\"a\\\"b\"",
                                          "\"\\\\\\/\\b\\f\\n\\r\\t\"",
                                          "\"\\u0041\"",
                                          "\"\\u00e9\\u4e2d\"",
                                          "\"\\u0000\"",
                                          "\"\\ud83d\\ude00\"",
                                          "\"\\ud83d\"",
                                          "\"\\ude00\"",
                                          "\"\\ud83d\\u0041\"",
                                          "\"\\ud83dx\"",
                                          "\"\\u12\"",
                                          "\"\\u12g4\"",
                                          "\"\\x\"",
                                          "\"abc",
                                          "\"a\nb\"",
                                          "\"a\tb\"",
                                          "\"\x7f\"",
                                          "\"\xc3\xa9\"",
                                          "\"\xc3\"",
                                          "\"\xc0\x80\"",
                                          "\"\xe0\x80\x80\"",
                                          "\"\xed\xa0\x80\"",
                                          "\"\xf4\x90\x80\x80\"",
                                          "\"\xf0\x9f\x98\x80\"",
                                          "\"\xff\"",
                                          "\xef\xbb\xbf{}",
                                          "\xef\xbb{}",
                                          " \xef\xbb\xbf{}",
                                          "{\"a\":1}",
                                          "{\"a\":1,}",
                                          "{\"a\" 1}",
                                          "{\"a\":}",
                                          "{a:1}",
                                          "{\"a\":1 \"b\":2}",
                                          "[1,]",
                                          "[,1]",
                                          "[1 2]",
                                          "[1,,2]",
                                          "[[[]]]",
                                          "[[[]]",
                                          "[]]",
                                          "{\"a\":{\"b\":[1,{\"c\":null}]}}",
                                          "{} {}",
                                          "[] x",
                                          "{}\n\r\t ",
                                          "{\"\":\"\"}",
                                          "{\"a\":1,\"a\":2}",
                                          "[\"\\u00\"]",
                                          "[1e+1,2E-2,-3.5]",
                                          "\t[\n1\r]",
                                          std::string("\"a\0b\"", 5),
                                          std::string("[1]\0", 4),
                                          std::string(200, '[') + std::string(200, ']'),
                                          std::string(100, '[') + std::string(99, ']'),
                                          "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                                          "\"max_tokens\":4,\"temperature\":0.7}"};
  for (const std::string& text : cases) {
    expect_same(text);
  }
}

// Strings are read eight bytes at a time: every byte value, at every place of strings that
// span one to three words, must be read (or refused) as nlohmann reads it.
TEST(JsonEventsTest, EveryByteAtEveryPlaceOfAStringReadsAsNlohmannReadsIt) {
  for (size_t length = 1; length <= 24; ++length) {
    for (size_t at = 0; at < length; ++at) {
      for (int byte = 1; byte < 256; ++byte) {
        std::string value(length, 'k');
        value[at] = static_cast<char>(byte);
        expect_same("[\"" + value + "\",\"x\"]");
      }
    }
  }
}

TEST(JsonEventsTest, GeneratedDocumentsReadAsNlohmannReadsThem) {
  testing::JsonGenerator generator(20261205);
  size_t accepted = 0;
  for (int i = 0; i < 500; ++i) {
    const std::string text = generator.document();
    expect_same(text);
    accepted += with_nlohmann(text).ok ? 1 : 0;
  }
  EXPECT_GT(accepted, 450U);  // the generator writes valid JSON: the comparison is of events
}

TEST(JsonEventsTest, MutatedDocumentsAreRefusedWhereNlohmannRefusesThem) {
  testing::JsonGenerator generator(7);
  std::mt19937 random(11);
  const std::string alphabet =
      std::string("{}[]\",:\\ 0123456789eE.-+utfnlx\x80\xc3\xed\xf4\xff\x01\t") +
      std::string(1, '\0');
  size_t refused = 0;
  size_t total = 0;
  for (int d = 0; d < 200; ++d) {
    const std::string base = generator.document();
    for (int m = 0; m < 20; ++m) {
      std::string text = base;
      const size_t at = text.empty() ? 0 : random() % text.size();
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 4) {
        case 0:
          if (!text.empty()) {
            text.erase(at, 1);
          }
          break;
        case 1:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 2:
          if (!text.empty()) {
            text[at] = c;
          }
          break;
        default:
          text.resize(at);
          break;
      }
      expect_same(text);
      refused += with_nlohmann(text).ok ? 0 : 1;
      ++total;
    }
  }
  EXPECT_GT(refused, total / 3);  // most mutations break the document: both must refuse them
}

TEST(JsonEventsTest, AHandlerThatStopsEndsTheRead) {
  struct StopAtFirstKey : Recorder {
    bool key(std::string& /*value*/) { return false; }
  } stop;
  EXPECT_FALSE(read_json_events(R"({"a":1})", stop).ok);
}

TEST(JsonEventsTest, DeepNestingNeedsNoRecursion) {
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  Recorder recorder;
  EXPECT_TRUE(read_json_events(deep, recorder).ok);
}

TEST(JsonEventsTest, TheErrorSaysWhereTheTextStoppedBeingJson) {
  Recorder recorder;
  const JsonEventsResult read = read_json_events(R"({"a": tru})", recorder);
  EXPECT_FALSE(read.ok);
  EXPECT_EQ(read.offset, 6U);
}

}  // namespace
}  // namespace tandem
