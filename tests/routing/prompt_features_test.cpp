#include "routing/prompt_features.h"

#include <chrono>
#include <cmath>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace tandem::routing {
namespace {

float feature(const PromptFeatures& features, std::string_view name) {
  const size_t index = feature_index(name);
  EXPECT_LT(index, kFeatureCount) << name;
  return index < kFeatureCount ? features.values[index] : NAN;
}

PromptFeatures of(std::string_view user) {
  PromptView view;
  view.last_user = user;
  view.total_chars = user.size();
  return extract_features(view);
}

float log_count(double count) {
  return static_cast<float>(std::log1p(count));
}

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
  EXPECT_EQ(feature(f, "yes_no_cues"), log_count(4));     // "yes or no", yes, true, false
  EXPECT_EQ(feature(f, "negation_cues"), log_count(1));   // NOT
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
  EXPECT_EQ(feature(creative, "creative_cues"), log_count(2));
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
    if (feature_names()[i] != "log_turns") {
      EXPECT_EQ(f.values[i], 0) << feature_names()[i];
    }
  }
  EXPECT_EQ(feature(f, "log_turns"), log_count(1));
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
  EXPECT_GT(feature(f, "log_chars"), 12.0f);
  // Not a benchmark (the machine may be loaded or sanitised): a quadratic scan would take
  // minutes here, a linear one about a millisecond.
  EXPECT_LT(std::chrono::duration<double>(elapsed).count(), 2.0);
}

}  // namespace
}  // namespace tandem::routing
