#include "common/json_writer.h"

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tandem {
namespace {

using nlohmann::json;

std::string written(const std::function<void(JsonWriter&)>& write) {
  std::string out;
  JsonWriter writer(out);
  write(writer);
  return out;
}

TEST(JsonWriterTest, ObjectsArraysAndCommas) {
  const std::string text = written([](JsonWriter& w) {
    w.begin_object()
        .member("id", "x")
        .member("n", 3)
        .member("ok", true)
        .key("none")
        .null()
        .key("list")
        .begin_array()
        .number(int64_t{1})
        .begin_object()
        .end_object()
        .begin_array()
        .end_array()
        .string("s")
        .end_array()
        .key("raw")
        .raw(R"({"a":[1,2]})")
        .end_object();
  });
  EXPECT_EQ(text,
            R"({"id":"x","n":3,"ok":true,"none":null,"list":[1,{},[],"s"],"raw":{"a":[1,2]}})");
  EXPECT_EQ(json::parse(text)["raw"]["a"][1], 2);
}

TEST(JsonWriterTest, StringsAreEscapedAsJsonRequires) {
  std::string out;
  append_json_string(out, std::string("q\"b\\s/\b\f\n\r\t\x01\x1f\x7f", 14));
  EXPECT_EQ(out, "\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\"");
  EXPECT_EQ(json::parse(out), std::string("q\"b\\s/\b\f\n\r\t\x01\x1f\x7f", 14));
}

TEST(JsonWriterTest, ValidUtf8IsKeptAndInvalidBytesAreReplaced) {
  const std::string valid = "h\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 \xef\xbf\xbd";
  std::string out;
  append_json_string(out, valid);
  EXPECT_EQ(out, "\"" + valid + "\"");
  // A lone continuation byte, a truncated character, an overlong form, a surrogate and a code
  // point past U+10FFFF: each bad byte becomes U+FFFD and the text around it survives.
  for (const std::string bad : {"\x80", "\xe4\xb8", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
                                "\xf4\x90\x80\x80", "\xff"}) {
    out.clear();
    append_json_string(out, "a" + bad + "z");
    const auto back = json::parse(out).get<std::string>();  // throws on invalid UTF-8
    EXPECT_EQ(back.front(), 'a');
    EXPECT_EQ(back.back(), 'z');
    EXPECT_NE(back.find("\xef\xbf\xbd"), std::string::npos) << out;
  }
}

// Any bytes at all come out as a JSON string nlohmann reads, and valid text reads back as it was.
TEST(JsonWriterTest, AnyBytesGiveValidJson) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(rng() % 24, '\0');
    for (auto& c : bytes) {
      c = static_cast<char>(rng() % 4 == 0 ? rng() % 0x20 : rng() % 256);
    }
    std::string out;
    append_json_string(out, bytes);
    json back;
    ASSERT_NO_THROW(back = json::parse(out)) << out;
    const std::string dumped = json(bytes).dump(-1, ' ', false, json::error_handler_t::replace);
    if (dumped.find("\xef\xbf\xbd") == std::string::npos) {  // the bytes were valid UTF-8
      EXPECT_EQ(back.get<std::string>(), bytes);
    }
  }
}

// Short plain keys and values take a one-append path, the rest the escaping one: both write
// what nlohmann writes, separators included, at every length around the boundary.
TEST(JsonWriterTest, KeysAndValuesOfEveryLengthAndKindReadBack) {
  std::vector<std::string> texts = {"",
                                    "a",
                                    "chat.completion",
                                    "\"q\"",
                                    "back\\slash",
                                    "tab\t",
                                    "\xe4\xb8\xad",
                                    "\x7f",
                                    std::string(1, '\0')};
  for (size_t n : {63, 64, 65, 200}) {
    texts.push_back(std::string(n, 'k'));
    texts.push_back(std::string(n - 1, 'k') + "\"");
  }
  json expected = json::object();
  std::string text = written([&](JsonWriter& w) {
    w.begin_object();
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string key = texts[i] + "#" + std::to_string(i);  // unique keys
      w.member(key, texts[i]);
      expected[key] = texts[i];
    }
    w.key("list").begin_array();
    for (const auto& t : texts) {
      w.string(t);
    }
    w.end_array().end_object();
  });
  expected["list"] = texts;
  EXPECT_EQ(json::parse(text), expected) << text;
}

// A name checked when the program is built writes exactly what the same name checked at run
// time writes, as the first member and after others, with every kind of value.
TEST(JsonWriterTest, KeysCheckedAtBuildTimeWriteWhatRunTimeKeysWrite) {
  const std::string value = "v";
  const auto at_build = written([&](JsonWriter& w) {
    w.begin_object()
        .member("s"_key, value)
        .member("c"_key, "text")
        .member("b"_key, false)
        .member("i"_key, -3)
        .member("u"_key, size_t{7})
        .member("d"_key, 0.5)
        .key("nested"_key)
        .begin_object()
        .key("sixty-four bytes: the longest_name.with:punctuation & space 0123"_key)
        .null()
        .end_object()
        .end_object();
  });
  const auto at_run = written([&](JsonWriter& w) {
    w.begin_object()
        .member("s", value)
        .member("c", "text")
        .member("b", false)
        .member("i", -3)
        .member("u", int64_t{7})
        .member("d", 0.5)
        .key("nested")
        .begin_object()
        .key("sixty-four bytes: the longest_name.with:punctuation & space 0123")
        .null()
        .end_object()
        .end_object();
  });
  EXPECT_EQ(at_build, at_run);
  EXPECT_EQ(json::parse(at_build)["u"], 7);
}

// The short path judges each byte with a table: every byte value, at every place of a short
// text, must be written as the escaping path writes it.
TEST(JsonWriterTest, EveryByteAtEveryPlaceOfAShortTextIsJudgedAlike) {
  for (size_t length = 1; length <= 26; ++length) {
    for (size_t at = 0; at < length; ++at) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string text(length, 'k');
        text[at] = static_cast<char>(byte);
        std::string expected;
        append_json_string(expected, text);
        ASSERT_EQ(written([&](JsonWriter& w) { w.string(text); }), expected)
            << "length " << length << ", byte " << byte << " at " << at;
      }
    }
  }
}

TEST(JsonWriterTest, NumbersReadBackExactly) {
  for (const double value : {0.0, 1.0, -2.5, 0.1, 104.516938, 1e-7, 3.0e21, 1.0 / 3.0}) {
    const std::string text = written([&](JsonWriter& w) { w.number(value); });
    const json back = json::parse(text);
    EXPECT_TRUE(back.is_number_float()) << text;
    EXPECT_EQ(back.get<double>(), value) << text;
  }
  EXPECT_EQ(written([](JsonWriter& w) { w.number(1.0); }), "1.0");
  EXPECT_EQ(written([](JsonWriter& w) { w.number(std::nan("")); }), "null");
  EXPECT_EQ(written([](JsonWriter& w) { w.number(std::numeric_limits<double>::infinity()); }),
            "null");
  EXPECT_EQ(written([](JsonWriter& w) { w.number(std::numeric_limits<int64_t>::min()); }),
            "-9223372036854775808");
}

}  // namespace
}  // namespace tandem
