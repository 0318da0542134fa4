#include "common/json_document.h"

#include <random>

#include <gtest/gtest.h>

#include "json_generator.h"

namespace tandem {
namespace {

// Every node's type and value, so an unsigned 5 and a signed 5 (equal under ==) differ.
std::string typed(const nlohmann::json& value) {
  std::string out = std::string(value.type_name()) + ":";
  out += std::to_string(static_cast<int>(value.type()));
  if (value.is_structured()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      out += value.is_object() ? "(" + it.key() + ")" : "(";
      out += typed(*it) + ")";
    }
    return out;
  }
  return out + value.dump();
}

TEST(JsonDocumentTest, DocumentsAreTheOnesNlohmannBuilds) {
  testing::JsonGenerator generator(99);
  std::mt19937 random(5);
  size_t compared = 0;
  for (int d = 0; d < 300; ++d) {
    std::string text = generator.document();
    if (d % 3 == 0 && !text.empty()) {  // a third mutated: both must refuse alike
      text[random() % text.size()] = "{}[],:\"0"[random() % 8];
    }
    const auto ours = parse_json_document(text);
    const auto theirs = nlohmann::json::parse(text, nullptr, false);
    ASSERT_EQ(ours.has_value(), !theirs.is_discarded()) << text;
    if (ours) {
      EXPECT_EQ(typed(*ours), typed(theirs)) << text;
      ++compared;
    }
  }
  EXPECT_GT(compared, 200U);
  // Duplicate keys keep the last value, as nlohmann does; numbers keep their kinds.
  constexpr std::string_view kDuplicates = R"({"a":1,"b":[2,-3,4.5,18446744073709551615],"a":"x"})";
  const auto dup = parse_json_document(kDuplicates);
  ASSERT_TRUE(dup.has_value());
  EXPECT_EQ(typed(*dup), typed(nlohmann::json::parse(kDuplicates)));
  EXPECT_EQ((*dup)["a"], "x");
  EXPECT_FALSE(parse_json_document("{\"a\":1} x").has_value());
}

// With a depth limit the read stops at the level that breaks it, and says why; brackets in
// strings are text, and an invalid text within the limit is only invalid.
TEST(JsonDocumentTest, ADepthLimitRefusesTheLevelPastIt) {
  const auto nested = [](size_t depth, const std::string& inner) {
    return std::string(depth, '[') + inner + std::string(depth, ']');
  };
  JsonDocumentError error{.too_deep = true};
  const auto deepest = parse_json_document(nested(4, "\"[[[[[\""), 4, error);
  ASSERT_TRUE(deepest.has_value());
  EXPECT_FALSE(error.too_deep);
  EXPECT_EQ((*deepest)[0][0][0][0], "[[[[[");
  EXPECT_FALSE(parse_json_document(nested(5, "1"), 4, error).has_value());
  EXPECT_TRUE(error.too_deep);
  EXPECT_FALSE(parse_json_document(R"({"a":{"b":{"c":{"d":{}}}}})", 4, error).has_value());
  EXPECT_TRUE(error.too_deep);
  // Refused at the fifth level, though the text is broken far beyond it.
  EXPECT_FALSE(parse_json_document(nested(5, "1") + "junk", 4, error).has_value());
  EXPECT_TRUE(error.too_deep);
  EXPECT_FALSE(parse_json_document("[[1,]]", 4, error).has_value());
  EXPECT_FALSE(error.too_deep);
  EXPECT_EQ(error.offset, 4U);
  EXPECT_EQ(error.syntax, JsonSyntaxError::kExpectedValue);
}

}  // namespace
}  // namespace tandem
