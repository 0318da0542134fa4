#include "net/sse.h"

#include <gtest/gtest.h>

namespace tandem::net {
namespace {

std::vector<std::string> feed_all(SseParser& parser, const std::vector<std::string>& reads) {
  std::vector<std::string> events;
  for (const auto& bytes : reads) {
    EXPECT_TRUE(parser.feed(bytes, events).ok());
  }
  return events;
}

TEST(SseParserTest, EventsSplitAnywhereAcrossReads) {
  SseParser parser;
  auto events = feed_all(parser, {"da", "ta: {\"a\"", ":1}\n", "\ndata: [DO", "NE]\n\n"});
  EXPECT_EQ(events, (std::vector<std::string>{"{\"a\":1}", "[DONE]"}));
}

TEST(SseParserTest, SeveralEventsInOneRead) {
  SseParser parser;
  auto events = feed_all(parser, {"data: 1\n\ndata: 2\n\ndata: 3\n\n"});
  EXPECT_EQ(events, (std::vector<std::string>{"1", "2", "3"}));
}

TEST(SseParserTest, CrLfCommentsOtherFieldsAndMultiLineData) {
  SseParser parser;
  auto events =
      feed_all(parser, {": keep-alive\r\n\r\nevent: message\r\nid: 7\r\ndata: a\r\ndata: b\r\n\r\n",
                        "data:no-space\n\n"});
  EXPECT_EQ(events, (std::vector<std::string>{"a\nb", "no-space"}));
}

TEST(SseParserTest, AnUnendedEventIsBounded) {
  SseParser parser(1024);
  std::vector<std::string> events;
  EXPECT_FALSE(parser.feed("data: " + std::string(2000, 'x'), events).ok());
}

TEST(SseParserTest, FramesEvents) {
  EXPECT_EQ(sse_event("{}"), "data: {}\n\n");
}

}  // namespace
}  // namespace tandem::net
