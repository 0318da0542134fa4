// decode_utf8: every well-formed length decodes to its code point, and every malformed or cut
// sequence decodes as U+FFFD one byte at a time, so scanners never skip a byte they should read.
// common_ideograph_at, the scanners' fast path for Chinese, agrees with decode_utf8 wherever it
// answers, and answers 0 for everything outside U+4E00 to U+9FFF.

#include "common/utf8.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tandem {
namespace {

struct DecodeCase {
  std::string name;
  std::string bytes;  // decoded from offset 0
  uint32_t code_point;
  size_t length;
};

// What the three-byte path (CJK text) and the general path must agree on.
const std::vector<DecodeCase> kCases = {
    {"ascii", "a", 'a', 1},
    {"two bytes", "\xc3\xa9", 0xe9, 2},
    {"three bytes, an ideograph", "\xe4\xb8\xad", 0x4e2d, 3},
    {"three bytes, the last BMP character", "\xef\xbf\xbf", 0xffff, 3},
    {"three bytes, a full-width comma", "\xef\xbc\x8c", 0xff0c, 3},
    {"four bytes", "\xf0\x9f\x98\x80", 0x1f600, 4},
    {"three bytes cut after two", "\xe4\xb8", kReplacementCharacter, 1},
    {"three bytes cut after one", "\xe4", kReplacementCharacter, 1},
    {"three bytes, second not a continuation", "\xe4\x41\xad", kReplacementCharacter, 1},
    {"three bytes, third not a continuation", "\xe4\xb8\x41", kReplacementCharacter, 1},
    {"a lone continuation byte", "\x80", kReplacementCharacter, 1},
    {"a byte that never leads", "\xff", kReplacementCharacter, 1},
    {"an overlong lead", "\xc0\x80", kReplacementCharacter, 1},
    {"four bytes cut after three", "\xf0\x9f\x98", kReplacementCharacter, 1},
};

TEST(DecodeUtf8Test, EachCaseDecodesToItsCodePointAndLength) {
  for (const auto& c : kCases) {
    uint32_t cp = 0;
    const size_t length = decode_utf8(c.bytes, 0, cp);
    EXPECT_EQ(cp, c.code_point) << c.name;
    EXPECT_EQ(length, c.length) << c.name;
  }
}

TEST(DecodeUtf8Test, ACutSequenceAtTheEndOfALongerTextIsReplacedNotReadPast) {
  // The three-byte path must check the text's end, not only the lead byte: a view whose last
  // character is cut must not read the bytes the view leaves out.
  const std::string buffer = "ab\xe4\xb8\xad";
  const std::string_view cut(buffer.data(), 4);  // "ab" and two bytes of 中
  uint32_t cp = 0;
  EXPECT_EQ(decode_utf8(cut, 2, cp), 1u);
  EXPECT_EQ(cp, kReplacementCharacter);
  EXPECT_EQ(decode_utf8(cut, 3, cp), 1u);
  EXPECT_EQ(cp, kReplacementCharacter);
}

TEST(DecodeUtf8Test, EveryCharacterOfAMixedTextIsVisitedOnce) {
  const std::string text = "A中\xe4\xb8,é\xff😀";
  std::vector<uint32_t> decoded;
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    i += decode_utf8(text, i, cp);
    decoded.push_back(cp);
  }
  const std::vector<uint32_t> expected = {'A', 0x4e2d, kReplacementCharacter, kReplacementCharacter,
                                          ',', 0xe9,   kReplacementCharacter, 0x1f600};
  EXPECT_EQ(decoded, expected);
}

// A fast path (common_ideograph_at, kana_at) gives each case's code point, 0 outside its range,
// and decode_utf8 reads the same character where it gives one.
void expect_fast_path_agrees(uint32_t (*fast)(std::string_view, size_t),
                             const std::vector<DecodeCase>& cases) {
  for (const auto& c : cases) {
    EXPECT_EQ(fast(c.bytes, 0), c.code_point) << c.name;
    if (c.code_point != 0) {
      uint32_t cp = 0;
      EXPECT_EQ(decode_utf8(c.bytes, 0, cp), c.length) << c.name;
      EXPECT_EQ(cp, c.code_point) << c.name;
    }
  }
}

