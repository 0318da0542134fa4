#pragma once
// The Chinese half of the prompt features' task cues (prompt_vocabulary.cpp holds the English
// words). Chinese has no spaces, so cues are phrases of one to four characters matched where
// they end inside a run of CJK characters; each counts toward the same feature as its English
// counterpart ("证明" and "prove" both count in hard_task_cues), so one set of weights serves
// both languages. Japanese and Korean phrases (prompt_cues_ja_ko.cpp), read in the same runs
// (kana and Hangul are CJK characters to the scan), share the table. docs/ROUTER_TRAINING.md
// lists the categories.
//
// Thread-safety: immutable static data.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace tandem::routing {

struct ZhCue {
  std::string_view phrase;   // UTF-8, 1 to kMaxZhCueChars CJK characters
  std::string_view feature;  // a name of feature_names()
};

inline constexpr size_t kMaxZhCueChars = 4;

std::span<const ZhCue> zh_cues();
std::span<const ZhCue> ja_ko_cues();

// The Chinese, Japanese and Korean cues by the FNV-1a hash of their UTF-8 bytes: open addressing,
// built once on first use. Thread-safety: immutable once built (zh_cue_table() builds it under a
// static's guard).
class ZhCueTable {
 public:
  static constexpr size_t kSlots = 1024;  // power of two, load factor under 0.4

  ZhCueTable();

  // Filters that let most characters skip the lookups (Chinese text costs a bit test or two
  // per character, not four hashes): whether a one-character phrase is this character, and
  // whether a longer phrase may end with these two (false positives only cost a lookup).
  bool may_be_a_phrase(uint32_t cp) const { return test(singles_, cp); }
  bool may_end_a_phrase(uint32_t previous, uint32_t cp) const {
    return test(pairs_, pair_key(previous, cp));
  }

  // The feature (prompt_feature_ids.h) the phrase counts toward, or kNoCue.
  uint8_t find(std::string_view phrase) const;

 private:
  static constexpr uint32_t kFilterBits = 0x10000;
  using Filter = std::array<uint64_t, kFilterBits / 64>;

  static uint32_t pair_key(uint32_t previous, uint32_t cp) {
    return (previous * 31u + cp) & (kFilterBits - 1);
  }
  static void set(Filter& filter, uint32_t key) {
    key &= kFilterBits - 1;
    filter[key / 64] |= uint64_t{1} << (key % 64);
  }
  static bool test(const Filter& filter, uint32_t key) {
    key &= kFilterBits - 1;
    return (filter[key / 64] >> (key % 64) & 1) != 0;
  }

  // The last two code points of a phrase (0 for the first when it has one).
  static std::pair<uint32_t, uint32_t> last_two_code_points(std::string_view text);

  std::vector<ZhCue> cues_;  // zh_cues(), then ja_ko_cues()
  std::array<uint16_t, kSlots> slots_{};
  std::array<uint8_t, kSlots> features_{};
  Filter singles_{};
  Filter pairs_{};
};

// The run of CJK characters in progress in one scan (prompt_scanner.cpp), for the cue phrases
// that end at each character (a character that does not follow the previous one directly
// starts a new run). Thread-safety: a value owned by one scan.
struct ZhRun {
  std::array<size_t, kMaxZhCueChars> starts{};  // byte offsets of the last characters, a ring
  size_t length = 0;                            // characters in the run
  size_t end = 0;                               // byte offset just past the run
  size_t matched_until = 0;                     // characters of the run already in a counted phrase
  uint32_t previous = 0;                        // the run's previous character

  // Adds the character at [begin, begin + bytes); returns how many characters a phrase ending
  // with it may have, longest first, or 0 when the filters rule every phrase out (most
  // characters: this is the per-character cost of Chinese text).
  size_t add(uint32_t cp, size_t begin, size_t bytes, const ZhCueTable& cues) {
    if (begin != end) {
      length = 0;
      matched_until = 0;
    }
    starts[length % kMaxZhCueChars] = begin;
    ++length;
    end = begin + bytes;
    const uint32_t before = previous;
    previous = cp;
    // Phrases do not overlap: in "翻译成" the match "翻译" leaves "译成" uncounted.
    const size_t room = std::min(length - matched_until, kMaxZhCueChars);
    if (room >= 2 && cues.may_end_a_phrase(before, cp)) {
      return room;
    }
    return cues.may_be_a_phrase(cp) ? 1 : 0;
  }

  // The last `characters` characters of the run.
  std::string_view last(std::string_view text, size_t characters) const {
    const size_t start = starts[(length - characters) % kMaxZhCueChars];
    return text.substr(start, end - start);
  }
};

// The table of zh_cues(), built on first use.
const ZhCueTable& zh_cue_table();

}  // namespace tandem::routing
