// Where and why a text is not JSON (common/json_syntax.h): the cases in
// tests/common/cases/json_syntax_errors.jsonl read by the strict reader, each with the message a
// client gets, and the bytes a cases file cannot hold (invalid UTF-8, a NUL).

#include "common/json_syntax.h"

#include <gtest/gtest.h>

#include "../support/json_lines.h"
#include "common/json_document.h"

namespace tandem {
namespace {

std::string why_not_json(std::string_view text) {
  JsonDocumentError error;
  if (parse_json_document(text, 64, error)) {
    return "valid";
  }
  return describe_json_syntax_error(text, error.offset, error.syntax);
}

TEST(JsonSyntaxTest, TheCasesFile) {
  const auto cases =
      test::read_json_lines(std::string(TANDEM_COMMON_CASES) + "/json_syntax_errors.jsonl");
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    const std::string text = c.at("text");
    EXPECT_EQ(why_not_json(text), c.at("message").get<std::string>()) << text;
  }
}

TEST(JsonSyntaxTest, BytesThatAreNotText) {
  EXPECT_EQ(why_not_json("{\"a\":\"caf\xc3\"}"),
            "line 1, column 10: a string must be valid UTF-8, found byte 0xc3");
  EXPECT_EQ(why_not_json(std::string("{\"a\":1}\0", 8)),
            "line 1, column 8: expected nothing after the JSON value, found byte 0x00");
  // A leading byte-order mark is skipped, and counts as no column.
  EXPECT_EQ(why_not_json("\xEF\xBB\xBF{]"),
            "line 1, column 3: expected a member name in double quotes, found ']'");
}

// A read stopped by its handler is not the text's fault: the depth limit says so on its own.
TEST(JsonSyntaxTest, AStoppedReadIsNotASyntaxError) {
  JsonDocumentError error;
  EXPECT_FALSE(parse_json_document("[[[1]]]", 2, error).has_value());
  EXPECT_TRUE(error.too_deep);
  EXPECT_EQ(error.syntax, JsonSyntaxError::kStopped);
}

}  // namespace
}  // namespace tandem