TEST(CommonIdeographAtTest, AgreesWithDecodeUtf8InsideTheRangeAndIsZeroOutside) {
  const std::vector<DecodeCase> cases = {
      {"the first common ideograph", "\xe4\xb8\x80", 0x4e00, 3},
      {"the last common ideograph", "\xe9\xbf\xbf", 0x9fff, 3},
      {"an ideograph", "\xe4\xb8\xad", 0x4e2d, 3},
      {"just below the range (extension A)", "\xe4\xb7\xbf", 0, 0},
      {"just above the range (Yi)", "\xea\x80\x80", 0, 0},
      {"a full-width comma", "\xef\xbc\x8c", 0, 0},
      {"an ideographic full stop", "\xe3\x80\x82", 0, 0},
      {"ascii", "a", 0, 0},
      {"cut after two bytes", "\xe4\xb8", 0, 0},
      {"second byte not a continuation", "\xe4\x41\xad", 0, 0},
      {"third byte not a continuation", "\xe4\xb8\x41", 0, 0},
      {"a lone continuation byte", "\x80\x80\x80", 0, 0},
  };
  expect_fast_path_agrees(common_ideograph_at, cases);
}

TEST(CommonIdeographAtTest, NeverReadsPastTheEndOfAView) {
  const std::string buffer = "a\xe4\xb8\xad";
  const std::string_view cut(buffer.data(), 3);  // "a" and two bytes of 中
  EXPECT_EQ(common_ideograph_at(cut, 1), 0u);
  EXPECT_EQ(common_ideograph_at(buffer, 1), 0x4e2du);
}

TEST(KanaAtTest, AgreesWithDecodeUtf8InsideTheRangeAndIsZeroOutside) {
  const std::vector<DecodeCase> cases = {
      {"the first of the hiragana block", "\xe3\x81\x80", 0x3040, 3},
      {"the last of the katakana block", "\xe3\x83\xbf", 0x30ff, 3},
      {"hiragana a", "\xe3\x81\x82", 0x3042, 3},
      {"katakana ka", "\xe3\x82\xab", 0x30ab, 3},
      {"just below (CJK punctuation)", "\xe3\x80\xbf", 0, 0},
      {"just above (bopomofo)", "\xe3\x84\x80", 0, 0},
      {"an ideograph", "\xe4\xb8\xad", 0, 0},
      {"cut after two bytes", "\xe3\x81", 0, 0},
      {"third byte not a continuation", "\xe3\x81\x41", 0, 0},
  };
  expect_fast_path_agrees(kana_at, cases);
  const std::string buffer = "a\xe3\x81\x82";
  EXPECT_EQ(kana_at(std::string_view(buffer.data(), 3), 1), 0u);  // never past the view
  EXPECT_EQ(kana_at(buffer, 1), 0x3042u);
}

TEST(ArabicOrDevanagariMarkTest, TheSixMarksAndNotTheirNeighbours) {
  for (const uint32_t mark : {0x060cu, 0x061bu, 0x061fu, 0x06d4u, 0x0964u, 0x0965u}) {
    EXPECT_TRUE(is_arabic_or_devanagari_mark(mark)) << std::hex << mark;
  }
  // The marks' neighbours, letters, the ends of the table and beyond it.
  for (const uint32_t other : {0x060bu, 0x060du, 0x061au, 0x061cu, 0x061eu,   0x0620u,    0x06d3u,
                               0x06d5u, 0x0963u, 0x0966u, 0x0627u, 0x0915u,   0x05ffu,    0x0600u,
                               0x097fu, 0x0980u, 0x0u,    0x3002u, 0x10ffffu, 0xffffffffu}) {
    EXPECT_FALSE(is_arabic_or_devanagari_mark(other)) << std::hex << other;
  }
}

}  // namespace
}  // namespace tandem
