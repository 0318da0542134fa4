// How the cue scan reads the words of Arabic, Hindi and Vietnamese (prompt_words_ar_hi_vi.h), of
// Hebrew, Greek and Bengali (prompt_words_he_el.h, prompt_words_bn_ur.h, prompt_words_sw.h) and the
// phrases of Thai (prompt_cues_th.cpp): letters of two and three UTF-8 bytes, Vietnamese capitals
// folded, two-syllable Vietnamese entries found as a pair of words with one space between, Arabic
// and Hebrew words found without their vowel signs and with the conjunction "and" joined to them,
// Greek words folded while single Greek letters stay maths. What each word counts toward is
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

using prompt_detail::fold_greek;
using prompt_detail::fold_letter;
using prompt_detail::greek_letter_at;
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
  EXPECT_EQ(vocabulary_letter_at("ก", 0), 0u);         // Thai: its own runs
  EXPECT_EQ(vocabulary_letter_at("\xe0\xa4", 0), 0u);  // truncated
}

TEST(PromptCuesScripts, HebrewBengaliAndGreekLetters) {
  EXPECT_EQ(vocabulary_letter_at("ת", 0), 0x5eau);       // Hebrew tav
  EXPECT_EQ(vocabulary_letter_at("\u05b7", 0), 0x5b7u);  // patah: a point is part of the word
  EXPECT_EQ(vocabulary_letter_at("־", 0), 0u);           // maqaf, a hyphen
  EXPECT_EQ(vocabulary_letter_at("׃", 0), 0u);           // sof pasuq
  EXPECT_EQ(vocabulary_letter_at("ক", 0), 0x995u);       // Bengali ka
  EXPECT_EQ(vocabulary_letter_at("া", 0), 0x9beu);       // a vowel sign
  EXPECT_EQ(vocabulary_letter_at("த", 0), 0xba4u);       // Tamil ta
  EXPECT_EQ(vocabulary_letter_at("ਕ", 0), 0xa15u);       // Gurmukhi ka
  EXPECT_EQ(vocabulary_letter_at("෴", 0), 0xdf4u);       // the end of Sinhala's block
  EXPECT_EQ(vocabulary_letter_at("α", 0), 0u);           // Greek: greek_letter_at
  EXPECT_EQ(greek_letter_at("α", 0), 0x3b1u);
  EXPECT_EQ(greek_letter_at("Ά", 0), 0x386u);
  EXPECT_EQ(greek_letter_at("ς", 0), 0x3c2u);
  EXPECT_EQ(greek_letter_at("·", 0), 0u);  // ano teleia, the Greek semicolon
  EXPECT_EQ(greek_letter_at(";", 0), 0u);  // the Greek question mark
  EXPECT_EQ(greek_letter_at("ϐ", 0), 0u);  // a symbol variant, not a letter of words
  EXPECT_EQ(greek_letter_at("\xce", 0), 0u);
  EXPECT_EQ(greek_letter_at("α", 2), 0u);  // at the end
  EXPECT_EQ(fold_greek(0x386), 0x3b1u);    // Ά α
  EXPECT_EQ(fold_greek(0x3a3), 0x3c3u);    // Σ σ
  EXPECT_EQ(fold_greek(0x3c2), 0x3c3u);    // ς σ
  EXPECT_EQ(fold_greek(0x390), 0x3b9u);    // ΐ ι
  EXPECT_EQ(fold_greek(0x3cb), 0x3c5u);    // ϋ υ
  EXPECT_EQ(fold_greek(0x3c9), 0x3c9u);
  for (uint32_t cp = 0x370; cp < 0x400; ++cp) {
    EXPECT_EQ(fold_greek(fold_greek(cp)), fold_greek(cp)) << cp;
    EXPECT_GE(fold_greek(cp), 0x370u) << cp;  // two UTF-8 bytes stay two
  }
}

