#include "routing/prompt_features.h"

#include <chrono>
#include <cmath>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "prompt_feature_reading.h"
#include "routing/prompt_cues_zh.h"
#include "routing/request_spans.h"
#include "routing/task_model.h"

namespace tandem::routing {
namespace {

using prompt_test::feature;
using prompt_test::log_count;
using prompt_test::of;

TEST(PromptFeatures, NamesAreUniqueSnakeCaseAndIndexed) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < kFeatureCount; ++i) {
    const auto name = feature_names()[i];
    EXPECT_FALSE(name.empty());
    for (char c : name) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << name;
    }
    EXPECT_TRUE(seen.insert(name).second) << "duplicate " << name;
    EXPECT_EQ(feature_index(name), i);
  }
  EXPECT_EQ(feature_index("no_such_feature"), kFeatureCount);
}

TEST(PromptFeatures, CodePromptHasCodeFeatures) {
  const auto f =
      of("Debug this Python function, it returns the wrong value:\n"
         "```python\ndef area(r):\n    return 3.14 * r ^ 2;\n```\n"
         "and explain why.");
  EXPECT_GE(feature(f, "code_symbols"), log_count(7));   // 6 backticks and a semicolon
  EXPECT_GE(feature(f, "code_keywords"), log_count(3));  // python, def, return
  EXPECT_GT(feature(f, "hard_task_cues"), 0);            // debug, "explain why"
  EXPECT_EQ(feature(f, "easy_task_cues"), 0);

  const auto plain = of("Tell me about the weather in spring.");
  EXPECT_EQ(feature(plain, "code_symbols"), 0);
  EXPECT_EQ(feature(plain, "code_keywords"), 0);
}

TEST(PromptFeatures, MathWordProblemHasMathFeatures) {
  const auto f =
      of("A train travels 120 km in 2 hours and then 90 km in 1.5 hours. How many km per hour is "
         "its average speed? Solve for x: 2x + 3 = 11.");
  EXPECT_GE(feature(f, "math_terms"), log_count(4));    // how many, per, average, solve
  EXPECT_GE(feature(f, "math_symbols"), log_count(2));  // + =
  EXPECT_GE(feature(f, "numbers"), log_count(7));
  EXPECT_GT(feature(f, "digit_ratio"), 0.05f);
  EXPECT_EQ(feature(f, "question_marks"), log_count(1));
  EXPECT_EQ(feature(f, "sentences"), log_count(3));  // "1.5" is not a full stop

  const auto symbols =
      of("Evaluate \xe2\x88\xab x\xc2\xb2 dx and \xe2\x88\x9a"
         "2 \xc3\x97 \xcf\x80");
  EXPECT_GE(feature(symbols, "math_symbols"), log_count(4));  // integral, root, times, pi
}

TEST(PromptFeatures, ExtractionPromptHasEasyCues) {
  const auto f =
      of("Extract the date from: \"The meeting moved to 12 March 2024.\" Format it as YYYY-MM-DD "
         "and list nothing else.");
  EXPECT_GE(feature(f, "easy_task_cues"), log_count(3));  // extract, format, list
  EXPECT_EQ(feature(f, "hard_task_cues"), 0);
  EXPECT_EQ(feature(f, "reasoning_cues"), 0);
  EXPECT_GT(feature(f, "capitalized_ratio"), 0);  // March, YYYY, MM, DD
}

TEST(PromptFeatures, MultipleChoiceOptionsAndYesNo) {
  const auto f =
      of("Which of the following is NOT a prime number?\nA. 2\nB) 9\n  (C) 13\nD: 17\n"
         "Answer yes or no: is 9 prime? True or false?");
  EXPECT_EQ(feature(f, "choice_options"), log_count(5));  // four options + "of the following"
  // Task cues count in the request: the short first line here (tests below).
  EXPECT_EQ(feature(f, "yes_no_cues"), 0);
  EXPECT_EQ(feature(of("Answer yes or no: is 9 prime? True or false?"), "yes_no_cues"),
            log_count(4));                               // "yes or no", yes, true, false
  EXPECT_EQ(feature(f, "negation_cues"), log_count(1));  // NOT
  EXPECT_EQ(feature(f, "lines"), log_count(6));
  // An option letter must be followed by a blank: "A.I." and "B.C." are not options.
  EXPECT_EQ(feature(of("A.I. is here.\nB.C. was long ago."), "choice_options"), 0);
}

