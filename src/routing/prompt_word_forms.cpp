#include "routing/prompt_word_forms.h"

namespace tandem::routing::prompt_detail {
namespace {

// Whether `word` is written in the letters of Arabic itself (U+0621..U+064A), not with those
// Urdu and Persian add (ٹ, ھ, ی, ے, ک, …): Urdu ends words in alif that are not accusatives
// ("جھوٹا", false, is not "جھوٹ", a lie).
bool in_arabic_letters(std::string_view word) {
  if (word.size() % 2 != 0) {
    return false;
  }
  for (size_t i = 0; i < word.size(); i += 2) {
    const auto lead = static_cast<unsigned char>(word[i]);
    const auto trail = static_cast<unsigned char>(word[i + 1]);
    const bool arabic = (lead == 0xd8 && trail >= 0xa1) || (lead == 0xd9 && trail <= 0x8a);
    if (!arabic) {
      return false;
    }
  }
  return true;
}

}  // namespace

const VocabularyEntry* find_word_after_conjunction(std::string_view word) {
  constexpr std::string_view kArabicAnd = "\xd9\x88";  // و
  constexpr std::string_view kHebrewAnd = "\xd7\x95";  // ו
  if (word.size() < kArabicAnd.size() + 4 ||
      !(word.starts_with(kArabicAnd) || word.starts_with(kHebrewAnd))) {
    return nullptr;  // at least two letters after it
  }
  const std::string_view rest = word.substr(kArabicAnd.size());
  // Arabic and Hebrew letters have no case: the rest hashes as its entry would.
  return find_word(fnv1a_letters(rest), rest);
}

const VocabularyEntry* find_word_before_accusative_alif(std::string_view word) {
  constexpr std::string_view kAlif = "\xd8\xa7";  // ا
  constexpr size_t kLettersBefore = 3;            // two-byte letters
  if (word.size() < kAlif.size() * (kLettersBefore + 1) || !word.ends_with(kAlif) ||
      !in_arabic_letters(word)) {
    return nullptr;
  }
  const std::string_view noun = word.substr(0, word.size() - kAlif.size());
  return find_word(fnv1a_letters(noun), noun);
}

}  // namespace tandem::routing::prompt_detail
