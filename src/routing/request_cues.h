#pragma once
// Where a prompt asks for something: the task cues of its first and last lines, read as the
// prompt scanner (prompt_scanner.cpp) passes over the text. What is pasted after a colon to be
// classified, translated or summarised mentions "plan" or "design" without asking for one, and
// a template's label ("Question:", "问题：") names the request only on the last line, so a cue
// counts toward the task asked only where the asking is.
//
// Thread-safety: one instance per scan; not shared.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "routing/prompt_feature_ids.h"

namespace tandem::routing::prompt_detail {

// The cues that name the task asked for (prompt_features.h): counted in the instruction only.
inline constexpr uint8_t kInstructionCues[] = {kEasyTaskCues,  kYesNoCues,    kHardTaskCues,
                                               kReasoningCues, kCreativeCues, kConstraintCues,
                                               kFactoidCues};

inline bool is_instruction_cue(uint8_t cue) {
  return std::find(std::begin(kInstructionCues), std::end(kInstructionCues), cue) !=
         std::end(kInstructionCues);
}

class RequestCues {
 public:
  using CueCounts = std::array<uint32_t, kFeatureCount>;

  // A task cue of the sentence in progress (the scanner has left out negated ones).
  void add(uint8_t cue) {
    if (label_open_) {
      ++label_cues_[cue];
    } else if (!in_content_) {
      ++sentence_cues_[cue];
    }
  }

  // A letter, digit or ideograph: the sentence has content, and so has a label's line.
  void mark_content() {
    content_after_label_ = line_label_;
    sentence_has_content_ = true;
  }

  // Ends the sentence in progress (at a terminator, a line break or the end of the text).
  void close_sentence();

  // A colon, after `words` words of which `ideographs` ideographs in the whole text so far.
  void open_colon_material(size_t words, size_t ideographs);

  // Ends the line in progress, with the text's counts so far: `code_points`, whether a question
  // was asked, `words` and `ideographs`. True when the line had content.
  bool close_line(size_t code_points, bool asked, size_t words, size_t ideographs);

  // How often `cue` names the task where the request is (the first line, and the last).
  size_t count(uint8_t cue) const;

  size_t lines_with_content() const { return lines_with_content_; }

 private:
  bool first_line_asks() const;

  CueCounts sentence_cues_{};
  CueCounts line_cues_{};
  CueCounts line_first_cues_{};
  CueCounts line_last_cues_{};
  CueCounts first_line_cues_{};
  CueCounts last_line_cues_{};
  size_t line_sentences_ = 0;
  size_t line_begin_ = 0;  // code points before the line in progress
  size_t lines_with_content_ = 0;
  bool first_line_short_ = false;
  bool first_line_question_ = false;
  // The line's label ("Question:"), if it opens with one, and the cues of the text it names.
  CueCounts label_cues_{};
  bool line_label_ = false;
  bool label_open_ = false;           // in the label's text, until its sentence ends
  bool content_after_label_ = false;  // the label names something on its line
  size_t line_words_begin_ = 0;       // words and ideographs before the line in progress
  size_t line_ideographs_begin_ = 0;
  bool sentence_has_content_ = false;
  bool in_content_ = false;  // after a colon: material
};

// The scan's running counts (cues and numbers) where the line in progress began and on the first
// and last lines with content: what lies between those two lines is material, weighed apart
// (prompt_scanner.cpp).
class LineCounts {
 public:
  using Counts = std::array<size_t, kFeatureCount>;

  void start_line(const Counts& cues, size_t numbers) {
    line_start_ = cues;
    line_start_numbers_ = numbers;
  }

  // The line that is closing had content; `first`: it is the first such line.
  void keep_line(const Counts& cues, size_t numbers, bool first);

  // What the first and last lines hold of `cue`, and of the numbers.
  size_t cues_in_request(uint8_t cue) const { return first_[cue] + last_[cue]; }
  size_t numbers_in_request() const { return first_numbers_ + last_numbers_; }

 private:
  Counts line_start_{};
  Counts first_{};
  Counts last_{};
  size_t line_start_numbers_ = 0;
  size_t first_numbers_ = 0;
  size_t last_numbers_ = 0;
};

}  // namespace tandem::routing::prompt_detail