TEST(PromptFeatures, PhrasesReplaceTheirWordsCues) {
  EXPECT_EQ(feature(of("Think step by step."), "reasoning_cues"), log_count(2));  // think + phrase
  EXPECT_EQ(feature(of("Reason step-by-step."), "reasoning_cues"), log_count(2));
  EXPECT_EQ(feature(of("one step at a time"), "reasoning_cues"), 0);
  const auto constraint = of("Use at least three and no more than five examples.");
  EXPECT_EQ(feature(constraint, "constraint_cues"), log_count(2));
  EXPECT_EQ(feature(constraint, "negation_cues"), 0);  // "least" only counts alone
  EXPECT_EQ(feature(of("Which is the least likely?"), "negation_cues"), log_count(1));
}

TEST(PromptFeatures, HardAndCreativeCues) {
  const auto hard =
      of("Prove that the square root of 2 is irrational, then design an algorithm and compare "
         "its complexity with the naive approach. Explain why step by step.");
  EXPECT_GE(feature(hard, "hard_task_cues"), log_count(5));  // prove design algorithm compare +
  EXPECT_GE(feature(hard, "reasoning_cues"), log_count(2));  // explain, step by step
  const auto creative = of("Write a short poem and a story about the sea.");
  EXPECT_EQ(feature(creative, "creative_cues"), log_count(3));  // write, poem, story
}

// Task cues name what is asked, so they count where the asking is (docs/ROUTER_TRAINING.md):
// pasted material that mentions a plan or a design does not make a request hard.
TEST(PromptFeatures, TaskCuesCountInTheRequestNotInPastedMaterial) {
  const std::string email =
      "Hi all, the design review moved the launch plan: we will analyze the strategy and "
      "compare options next week, then write the story for the press. "
      "Everyone must attend; no more than two people may skip. Please confirm by Friday. "
      "The architecture diagrams are attached and the research summary follows in a separate "
      "mail so that everybody can read it before the meeting starts on time, and the slides "
      "will be shared in the usual folder together with the notes of the previous review.";
  // A short first line is the request; the mail below it is material.
  const auto first = of("What day is the meeting? Just the day.\n\n" + email);
  EXPECT_EQ(feature(first, "hard_task_cues"), 0);
  EXPECT_EQ(feature(first, "creative_cues"), 0);
  EXPECT_EQ(feature(first, "factoid_cues"), log_count(1));  // what
  // After a long first line (the material), the request is the last line.
  const auto last = of(email + "\n\nClassify this mail as urgent or not.");
  EXPECT_EQ(feature(last, "easy_task_cues"), log_count(1));  // classify
  EXPECT_EQ(feature(last, "hard_task_cues"), log_count(2));  // the long line's first sentence
  // In one line, what follows a colon is material, until the sentence ends.
  const auto colon =
      of("Translate into French: \"We will design and analyze the plan.\" Keep it "
         "short.");
  EXPECT_EQ(feature(colon, "easy_task_cues"), log_count(1));  // translate
  EXPECT_EQ(feature(colon, "hard_task_cues"), 0);
  EXPECT_EQ(feature(colon, "constraint_cues"), 0);
  // Times are not colons that open material.
  EXPECT_EQ(feature(of("At 11:20 design a plan."), "hard_task_cues"), log_count(2));
  // Vocabulary features still read everything: the material is what the answer is about.
  EXPECT_GT(feature(of("Summarise:\nThe patient's diagnosis and treatment."), "domain_terms"), 0);
}

