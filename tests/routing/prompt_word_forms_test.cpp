// Words found without what writers join to them (prompt_word_forms.h), called directly; the
// scanner's use of them is in prompt_cues_scripts_test.cpp.

#include "routing/prompt_word_forms.h"

#include <gtest/gtest.h>

namespace tandem::routing::prompt_detail {
namespace {

TEST(PromptWordForms, TheConjunctionJoinedToAnArabicOrHebrewWord) {
  const VocabularyEntry* explain = find_word_after_conjunction("واشرح");  // and explain
  ASSERT_NE(explain, nullptr);
  EXPECT_EQ(explain->word, "اشرح");
  EXPECT_NE(find_word_after_conjunction("ותסביר"), nullptr);  // and explain (Hebrew)
  // The conjunction with fewer than two letters after it, or before no listed word.
  EXPECT_EQ(find_word_after_conjunction("وا"), nullptr);
  EXPECT_EQ(find_word_after_conjunction("وشرحات"), nullptr);
  // A listed word that does not start with it.
  EXPECT_EQ(find_word_after_conjunction("اشرح"), nullptr);
}

TEST(PromptWordForms, AnArabicNounInTheIndefiniteAccusative) {
  const VocabularyEntry* analysis = find_word_before_accusative_alif("تحليلا");
  ASSERT_NE(analysis, nullptr);
  EXPECT_EQ(analysis->word, "تحليل");
  // No alif at the end, too few letters before it, or a noun not listed.
  EXPECT_EQ(find_word_before_accusative_alif("تحليل"), nullptr);
  EXPECT_EQ(find_word_before_accusative_alif("لا"), nullptr);
  EXPECT_EQ(find_word_before_accusative_alif("كتابا"), nullptr);
  // Urdu's letters: its words end in alif without being accusatives.
  EXPECT_EQ(find_word_before_accusative_alif("جھوٹا"), nullptr);
  // Not Arabic at all.
  EXPECT_EQ(find_word_before_accusative_alif("analysisا"), nullptr);
}

}  // namespace
}  // namespace tandem::routing::prompt_detail
