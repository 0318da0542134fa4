// Where the scan counts a task cue as the task asked (request_cues.h): the first and last lines,
// outside material after a colon and a label's text above the last line; and the first and
// last lines' running counts that the material is weighed apart from. The tests drive the
// tracker as prompt_scanner.cpp does: words, colons, sentence and line ends.

#include "routing/request_cues.h"

#include <gtest/gtest.h>

#include "routing/prompt_code_points.h"

namespace tandem::routing::prompt_detail {
namespace {

// Drives a RequestCues with the text's running counts, as the scanner keeps them.
struct Lines {
  RequestCues cues;
  size_t code_points = 0;
  size_t words = 0;

  void word(uint8_t cue = 255) {
    ++words;
    code_points += 5;
    cues.mark_content();
    if (cue != 255) {
      cues.add(cue);
    }
  }
  void colon() { cues.open_colon_material(words, 0); }
  void stop() { cues.close_sentence(); }
  bool line_break(bool asked = false) { return cues.close_line(code_points, asked, words, 0); }
};

TEST(RequestCues, ACueAfterAColonIsMaterial) {
  Lines text;  // "Classify this review: we planned a design"
  text.word(kEasyTaskCues);
  text.word();
  text.word();
  text.colon();
  text.word(kHardTaskCues);
  EXPECT_TRUE(text.line_break());
  EXPECT_EQ(text.cues.count(kEasyTaskCues), 1u);
  EXPECT_EQ(text.cues.count(kHardTaskCues), 0u);
}

TEST(RequestCues, AShortFirstLineThatAsksLeavesTheLastLineOut) {
  Lines text;  // "Translate this email:\n<mail>\nPlease analyse it"
  text.word(kEasyTaskCues);
  text.word();
  text.colon();
  text.line_break();
  text.word();
  text.line_break();
  text.word();
  text.word(kHardTaskCues);
  text.line_break();
  EXPECT_EQ(text.cues.lines_with_content(), 3u);
  EXPECT_EQ(text.cues.count(kEasyTaskCues), 1u);
  EXPECT_EQ(text.cues.count(kHardTaskCues), 0u);
}

TEST(RequestCues, AFirstLineThatAsksNothingLeavesTheRequestToTheLastLine) {
  Lines text;  // "Context\n<text>\nProve it"
  text.word();
  text.line_break();
  text.word();
  text.line_break();
  text.word(kHardTaskCues);
  text.line_break();
  EXPECT_EQ(text.cues.count(kHardTaskCues), 1u);
}

TEST(RequestCues, ALabelsTextCountsOnlyOnTheLastLine) {
  Lines text;  // "Question: prove it\n<text>\nQuestion: prove it"
  text.word();
  text.colon();  // one word before the colon, no task: a label
  text.word(kHardTaskCues);
  text.line_break();
  text.word();
  text.line_break();
  text.word();
  text.colon();
  text.word(kHardTaskCues);
  text.line_break();
  EXPECT_EQ(text.cues.count(kHardTaskCues), 1u);
}

TEST(RequestCues, ALineWithoutContentIsNotCounted) {
  Lines text;
  EXPECT_FALSE(text.line_break());
  text.word(kFactoidCues);
  text.stop();
  EXPECT_TRUE(text.line_break());
  EXPECT_EQ(text.cues.lines_with_content(), 1u);
  EXPECT_EQ(text.cues.count(kFactoidCues), 1u);
}

TEST(RequestCues, OnlyTaskCuesAreInstructionCues) {
  EXPECT_TRUE(is_instruction_cue(kHardTaskCues));
  EXPECT_TRUE(is_instruction_cue(kConstraintCues));
  EXPECT_FALSE(is_instruction_cue(kMathTerms));
  EXPECT_FALSE(is_instruction_cue(kChoiceOptions));
}

TEST(LineCounts, TheFirstAndLastLinesAreKeptTheMiddleIsNot) {
  LineCounts lines;
  LineCounts::Counts cues{};
  size_t numbers = 0;
  lines.start_line(cues, numbers);
  cues[kMathTerms] += 1;  // first line: one term, two numbers
  numbers += 2;
  lines.keep_line(cues, numbers, true);
  lines.start_line(cues, numbers);
  cues[kMathTerms] += 10;  // the material: ten terms, forty numbers
  numbers += 40;
  lines.keep_line(cues, numbers, false);
  lines.start_line(cues, numbers);
  cues[kMathTerms] += 3;  // last line: three terms, one number
  numbers += 1;
  lines.keep_line(cues, numbers, false);
  EXPECT_EQ(lines.cues_in_request(kMathTerms), 4u);
  EXPECT_EQ(lines.numbers_in_request(), 3u);
}

TEST(PromptText, ChoiceOptionsOpenALine) {
  for (const std::string_view option : {"A. Paris", "b) Rome", "C: Oslo", "(D) Bern", "E."}) {
    EXPECT_TRUE(opens_choice_option(option, 0)) << option;
  }
  for (const std::string_view text : {"A.B. Smith", "I) x", "(Z) no", "Apples", "A)x", ""}) {
    EXPECT_FALSE(opens_choice_option(text, 0)) << text;
  }
  EXPECT_TRUE(opens_choice_option("x\nB) two", 2));
}

TEST(PromptText, ATerminatorEndsASentenceBeforeABlankOrTheEnd) {
  EXPECT_TRUE(ends_sentence("Done. Next", 5));
  EXPECT_TRUE(ends_sentence("Done.", 5));
  EXPECT_TRUE(ends_sentence("He said \"stop.\" Then", 14));
  EXPECT_TRUE(ends_sentence("(see above.)\nNext", 11));
  EXPECT_FALSE(ends_sentence("3.5 kg", 2));
  EXPECT_FALSE(ends_sentence("e.g. this", 2));
}

}  // namespace
}  // namespace tandem::routing::prompt_detail
