// Which bytes of a prompt are its request (request_spans.h), against the cases in
// tests/routing/cases/request_spans.jsonl, plus the window flags and the span capacity.

#include "routing/request_spans.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/json_lines.h"

namespace tandem::routing {
namespace {

std::vector<std::string> request_of(std::string_view text, bool read_first = true,
                                    bool read_last = true) {
  const RequestSpans request = find_request_spans(text, read_first, read_last);
  std::vector<std::string> parts;
  size_t previous_end = 0;
  for (size_t i = 0; i < request.count; ++i) {
    const TextSpan span = request.spans[i];
    EXPECT_LE(previous_end, span.begin) << "spans out of order or overlapping";
    EXPECT_LT(span.begin, span.end);
    EXPECT_LE(span.end, text.size());
    previous_end = span.end;
    parts.emplace_back(text.substr(span.begin, span.end - span.begin));
  }
  return parts;
}

TEST(RequestSpansTest, TheCasesFile) {
  const auto cases =
      test::read_json_lines(std::string(TANDEM_ROUTING_CASES) + "/request_spans.jsonl");
  for (const auto& c : cases) {
    EXPECT_EQ(request_of(c.at("text").get<std::string>()),
              c.at("request").get<std::vector<std::string>>())
        << c.at("name");
  }
  EXPECT_GE(cases.size(), 16u);
}

TEST(RequestSpansTest, EachWindowLooksOnlyAtItsOwnEnd) {
  const std::string text = "Translate this email into French.\nDear Anna,\nBest, Tom";
  EXPECT_EQ(request_of(text, true, false),
            std::vector<std::string>{"Translate this email into French."});
  EXPECT_EQ(request_of(text, false, true), std::vector<std::string>{"Best, Tom"});
  EXPECT_TRUE(request_of(text, false, false).empty());
}

TEST(RequestSpansTest, QuotationsBeyondTheCapacityStayInTheRequest) {
  std::string text;
  for (int i = 0; i < 12; ++i) {
    text += "say \"this quotation is long enough to be material\" ";
  }
  const RequestSpans request = find_request_spans(text, true, true);
  ASSERT_EQ(request.count, RequestSpans::kCapacity);
  // The last span runs to the end of the line: what could not be cut still counts.
  EXPECT_EQ(request.spans[request.count - 1].end, text.size());
}

TEST(RequestSpansTest, AnyBytesGiveSpansInsideTheText) {
  const std::string texts[] = {std::string("\xff\"\xe2\x80", 4), ":",     "\"", "'", "\xef\xbc",
                               std::string(1, '\0') + "：x",     "a:\n:b"};
  for (const auto& text : texts) {
    for (const auto& part : request_of(text)) {
      EXPECT_FALSE(part.empty());
    }
  }
}

}  // namespace
}  // namespace tandem::routing