// Retrieval templates put a header or a preamble first and the request last ("Context:\n<the
// documents>\n\nQuestion: ..."): a short first line that names no task and asks no question is
// not the request, and a line's label ("Question:") names the request, not material.
TEST(PromptFeatures, ATemplatesRequestIsReadAfterItsHeader) {
  const std::string policy =
      "Customers may return any product within 30 days of delivery for a full refund.\n"
      "Digital goods are non-refundable once downloaded.\n";
  const std::string ask = "Analyze this policy for legal risks and draft a compliant revision.";
  for (const std::string& prompt : {
           "Context:\n" + policy + "\nQuestion: " + ask,
           "### Context\n" + policy + "### Question\n" + ask,
           "<context>\n" + policy + "</context>\n\n" + ask,
           "Use the following pieces of context to answer the question at the end.\n\n" + policy +
               "\nQuestion: " + ask + "\nHelpful Answer:",
           "Context information is below.\n---\n" + policy + "---\nQuery: " + ask + "\nAnswer: ",
           "参考资料：\n" + policy + "\n问题：请分析这项政策的法律风险并起草合规的修订版。",
       }) {
    SCOPED_TRACE(prompt);
    EXPECT_GT(feature(of(prompt), "hard_task_cues"), 0);
  }
  // A label's text at the top is material ("Context: <what to design>"), as any colon's.
  EXPECT_EQ(feature(of("Context: we design and analyze plans.\n" + policy + "Is it 30 days?"),
                    "hard_task_cues"),
            0);
  // A first line that asks a question in words no cue names is still the request: the material
  // below it ends where it ends.
  EXPECT_EQ(feature(of("How long do I have to send it back?\n" + policy +
                       "Design changes are analyzed yearly."),
                    "hard_task_cues"),
            0);
  // A first line that names its task keeps the last line out ("Thanks, Anna" or a quoted ask).
  EXPECT_EQ(feature(of("Translate this mail into French.\n" + policy + "Please design a plan."),
                    "hard_task_cues"),
            0);
  // A task before a colon is not a label: "Summarise:" at the end is the request itself.
  EXPECT_GT(feature(of("Report Q3\n" + policy + "Summarise:"), "easy_task_cues"), 0);
  // An agent's tool header names the tool, not a task ("list", "search", "sort"): the request
  // after the tool's result is read.
  const auto after_tool =
      of(R"(Tool result (pagerduty.list_incidents, service="data", sort=created_asc):)"
         "\n" +
         policy + "Request: Analyze these incidents and design an alerting policy.");
  EXPECT_EQ(feature(after_tool, "easy_task_cues"), 0);
  EXPECT_GT(feature(after_tool, "hard_task_cues"), 0);
}

// A prompt's length counts its first and last lines whole and the material between them at a
// quarter: three pages of a contract under a one-line question are not three pages of work.
TEST(PromptFeatures, MaterialBetweenTheEndsCountsAQuarterOfItsLength) {
  const std::string pages(4000, 'x');
  const auto one_line = of("Design a plan " + pages);
  EXPECT_FLOAT_EQ(feature(one_line, "log_chars"), log_count(14 + 4000));
  const auto carried = of("Context:\n" + pages + "\nQuestion: what is the notice period?");
  const double ends = 8 + 36;  // "Context:" and the question line
  EXPECT_NEAR(feature(carried, "log_chars"), log_count(ends + 0.25 * (4000 + 2)), 1e-5);
  // One line with blank lines around it is all request.
  EXPECT_FLOAT_EQ(feature(of("\n\n  hi  \n\n"), "log_chars"), log_count(10));
}

// Pages pasted between the first and last lines count their figures and terms as the length
// counts their bytes: a lookup in a fee schedule is not a hundred numbers of work. A shorter
// prompt's middle is its question (a harness's "Question: ..." before "Answer:") and counts
// whole.
TEST(PromptFeatures, PastedPagesCountTheirFiguresAtAQuarter) {
  std::string pages;
  for (int clause = 1; clause <= 80; ++clause) {
    pages += "Clause " + std::to_string(clause) + ": the fee is 30 USD.\n";  // two numbers
  }
  ASSERT_GT(pages.size(), 2 * kRequestWindowBytes);
  const auto carried = of("Fee schedule:\n" + pages + "Question: what is the fee in clause 7?");
  EXPECT_NEAR(feature(carried, "numbers"), log_count(1 + 0.25 * 160), 1e-5);
  // The same shape under two windows: every number counts.
  std::string short_pages;
  for (int clause = 1; clause <= 10; ++clause) {
    short_pages += "Clause " + std::to_string(clause) + ": the fee is 30 USD.\n";
  }
  const auto question = of("Fee schedule:\n" + short_pages + "Question: what is clause 7?");
  EXPECT_FLOAT_EQ(feature(question, "numbers"), log_count(21));
  // A long multiple-choice question's options are its shape, not material: counted whole.
  std::string options;
  for (const char letter : {'A', 'B', 'C', 'D'}) {
    options += std::string(1, letter) + ": " + std::string(600, 'x') + "\n";
  }
  EXPECT_FLOAT_EQ(feature(of("Answer the question.\n" + options + "Answer:"), "choice_options"),
                  log_count(4));
  // One long line is all request, as for the length.
  const std::string one_line(3000, 'x');
  EXPECT_FLOAT_EQ(feature(of("Add 2 and 3 " + one_line), "numbers"), log_count(2));
}

