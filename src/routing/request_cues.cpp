#include "routing/request_cues.h"

namespace tandem::routing::prompt_detail {
namespace {

// A line longer than this many characters is read as material (a pasted email, an article),
// not as the request. Characters, not bytes: a Chinese request is three bytes a character.
constexpr size_t kMaxInstructionLineChars = 400;

// A line's label before a colon: at most two words ("User question:") or four ideographs
// ("用户问题：").
constexpr size_t kMaxLabelWords = 2;
constexpr size_t kMaxLabelIdeographs = 4;

bool asks_something(const RequestCues::CueCounts& cues) {
  return std::any_of(std::begin(kInstructionCues), std::end(kInstructionCues),
                     [&](uint8_t cue) { return cues[cue] > 0; });
}

}  // namespace

void RequestCues::close_sentence() {
  if (sentence_has_content_) {
    if (line_sentences_ == 0) {
      line_first_cues_ = sentence_cues_;
    }
    line_last_cues_ = sentence_cues_;
    for (size_t i = 0; i < kFeatureCount; ++i) {
      line_cues_[i] += sentence_cues_[i];
    }
    ++line_sentences_;
  }
  sentence_cues_ = {};
  sentence_has_content_ = false;
  in_content_ = false;
  label_open_ = false;
}

// A colon: what follows is material ("Classify this review: ..."), unless what precedes it is
// a line's label that asks nothing ("Question: ...", "问题：..."). A label's text is material
// at the top of a prompt ("Context: ...") and the request at its end ("Query: ..."), so its
// cues are kept apart (label_cues_) for close_line to count only on the last line.
void RequestCues::open_colon_material(size_t words, size_t ideographs) {
  in_content_ = true;
  if (line_label_) {
    return;
  }
  const size_t line_words = words - line_words_begin_;
  const size_t line_ideographs = ideographs - line_ideographs_begin_;
  if (line_words - line_ideographs <= kMaxLabelWords && line_ideographs <= kMaxLabelIdeographs &&
      !asks_something(line_cues_) && !asks_something(sentence_cues_)) {
    line_label_ = true;
    label_open_ = true;
  }
}

// The request is the first line when it is short ("Translate this into French:" over a pasted
// email); a long first line is material, so the request is its first sentence and the last line
// (whole when short, else its last sentence: "<article>\n\nSummarise the above."). When the
// first line is short and asks (first_line_asks), the last line is not added: pasted mail ends
// in short lines too ("Thanks, Anna").
bool RequestCues::close_line(size_t code_points, bool asked, size_t words, size_t ideographs) {
  close_sentence();
  const bool had_content = line_sentences_ > 0;
  if (had_content) {
    const bool whole = code_points - line_begin_ <= kMaxInstructionLineChars;
    if (lines_with_content_ == 0) {
      first_line_short_ = whole;
      first_line_cues_ = whole ? line_cues_ : line_first_cues_;
      first_line_question_ = asked;
    }
    // A bare label ends a template ("Helpful Answer:", "回答："): the request is the line
    // before it.
    if (!line_label_ || content_after_label_) {
      last_line_cues_ = whole ? line_cues_ : line_last_cues_;
      if (whole) {
        for (size_t i = 0; i < kFeatureCount; ++i) {
          last_line_cues_[i] += label_cues_[i];
        }
      }
    }
    ++lines_with_content_;
  }
  line_cues_ = {};
  label_cues_ = {};
  line_label_ = false;
  content_after_label_ = false;
  line_words_begin_ = words;
  line_ideographs_begin_ = ideographs;
  line_sentences_ = 0;
  line_begin_ = code_points;
  return had_content;
}

size_t RequestCues::count(uint8_t cue) const {
  const bool add_last = lines_with_content_ > 1 && (!first_line_short_ || !first_line_asks());
  return first_line_cues_[cue] + (add_last ? last_line_cues_[cue] : 0);
}

// Whether the first line is a request: it names a task or asks a question. One that does
// neither is a title, a greeting, a fence or a template's preamble ("Context:", "Use the
// following pieces of context to answer the question at the end."), and the request is the
// last line.
bool RequestCues::first_line_asks() const {
  return first_line_question_ || asks_something(first_line_cues_);
}

void LineCounts::keep_line(const Counts& cues, size_t numbers, bool first) {
  for (size_t i = 0; i < kFeatureCount; ++i) {
    last_[i] = cues[i] - line_start_[i];
  }
  last_numbers_ = numbers - line_start_numbers_;
  if (first) {
    first_ = last_;
    first_numbers_ = last_numbers_;
  }
}

}  // namespace tandem::routing::prompt_detail
