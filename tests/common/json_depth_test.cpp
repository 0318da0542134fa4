#include "common/json_depth.h"

#include <random>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace tandem {
namespace {

// The definition, one byte at a time: what the fast scan must agree with on any input.
size_t reference_depth(std::string_view text) {
  size_t depth = 0;
  size_t deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

TEST(JsonDepthTest, BracketsInsideStringsAndEscapedQuotesDoNotCount) {
  EXPECT_EQ(json_nesting_depth(""), 0u);
  EXPECT_EQ(json_nesting_depth(R"({"a":[1,{"b":[]}]})"), 4u);
  EXPECT_EQ(json_nesting_depth(R"({"a":"[[[{{{"})"), 1u);
  EXPECT_EQ(json_nesting_depth(R"({"a":"say \"[[[\" twice","b":[[]]})"), 3u);
  EXPECT_EQ(json_nesting_depth(R"({"a":"ends in a backslash\\","b":[[]]})"), 3u);
  EXPECT_EQ(json_nesting_depth(R"(["unterminated [[[[)"), 1u);
  EXPECT_EQ(json_nesting_depth(R"(["escape at the very end\)"), 1u);
  EXPECT_EQ(json_nesting_depth("]]]}}[[{"), 3u);
}

// Random texts over the characters that matter, with long runs of escapes and quotes.
TEST(JsonDepthTest, AgreesWithTheByteByByteDefinitionOnAnyText) {
  std::mt19937 rng(11);
  const std::string alphabet = "\"\\[]{}a,:";
  for (int round = 0; round < 20000; ++round) {
    std::string text(rng() % 64, ' ');
    for (auto& c : text) {
      c = alphabet[rng() % alphabet.size()];
    }
    ASSERT_EQ(json_nesting_depth(text), reference_depth(text)) << text;
  }
}

// A string of nothing but escapes is scanned in linear time (it would take minutes if each
// escape searched the rest of the text again).
TEST(JsonDepthTest, AStringOfEscapesIsScannedOnce) {
  const std::string text = "[\"" + std::string(4 << 20, '\\') + "\"[]]";
  EXPECT_EQ(json_nesting_depth(text), reference_depth(text));
}

}  // namespace
}  // namespace tandem