// "No explanation" asks for less work, not for an explanation: a task a negation forbids is not
// the task asked.
TEST(PromptFeatures, ATaskANegationForbidsIsNotTheTask) {
  for (const std::string prompt : {
           "List the ERROR lines from the log. Do not explain or analyze them.",
           "Summarize this in one line, no analysis needed.",
           "Label each ticket without explaining.",
           "把错误行挑出来，不要对错误做任何解释或分析。",
           "只回答数字，不用解释。",
       }) {
    SCOPED_TRACE(prompt);
    const auto features = of(prompt);
    EXPECT_EQ(feature(features, "hard_task_cues"), 0);
    EXPECT_EQ(feature(features, "reasoning_cues"), 0);
  }
  // A task named before the negation, or in another clause, is the task.
  EXPECT_GT(feature(of("Prove it without using induction."), "hard_task_cues"), 0);
  EXPECT_GT(feature(of("Don't translate it; analyze the grammar."), "hard_task_cues"), 0);
  EXPECT_GT(feature(of("不要翻译，请分析它的语法。"), "hard_task_cues"), 0);
  // Vocabulary features still count the negation.
  EXPECT_GT(feature(of("Do not explain."), "negation_cues"), 0);
}

TEST(PromptFeatures, ChineseCuesCountTowardTheSameFeatures) {
  // "Prove there are infinitely many primes and explain each step" / "translate into English".
  const auto hard = of("请证明存在无穷多个素数，并逐步解释每一步为什么成立。");
  EXPECT_EQ(feature(hard, "hard_task_cues"), log_count(1));  // 证明
  EXPECT_EQ(feature(hard, "reasoning_cues"), log_count(3));  // 逐步 解释 为什么
  EXPECT_EQ(feature(hard, "math_terms"), log_count(1));      // 素数
  const auto easy = of("把这句话翻译成英文：我们下周讨论设计方案。");
  EXPECT_EQ(feature(easy, "easy_task_cues"), log_count(1));  // 翻译; the rest is material
  EXPECT_EQ(feature(easy, "hard_task_cues"), 0);
  // The longest phrase ending at a character wins: 一步一步 is one cue, not two.
  EXPECT_EQ(feature(of("一步一步来"), "reasoning_cues"), log_count(1));
  // Phrases do not overlap: "翻译成" is 翻译, not 翻译 and 译成.
  EXPECT_EQ(feature(of("翻译成英文"), "easy_task_cues"), log_count(1));
  // Cues split by other text do not match.
  EXPECT_EQ(feature(of("证 明"), "hard_task_cues"), 0);
}

TEST(PromptFeatures, EveryChineseCueNamesAFeatureAndIsShort) {
  std::set<std::string_view> phrases;
  for (const auto& cue : zh_cues()) {
    EXPECT_LT(feature_index(cue.feature), kFeatureCount) << cue.phrase;
    EXPECT_FALSE(cue.phrase.empty());
    EXPECT_LE(cue.phrase.size(), 3 * kMaxZhCueChars) << cue.phrase;  // CJK: 3 bytes a character
    EXPECT_TRUE(phrases.insert(cue.phrase).second) << "duplicate " << cue.phrase;
  }
}

TEST(PromptFeatures, CjkTextSetsLanguageFeatures) {
  // "Summarise the main content of this article in three sentences." in Chinese.
  const auto f =
      of("\xe8\xaf\xb7\xe7\x94\xa8\xe4\xb8\x89\xe5\x8f\xa5\xe8\xaf\x9d\xe6\x80\xbb\xe7\xbb\x93\xe8"
         "\xbf\x99\xe7\xaf\x87\xe6\x96\x87\xe7\xab\xa0\xe7\x9a\x84\xe4\xb8\xbb\xe8\xa6\x81\xe5\x86"
         "\x85\xe5\xae\xb9\xe3\x80\x82");
  EXPECT_GT(feature(f, "cjk_ratio"), 0.9f);
  EXPECT_EQ(feature(f, "non_ascii_ratio"), 1.0f);
  EXPECT_EQ(feature(f, "log_words"), log_count(16));  // one per CJK character
  EXPECT_EQ(feature(f, "sentences"), log_count(1));   // the ideographic full stop
  EXPECT_EQ(feature(f, "avg_word_length"), 0);        // no Latin words

  // Arabic and Devanagari sentence marks end sentences; the Arabic comma is not a letter.
  const auto arabic = of("هل الماء مبلل؟ أجب بنعم أو لا، من فضلك.");
  EXPECT_EQ(feature(arabic, "question_marks"), log_count(1));
  EXPECT_EQ(feature(arabic, "sentences"), log_count(2));
  EXPECT_EQ(feature(arabic, "log_words"), log_count(9));
  const auto hindi = of("यह पहला वाक्य है। यह दूसरा वाक्य है।");
  EXPECT_EQ(feature(hindi, "sentences"), log_count(2));

  const auto english = of("Summarise the article.");
  EXPECT_EQ(feature(english, "cjk_ratio"), 0);
  EXPECT_EQ(feature(english, "non_ascii_ratio"), 0);
  const auto accented = of("R\xc3\xa9sum\xc3\xa9 du caf\xc3\xa9");
  EXPECT_EQ(feature(accented, "cjk_ratio"), 0);
  EXPECT_GT(feature(accented, "non_ascii_ratio"), 0);
  EXPECT_EQ(feature(accented, "log_words"), log_count(3));  // accents do not split words
}

