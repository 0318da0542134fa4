// How the cue scan reads the words of Arabic, Hindi and Vietnamese (prompt_words_ar_hi_vi.h) and
// the phrases of Thai (prompt_cues_th.cpp):
// letters of two and three UTF-8 bytes, Vietnamese capitals folded, two-syllable Vietnamese
// entries found as a pair of words with one space between, Arabic words found without their
// vowel signs and with the conjunction "and" joined to them. What each word counts toward is
// checked for every entry by prompt_cues_intl_test.cpp.

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "prompt_feature_reading.h"
#include "routing/prompt_code_points.h"
#include "routing/prompt_cues_th.h"
#include "routing/prompt_features.h"

namespace tandem::routing {
namespace {

using prompt_detail::fold_letter;
using prompt_detail::vocabulary_letter_at;

using prompt_test::feature;
using prompt_test::log_count;
using prompt_test::of;

TEST(PromptCuesScripts, VietnameseCapitalsFoldAndKeepTheirLength) {
  EXPECT_EQ(fold_letter(0x1ea4), 0x1ea5u);  // Ấ ấ
  EXPECT_EQ(fold_letter(0x1ec6), 0x1ec7u);  // Ệ ệ
  EXPECT_EQ(fold_letter(0x1ef8), 0x1ef9u);  // Ỹ ỹ
  EXPECT_EQ(fold_letter(0x1ea5), 0x1ea5u);
  EXPECT_EQ(fold_letter(0x1a0), 0x1a1u);    // Ơ ơ
  EXPECT_EQ(fold_letter(0x1af), 0x1b0u);    // Ư ư
  EXPECT_EQ(fold_letter(0x110), 0x111u);    // Đ đ
  EXPECT_EQ(fold_letter(0x1e9e), 0x1e9eu);  // ẞ: its lower case is ß, two bytes
  EXPECT_EQ(fold_letter(0x490), 0x491u);    // Ukrainian Ґ ґ
  EXPECT_EQ(fold_letter(0x4c1), 0x4c2u);    // Ӂ ӂ: an odd capital
  EXPECT_EQ(fold_letter(0x4c0), 0x4cfu);    // Ӏ ӏ
  EXPECT_EQ(fold_letter(0x4cf), 0x4cfu);
  EXPECT_EQ(fold_letter(0x483), 0x483u);  // a combining sign, no case
  for (uint32_t cp = 0x800; cp < 0x10000; ++cp) {
    EXPECT_GE(fold_letter(cp), 0x800u) << cp;  // three UTF-8 bytes stay three
    EXPECT_LT(fold_letter(cp), 0x10000u) << cp;
  }
}

TEST(PromptCuesScripts, LettersOfTheNewScriptsAreVocabularyLetters) {
  EXPECT_EQ(vocabulary_letter_at("ب", 0), 0x628u);     // Arabic beh
  EXPECT_EQ(vocabulary_letter_at("ۓ", 0), 0x6d3u);     // the last letter before the full stop
  EXPECT_EQ(vocabulary_letter_at("۔", 0), 0u);         // Arabic full stop
  EXPECT_EQ(vocabulary_letter_at("،", 0), 0u);         // Arabic comma
  EXPECT_EQ(vocabulary_letter_at("٣", 0), 0u);         // Arabic-Indic digit
  EXPECT_EQ(vocabulary_letter_at("क", 0), 0x915u);     // Devanagari ka
  EXPECT_EQ(vocabulary_letter_at("ि", 0), 0x93fu);     // a vowel sign is part of the word
  EXPECT_EQ(vocabulary_letter_at("।", 0), 0u);         // danda ends a sentence
  EXPECT_EQ(vocabulary_letter_at("ế", 0), 0x1ebfu);    // Vietnamese e with circumflex and acute
  EXPECT_EQ(vocabulary_letter_at("ก", 0), 0u);         // Thai: no words yet
  EXPECT_EQ(vocabulary_letter_at("\xe0\xa4", 0), 0u);  // truncated
}

TEST(PromptCuesScripts, ArabicWordsWithAndWithoutTheConjunction) {
  // "Translate this text into English."
  EXPECT_EQ(feature(of("ترجم هذا النص إلى الإنجليزية."), "easy_task_cues"), log_count(1));
  // "Prove the theorem and explain each step": and-explain is one written word.
  const auto proof = of("أثبت النظرية واشرح كل خطوة");
  EXPECT_EQ(feature(proof, "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(proof, "reasoning_cues"), log_count(1));
  // Without the hamza, as often typed.
  EXPECT_EQ(feature(of("اثبت أن الجذر التربيعي لاثنين عدد غير نسبي"), "hard_task_cues"),
            log_count(1));
  // Vowel signs, shadda and tatweel are left out when a word is looked up: "design" with a
  // shadda, "translate" fully vocalised, a word drawn out with tatweel.
  EXPECT_EQ(feature(of("صمّم نظام دفع"), "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("تَرْجِمْ هذا"), "easy_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("ترجـــم هذا"), "easy_task_cues"), log_count(1));
  // A "word" of marks alone (a vowel sign or tatweel typed on its own) is no word at all.
  for (const std::string marks : {"َ", "ـ", "ّـ ّ", "و َ"}) {
    EXPECT_EQ(feature(of(marks), "easy_task_cues"), 0) << marks;
  }
  // ... and so are the marks of a word whose letters alone are within the longest entry's.
  EXPECT_EQ(feature(of("وَاشْرَحْ"), "reasoning_cues"), log_count(1));
  // The conjunction alone, or before a word that is not a cue, counts nothing.
  EXPECT_EQ(feature(of("و ترجمان وشرحات"), "easy_task_cues"), 0);
}

TEST(PromptCuesScripts, HindiTaskNounsWithAndWithoutAPrecomposedNukta) {
  // "Translate this sentence into English."
  EXPECT_EQ(feature(of("इस वाक्य का अंग्रेज़ी में अनुवाद करें।"), "easy_task_cues"), log_count(1));
  // "Design a system": the nukta as a separate mark and as the precomposed letter.
  EXPECT_EQ(feature(of("एक सिस्टम डिज\u093cाइन करो"), "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("एक सिस्टम डि\u095bाइन करो"), "hard_task_cues"), log_count(1));
  // The danda ends the word and the sentence.
  EXPECT_EQ(feature(of("अनुवाद।"), "easy_task_cues"), log_count(1));
}

TEST(PromptCuesScripts, VietnamesePairsNeedOneSpaceBetweenTheirSyllables) {
  // "Prove that the square root of 2 is irrational."
  EXPECT_EQ(feature(of("Chứng minh rằng căn 2 là số vô tỉ."), "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("CHỨNG MINH điều này"), "hard_task_cues"), log_count(1));
  for (const std::string text : {"chứng  minh", "chứng, minh", "chứng\nminh", "chứngminh"}) {
    EXPECT_EQ(feature(of(text), "hard_task_cues"), 0) << text;
  }
  // A syllable that ends a pair starts none: "hãy viết lại" is a request to write (creative),
  // not also one to rewrite; "có phải không" is one yes-no cue, not two.
  const auto write = of("hãy viết lại");
  EXPECT_EQ(feature(write, "creative_cues"), log_count(1));
  EXPECT_EQ(feature(write, "easy_task_cues"), 0);
  EXPECT_EQ(feature(of("đây có phải không"), "yes_no_cues"), log_count(1));
  // Pairs chain through a sentence: analyse, then explain.
  const auto analysis = of("Phân tích nguyên nhân lạm phát và giải thích từng yếu tố.");
  EXPECT_EQ(feature(analysis, "hard_task_cues"), log_count(1));
  EXPECT_GE(feature(analysis, "reasoning_cues"), log_count(1));
}

TEST(PromptCuesScripts, ThaiPhrasesAreFoundInsideRunsOfLetters) {
  // "Please prove that the square root of two is irrational": no spaces between the words.
  EXPECT_EQ(feature(of("ช่วยพิสูจน์ว่ารากที่สองของสองเป็นจำนวนอตรรกยะ"), "hard_task_cues"), log_count(1));
  // "Translate into English: hello": the request before the colon, the material after it.
  EXPECT_EQ(feature(of("แปลเป็นภาษาอังกฤษ: สวัสดี"), "easy_task_cues"), log_count(1));
  // "Very strange": แปลก holds แปล, which is no cue alone.
  EXPECT_EQ(feature(of("แปลกมาก"), "easy_task_cues"), 0);
  // A phrase does not span a space, a digit or a Latin letter.
  EXPECT_EQ(feature(of("พิสูจน์ ว่า"), "hard_task_cues"), 0);
  EXPECT_EQ(feature(of("พิสูจน์1ว่า"), "hard_task_cues"), 0);
  EXPECT_EQ(feature(of("พิสูจน์xว่า"), "hard_task_cues"), 0);
  // Runs end anywhere in a text: at its end, before Latin letters, between two runs.
  EXPECT_EQ(feature(of("Q1 พิสูจน์ว่าx"), "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("พิสูจน์ว่า พิสูจน์ว่า"), "hard_task_cues"), log_count(2));
  // The longest phrase at a letter wins: proofreading is easy, though proving is hard.
  const auto proofread = of("ช่วยตรวจการพิสูจน์อักษรให้หน่อย");
  EXPECT_EQ(feature(proofread, "easy_task_cues"), log_count(1));
  EXPECT_EQ(feature(proofread, "hard_task_cues"), 0);
}

TEST(PromptCuesScripts, EveryThaiPhraseCountsTowardItsFeature) {
  std::set<std::string_view> phrases;
  for (const auto& cue : prompt_detail::thai_cues()) {
    EXPECT_TRUE(phrases.insert(cue.phrase).second) << "duplicate " << cue.phrase;
    const std::string phrase(cue.phrase);
    const std::string_view name = feature_names()[cue.cue];
    EXPECT_EQ(feature(of(phrase), name), log_count(1)) << phrase;
    // Inside a longer run: after "please" (ช่วย) and before "for me" (ให้หน่อย).
    EXPECT_GE(feature(of("ช่วย" + phrase + "ให้หน่อย"), name), log_count(1)) << phrase;
  }
}

}  // namespace
}  // namespace tandem::routing