TEST(PromptCuesScripts, HebrewWordsWithPointsAndTheConjunction) {
  // "Translate the text into English", without points, with them, and joined to "and".
  EXPECT_EQ(feature(of("תרגם את הטקסט לאנגלית"), "easy_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("תַּרְגֵּם אֶת הַטֶּקְסְט"), "easy_task_cues"), log_count(1));
  const auto proof = of("הוכח את הטענה ונתח כל שלב");  // "prove ... and analyse each step"
  EXPECT_EQ(feature(proof, "hard_task_cues"), log_count(2));
  // The conjunction alone, points alone, or a hyphenated word count nothing.
  for (const std::string text : {"ו", "\u05b7", "ו\u05b7", "תרגם־הטקסט"}) {
    EXPECT_EQ(feature(of(text), "easy_task_cues"), 0) << text;
  }
}

TEST(PromptCuesScripts, GreekWordsFoldWhileSingleLettersStayMaths) {
  // "Translate the text": as typed, in capitals, without accents.
  for (const std::string text : {"Μετάφρασε το κείμενο", "ΜΕΤΑΦΡΑΣΕ ΤΟ ΚΕΙΜΕΝΟ", "μεταφρασε"}) {
    EXPECT_EQ(feature(of(text), "easy_task_cues"), log_count(1)) << text;
  }
  // A final ς reads as σ: "analysis" (genitive).
  EXPECT_EQ(feature(of("κάνε μια ανάλυσης"), "hard_task_cues"), log_count(1));
  // One Greek letter is a maths symbol, as in English formulas; "αβ" is now a word.
  EXPECT_EQ(feature(of("Let α + β = 1"), "math_symbols"), log_count(4));
  EXPECT_EQ(feature(of("ΔH of the reaction"), "math_symbols"), log_count(1));
  EXPECT_EQ(feature(of("η = 0.5 and α β"), "math_symbols"), log_count(4));
  // ... but an article or "or" before a Greek word is prose: "prove that the root ...".
  EXPECT_EQ(feature(of("Απόδειξε ότι η ρίζα του 2 είναι άρρητος"), "math_symbols"), 0);
  EXPECT_EQ(feature(of("Απόδειξε ότι η ρίζα του 2 είναι άρρητος"), "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("ναι ή όχι"), "math_symbols"), 0);
  EXPECT_EQ(feature(of("α"), "math_symbols"), log_count(1));
  EXPECT_EQ(feature(of("α "), "math_symbols"), log_count(1));
}

TEST(PromptCuesScripts, BengaliTaskNounsWithAndWithoutAPrecomposedNukta) {
  // "Translate this sentence into English."
  EXPECT_EQ(feature(of("এই বাক্যটি ইংরেজিতে অনুবাদ করুন।"), "easy_task_cues"), log_count(1));
  // "Evaluate": ya with the nukta as a separate mark and as the precomposed letter.
  EXPECT_EQ(feature(of("প্রকল্পের মূল্যা\u09af\u09bcন"), "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("প্রকল্পের মূল্যা\u09dfন"), "hard_task_cues"), log_count(1));
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

TEST(PromptCuesScripts, ArabicNounsInTheIndefiniteAccusative) {
  // "I want an analysis of my company's situation": the object takes tanween on an alif, typed
  // with the mark or without it.
  EXPECT_EQ(feature(of("أريد تحليلاً لوضع شركتي"), "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("أريد تحليلا لوضع شركتي"), "hard_task_cues"), log_count(1));
  EXPECT_EQ(feature(of("أريد تحليل لوضع شركتي"), "hard_task_cues"), log_count(1));
  // An entry already listed with its alif is counted once, not twice.
  EXPECT_EQ(feature(of("مقالاً"), "creative_cues"), log_count(1));
  // Too short to be a noun with the ending, or not a listed noun: nothing.
  EXPECT_EQ(feature(of("ما لا"), "hard_task_cues"), 0);
  EXPECT_EQ(feature(of("كتابا"), "hard_task_cues"), 0);
  // Urdu ends words in alif that are no accusatives: "جھوٹا" (false) is not "جھوٹ" (a lie).
  EXPECT_EQ(feature(of("B جھوٹا ہے"), "yes_no_cues"), 0);
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
