#include "engine/text_stream.h"

#include <gtest/gtest.h>

namespace tandem::engine {
namespace {

// Feeds pieces one by one and returns what each push released.
std::vector<std::string> feed(TextStream& stream, const std::vector<std::string>& pieces) {
  std::vector<std::string> released;
  for (const auto& piece : pieces) {
    released.push_back(stream.push(piece).text);
  }
  return released;
}

TEST(Utf8Test, CompletePrefixHoldsBackOnlyUnfinishedSequences) {
  EXPECT_EQ(utf8_complete_prefix_length("abc"), 3U);
  EXPECT_EQ(utf8_complete_prefix_length("a\xC3"), 1U);         // half of "é"
  EXPECT_EQ(utf8_complete_prefix_length("a\xC3\xA9"), 3U);     // "é"
  EXPECT_EQ(utf8_complete_prefix_length("a\xE4\xBD"), 1U);     // two thirds of "你"
  EXPECT_EQ(utf8_complete_prefix_length("\xF0\x9F\x98"), 0U);  // three quarters of an emoji
  EXPECT_EQ(utf8_complete_prefix_length("a\xFF"), 2U);         // invalid: never completes
  EXPECT_EQ(utf8_complete_prefix_length("a\xE0\x80"), 3U);     // overlong: never valid
}

TEST(Utf8Test, SanitizeReplacesInvalidBytes) {
  EXPECT_EQ(utf8_sanitize("ok"), "ok");
  EXPECT_EQ(utf8_sanitize("a\xFF"
                          "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(utf8_sanitize("\xC3"), "\xEF\xBF\xBD");
  EXPECT_EQ(utf8_sanitize("\xE4\xBD\xA0"), "\xE4\xBD\xA0");
}

TEST(TextStreamTest, MultiByteCharacterSplitAcrossTokensIsReleasedWhole) {
  TextStream stream({});
  auto out = feed(stream, {"\xE4", "\xBD", "\xA0!"});
  EXPECT_EQ(out, (std::vector<std::string>{"", "", "\xE4\xBD\xA0!"}));
}

TEST(TextStreamTest, StopStringAcrossTokensIsNeverEmitted) {
  TextStream stream({"The end"});
  auto a = stream.push("happy. Th");
  EXPECT_EQ(a.text, "happy. ");  // "Th" might start the stop string
  EXPECT_FALSE(a.stopped);
  auto b = stream.push("e e");
  EXPECT_EQ(b.text, "");
  auto c = stream.push("nd and more");
  EXPECT_TRUE(c.stopped);
  EXPECT_EQ(c.text, "");
  EXPECT_EQ(stream.released(), "happy. ");
  EXPECT_EQ(stream.finish(), "");
}

TEST(TextStreamTest, FalseStartIsReleasedOnceItCannotMatch) {
  TextStream stream({"STOP"});
  EXPECT_EQ(stream.push("ST").text, "");
  EXPECT_EQ(stream.push("AR").text, "STAR");
  EXPECT_EQ(stream.released(), "STAR");
}

TEST(TextStreamTest, EarliestOfSeveralStopStringsWins) {
  TextStream stream({"world", "lo w"});
  auto update = stream.push("hello world");
  EXPECT_TRUE(update.stopped);
  EXPECT_EQ(update.text, "hel");
}

TEST(TextStreamTest, HeldBackPrefixIsReleasedAtFinish) {
  TextStream stream({"\n\n"});
  EXPECT_EQ(stream.push("line\n").text, "line");
  EXPECT_EQ(stream.finish(), "\n");
  EXPECT_EQ(stream.released(), "line\n");
}

TEST(TextStreamTest, NothingAfterStop) {
  TextStream stream({"x"});
  EXPECT_TRUE(stream.push("ax").stopped);
  auto after = stream.push("more");
  EXPECT_TRUE(after.stopped);
  EXPECT_EQ(after.text, "");
  EXPECT_EQ(stream.released(), "a");
}

TEST(TextStreamTest, EmptyStopStringsAreIgnored) {
  TextStream stream({""});
  EXPECT_EQ(stream.push("abc").text, "abc");
}

}  // namespace
}  // namespace tandem::engine