TEST(PromptFeatures, EmptyPromptIsAllFinite) {
  const auto f = extract_features(PromptView{});
  for (size_t i = 0; i < kFeatureCount; ++i) {
    EXPECT_TRUE(std::isfinite(f.values[i])) << feature_names()[i];
    if (feature_names()[i] != "log_turns" && feature_names()[i] != "task_ngrams") {
      EXPECT_EQ(f.values[i], 0) << feature_names()[i];
    }
  }
  EXPECT_EQ(feature(f, "log_turns"), log_count(1));
  // No n-grams: nothing the task model can read, so its stand-in speaks, with no cues its bias.
  ASSERT_TRUE(TaskModel::builtin().stand_in());
  EXPECT_FLOAT_EQ(feature(f, "task_ngrams"),
                  static_cast<float>(TaskModel::builtin().stand_in()->bias));
}

TEST(PromptFeatures, MalformedUtf8AndControlBytesStayFinite) {
  std::string text = "abc \xff\xfe\xc3 \xe4\xb8 truncated \xf0\x9f\x98";
  text.push_back('\0');
  text += "\x01\x02 end";
  const auto f = of(text);
  for (size_t i = 0; i < kFeatureCount; ++i) {
    EXPECT_TRUE(std::isfinite(f.values[i])) << feature_names()[i];
  }
  EXPECT_GT(feature(f, "non_ascii_ratio"), 0);
}

TEST(PromptFeatures, ConversationShapeFeatures) {
  PromptView view;
  view.system = "You are a terse assistant.";
  view.last_user = "And in French?";
  view.turns = 5;
  view.total_chars = view.system.size() + view.last_user.size() + 400;
  const auto f = extract_features(view);
  EXPECT_EQ(feature(f, "log_turns"), log_count(5));
  EXPECT_EQ(feature(f, "log_system_chars"), log_count(view.system.size()));
  EXPECT_EQ(feature(f, "log_history_chars"), log_count(400));
  EXPECT_EQ(feature(f, "log_chars"), log_count(view.last_user.size()));
  // A caller that leaves total_chars unset gets no history rather than a negative one.
  view.total_chars = 0;
  EXPECT_EQ(feature(extract_features(view), "log_history_chars"), 0);
}

TEST(PromptFeatures, WordShapeFeatures) {
  const auto f = of("The Eiffel Tower stands in Paris. Internationalisation matters.");
  // Capitalised words not at a sentence start: Eiffel, Tower, Paris (of 8 words).
  EXPECT_FLOAT_EQ(feature(f, "capitalized_ratio"), 3.0f / 8.0f);
  EXPECT_FLOAT_EQ(feature(f, "long_word_ratio"), 1.0f / 8.0f);
  EXPECT_FLOAT_EQ(feature(f, "avg_word_length"), 54.0f / 8.0f);
  EXPECT_GT(feature(of("Who wrote Hamlet, and when?"), "factoid_cues"), 0);
}

TEST(PromptFeatures, LongPromptsAreLinearAndFinite) {
  std::string unit =
      "Explain why the 3 results differ: x = 2 + y; see `code` {block}. Which of the following "
      "is true? \xe4\xb8\xad\xe6\x96\x87 caf\xc3\xa9.\nA. yes\n";
  std::string text;
  while (text.size() < 200'000) {
    text += unit;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto f = of(text);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  for (size_t i = 0; i < kFeatureCount; ++i) {
    EXPECT_TRUE(std::isfinite(f.values[i])) << feature_names()[i];
  }
  // 200,000 bytes, of which what lies between the first and last lines counts a quarter.
  EXPECT_GT(feature(f, "log_chars"), 10.5f);
  // Not a benchmark (the machine may be loaded or sanitised): a quadratic scan would take
  // minutes here, a linear one about a millisecond.
  EXPECT_LT(std::chrono::duration<double>(elapsed).count(), 2.0);
}

}  // namespace
}  // namespace tandem::routing
