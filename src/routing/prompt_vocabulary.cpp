#include "routing/prompt_vocabulary.h"

#include <array>
#include <iterator>

#include "routing/prompt_code_points.h"
#include "routing/prompt_words_intl.h"

namespace tandem::routing::prompt_detail {
namespace {

// The vocabulary: small on purpose. Each list holds the words that signal the category in
// instructions, not every synonym; docs/ROUTER_TRAINING.md explains the categories.
constexpr VocabularyEntry kEntries[] = {
    // Phrase-only words.
    {"step", kNoCue, Tag::kStep},
    {"by", kNoCue, Tag::kBy},
    {"at", kNoCue, Tag::kAt},
    {"no", kNoCue, Tag::kNo},
    {"more", kNoCue, Tag::kMore},
    {"less", kNoCue, Tag::kLess},
    {"than", kNoCue, Tag::kThan},
    {"most", kNoCue, Tag::kMost},
    {"how", kNoCue, Tag::kHow},
    {"many", kNoCue, Tag::kMany},
    {"much", kNoCue, Tag::kMuch},
    {"the", kNoCue, Tag::kThe},
    {"of", kNoCue, Tag::kOf},
    {"following", kNoCue, Tag::kFollowing},
    {"or", kNoCue, Tag::kOr},
    // Math vocabulary (word problems, symbolic maths).
    {"equation", kMathTerms, Tag::kNone},
    {"equations", kMathTerms, Tag::kNone},
    {"solve", kMathTerms, Tag::kNone},
    {"calculate", kMathTerms, Tag::kNone},
    {"calculation", kMathTerms, Tag::kNone},
    {"compute", kMathTerms, Tag::kNone},
    {"integral", kMathTerms, Tag::kNone},
    {"derivative", kMathTerms, Tag::kNone},
    {"sum", kMathTerms, Tag::kNone},
    {"total", kMathTerms, Tag::kNone},
    {"percent", kMathTerms, Tag::kNone},
    {"percentage", kMathTerms, Tag::kNone},
    {"probability", kMathTerms, Tag::kNone},
    {"remainder", kMathTerms, Tag::kNone},
    {"multiply", kMathTerms, Tag::kNone},
    {"divide", kMathTerms, Tag::kNone},
    {"divided", kMathTerms, Tag::kNone},
    {"fraction", kMathTerms, Tag::kNone},
    {"ratio", kMathTerms, Tag::kNone},
    {"average", kMathTerms, Tag::kNone},
    {"formula", kMathTerms, Tag::kNone},
    {"polynomial", kMathTerms, Tag::kNone},
    {"matrix", kMathTerms, Tag::kNone},
    {"algebra", kMathTerms, Tag::kNone},
    {"geometry", kMathTerms, Tag::kNone},
    {"arithmetic", kMathTerms, Tag::kNone},
    {"equals", kMathTerms, Tag::kNone},
    {"sqrt", kMathTerms, Tag::kNone},
    {"modulo", kMathTerms, Tag::kNone},
    {"area", kMathTerms, Tag::kNone},
    {"radius", kMathTerms, Tag::kNone},
    {"compound", kMathTerms, Tag::kNone},
    {"compounded", kMathTerms, Tag::kNone},
    {"interest", kMathTerms, Tag::kNone},
    {"theorem", kMathTerms, Tag::kNone},
    {"lemma", kMathTerms, Tag::kNone},
    {"per", kMathTerms, Tag::kNone},
    // Code vocabulary.
    {"def", kCodeKeywords, Tag::kNone},
    {"class", kCodeKeywords, Tag::kNone},
    {"return", kCodeKeywords, Tag::kNone},
    {"include", kCodeKeywords, Tag::kNone},
    {"select", kCodeKeywords, Tag::kNone},
    {"function", kCodeKeywords, Tag::kNone},
    {"import", kCodeKeywords, Tag::kNone},
    {"const", kCodeKeywords, Tag::kNone},
    {"void", kCodeKeywords, Tag::kNone},
    {"lambda", kCodeKeywords, Tag::kNone},
    {"elif", kCodeKeywords, Tag::kNone},
    {"struct", kCodeKeywords, Tag::kNone},
    {"printf", kCodeKeywords, Tag::kNone},
    {"println", kCodeKeywords, Tag::kNone},
    {"async", kCodeKeywords, Tag::kNone},
    {"await", kCodeKeywords, Tag::kNone},
    {"null", kCodeKeywords, Tag::kNone},
    {"nullptr", kCodeKeywords, Tag::kNone},
    {"int", kCodeKeywords, Tag::kNone},
    {"bool", kCodeKeywords, Tag::kNone},
    {"enum", kCodeKeywords, Tag::kNone},
    {"namespace", kCodeKeywords, Tag::kNone},
    {"var", kCodeKeywords, Tag::kNone},
    {"func", kCodeKeywords, Tag::kNone},
    {"fn", kCodeKeywords, Tag::kNone},
    {"console", kCodeKeywords, Tag::kNone},
    {"python", kCodeKeywords, Tag::kNone},
    {"javascript", kCodeKeywords, Tag::kNone},
    {"typescript", kCodeKeywords, Tag::kNone},
    {"java", kCodeKeywords, Tag::kNone},
    {"sql", kCodeKeywords, Tag::kNone},
    {"rust", kCodeKeywords, Tag::kNone},
    {"cpp", kCodeKeywords, Tag::kNone},
    {"html", kCodeKeywords, Tag::kNone},
    {"regex", kCodeKeywords, Tag::kNone},
    {"json", kCodeKeywords, Tag::kNone},
    {"yaml", kCodeKeywords, Tag::kNone},
    {"compiler", kCodeKeywords, Tag::kNone},
    {"api", kCodeKeywords, Tag::kNone},
    {"code", kCodeKeywords, Tag::kNone},
    {"script", kCodeKeywords, Tag::kNone},
    {"exception", kCodeKeywords, Tag::kNone},
    {"variable", kCodeKeywords, Tag::kNone},
    {"recursion", kCodeKeywords, Tag::kNone},
    // Tasks a small model does well: transform or pick from the given text.
    {"extract", kEasyTaskCues, Tag::kNone},
    {"classify", kEasyTaskCues, Tag::kNone},
    {"categorize", kEasyTaskCues, Tag::kNone},
    {"categorise", kEasyTaskCues, Tag::kNone},
    {"format", kEasyTaskCues, Tag::kNone},
    {"reformat", kEasyTaskCues, Tag::kNone},
    {"translate", kEasyTaskCues, Tag::kNone},
    {"summarize", kEasyTaskCues, Tag::kNone},
    {"summarise", kEasyTaskCues, Tag::kNone},
    {"summary", kEasyTaskCues, Tag::kNone},
    {"list", kEasyTaskCues, Tag::kNone},
    {"rewrite", kEasyTaskCues, Tag::kNone},
    {"rephrase", kEasyTaskCues, Tag::kNone},
    {"paraphrase", kEasyTaskCues, Tag::kNone},
    {"convert", kEasyTaskCues, Tag::kNone},
    {"tag", kEasyTaskCues, Tag::kNone},
    {"label", kEasyTaskCues, Tag::kNone},
    {"sort", kEasyTaskCues, Tag::kNone},
    {"spell", kEasyTaskCues, Tag::kNone},
    {"spelling", kEasyTaskCues, Tag::kNone},
    {"grammar", kEasyTaskCues, Tag::kNone},
    {"define", kEasyTaskCues, Tag::kNone},
    {"definition", kEasyTaskCues, Tag::kNone},
    {"synonym", kEasyTaskCues, Tag::kNone},
    {"antonym", kEasyTaskCues, Tag::kNone},
    {"identify", kEasyTaskCues, Tag::kNone},
    {"uppercase", kEasyTaskCues, Tag::kNone},
    {"lowercase", kEasyTaskCues, Tag::kNone},
    {"rename", kEasyTaskCues, Tag::kNone},
    {"title", kEasyTaskCues, Tag::kNone},
    {"topic", kEasyTaskCues, Tag::kNone},
    {"table", kEasyTaskCues, Tag::kNone},
    {"tabulate", kEasyTaskCues, Tag::kNone},
    {"extracted", kEasyTaskCues, Tag::kNone},
    {"sentiment", kEasyTaskCues, Tag::kNone},
    {"spam", kEasyTaskCues, Tag::kNone},
    {"celsius", kEasyTaskCues, Tag::kNone},
    {"fahrenheit", kEasyTaskCues, Tag::kNone},
    {"typo", kEasyTaskCues, Tag::kNone},
    {"typos", kEasyTaskCues, Tag::kNone},
    {"proofread", kEasyTaskCues, Tag::kNone},
    {"capitalize", kEasyTaskCues, Tag::kNone},
    // Binary answers.
    {"yes", kYesNoCues, Tag::kYes},
    {"true", kYesNoCues, Tag::kNone},
    {"false", kYesNoCues, Tag::kNone},
    {"whether", kYesNoCues, Tag::kWhether},
    // Tasks that need planning or open-ended judgement.
    {"prove", kHardTaskCues, Tag::kNone},
    {"proof", kHardTaskCues, Tag::kNone},
    {"derive", kHardTaskCues, Tag::kNone},
    {"derivation", kHardTaskCues, Tag::kNone},
    {"design", kHardTaskCues, Tag::kNone},
    {"architect", kHardTaskCues, Tag::kNone},
    {"architecture", kHardTaskCues, Tag::kNone},
    {"plan", kHardTaskCues, Tag::kNone},
    {"analyse", kHardTaskCues, Tag::kNone},
    {"analyze", kHardTaskCues, Tag::kNone},
    {"analysis", kHardTaskCues, Tag::kNone},
    {"evaluate", kHardTaskCues, Tag::kJudge},
    {"assess", kHardTaskCues, Tag::kJudge},
    {"reconcile", kHardTaskCues, Tag::kNone},
    {"critique", kHardTaskCues, Tag::kNone},
    {"compare", kHardTaskCues, Tag::kNone},
    {"contrast", kHardTaskCues, Tag::kNone},
    {"optimise", kHardTaskCues, Tag::kNone},
    {"optimize", kHardTaskCues, Tag::kNone},
    {"optimization", kHardTaskCues, Tag::kNone},
    {"debug", kHardTaskCues, Tag::kNone},
    {"refactor", kHardTaskCues, Tag::kNone},
    {"implement", kHardTaskCues, Tag::kNone},
    {"justify", kHardTaskCues, Tag::kNone},
    {"argue", kHardTaskCues, Tag::kNone},
    {"tradeoff", kHardTaskCues, Tag::kNone},
    {"trade", kNoCue, Tag::kTrade},
    {"offs", kNoCue, Tag::kOffs},
    {"determine", kNoCue, Tag::kJudge},
    {"decide", kNoCue, Tag::kJudge},
    {"tradeoffs", kHardTaskCues, Tag::kNone},
    {"strategy", kHardTaskCues, Tag::kNone},
    {"algorithm", kHardTaskCues, Tag::kNone},
    {"investigate", kHardTaskCues, Tag::kNone},
    {"draft", kHardTaskCues, Tag::kNone},
    {"weigh", kHardTaskCues, Tag::kNone},
    {"synthesize", kHardTaskCues, Tag::kNone},
    {"synthesise", kHardTaskCues, Tag::kNone},
    {"generalize", kHardTaskCues, Tag::kNone},
    {"generalise", kHardTaskCues, Tag::kNone},
    {"diagnose", kHardTaskCues, Tag::kNone},
    {"troubleshoot", kHardTaskCues, Tag::kNone},
    {"causes", kHardTaskCues, Tag::kNone},
    {"rigorous", kHardTaskCues, Tag::kNone},
    {"rigorously", kHardTaskCues, Tag::kNone},
    {"research", kHardTaskCues, Tag::kNone},
    {"risks", kHardTaskCues, Tag::kNone},
    {"scalable", kHardTaskCues, Tag::kNone},
    {"distributed", kHardTaskCues, Tag::kNone},
    {"concurrency", kHardTaskCues, Tag::kNone},
    {"migrate", kHardTaskCues, Tag::kNone},
    {"migration", kHardTaskCues, Tag::kNone},
    {"roadmap", kHardTaskCues, Tag::kNone},
    // Explicit reasoning.
    {"reason", kReasoningCues, Tag::kNone},
    {"reasoning", kReasoningCues, Tag::kNone},
    {"think", kReasoningCues, Tag::kNone},
    {"explain", kReasoningCues, Tag::kExplain},
    {"explanation", kReasoningCues, Tag::kNone},
    {"why", kReasoningCues, Tag::kWhy},
    {"deduce", kReasoningCues, Tag::kNone},
    {"infer", kReasoningCues, Tag::kNone},
    {"logic", kReasoningCues, Tag::kNone},
    {"logical", kReasoningCues, Tag::kNone},
    {"therefore", kReasoningCues, Tag::kNone},
    {"conclude", kReasoningCues, Tag::kNone},
    {"hypothesis", kReasoningCues, Tag::kNone},
    {"assume", kReasoningCues, Tag::kNone},
    {"suppose", kReasoningCues, Tag::kNone},
    {"implies", kReasoningCues, Tag::kNone},
    // Open-ended generation.
    {"story", kCreativeCues, Tag::kNone},
    {"poem", kCreativeCues, Tag::kNone},
    {"poetry", kCreativeCues, Tag::kNone},
    {"essay", kCreativeCues, Tag::kNone},
    {"creative", kCreativeCues, Tag::kNone},
    {"imagine", kCreativeCues, Tag::kNone},
    {"fiction", kCreativeCues, Tag::kNone},
    {"fictional", kCreativeCues, Tag::kNone},
    {"lyrics", kCreativeCues, Tag::kNone},
    {"song", kCreativeCues, Tag::kNone},
    {"haiku", kCreativeCues, Tag::kNone},
    {"narrative", kCreativeCues, Tag::kNone},
    {"brainstorm", kCreativeCues, Tag::kNone},
    {"joke", kCreativeCues, Tag::kNone},
    {"slogan", kCreativeCues, Tag::kNone},
    {"dialogue", kCreativeCues, Tag::kNone},
    {"screenplay", kCreativeCues, Tag::kNone},
    {"write", kCreativeCues, Tag::kNone},
    {"compose", kCreativeCues, Tag::kNone},
    {"build", kCreativeCues, Tag::kNone},
    {"create", kCreativeCues, Tag::kNone},
    {"develop", kCreativeCues, Tag::kNone},
    {"chapter", kCreativeCues, Tag::kNone},
    {"sonnet", kCreativeCues, Tag::kNone},
    {"limerick", kCreativeCues, Tag::kNone},
    {"villanelle", kCreativeCues, Tag::kNone},
    {"plot", kCreativeCues, Tag::kNone},
    // Constraints on the answer.
    {"must", kConstraintCues, Tag::kNone},
    {"exactly", kConstraintCues, Tag::kNone},
    {"without", kConstraintCues, Tag::kNone},
    {"only", kConstraintCues, Tag::kNone},
    {"never", kConstraintCues, Tag::kNone},
    {"ensure", kConstraintCues, Tag::kNone},
    {"required", kConstraintCues, Tag::kNone},
    {"require", kConstraintCues, Tag::kNone},
    {"strictly", kConstraintCues, Tag::kNone},
    {"limit", kConstraintCues, Tag::kNone},
    {"maximum", kConstraintCues, Tag::kNone},
    {"minimum", kConstraintCues, Tag::kNone},
    {"concise", kConstraintCues, Tag::kNone},
    {"concisely", kConstraintCues, Tag::kNone},
    {"avoid", kConstraintCues, Tag::kNone},
    {"preserve", kConstraintCues, Tag::kNone},
    {"preserving", kConstraintCues, Tag::kNone},
    {"rhyme", kConstraintCues, Tag::kNone},
    // Factoid questions.
    {"what", kFactoidCues, Tag::kNone},
    {"who", kFactoidCues, Tag::kNone},
    {"when", kFactoidCues, Tag::kNone},
    {"where", kFactoidCues, Tag::kNone},
    {"which", kFactoidCues, Tag::kNone},
    {"whom", kFactoidCues, Tag::kNone},
    {"whose", kFactoidCues, Tag::kNone},
    // Negations: "which of the following is NOT" questions trip small models.
    {"not", kNegationCues, Tag::kNone},
    {"except", kNegationCues, Tag::kNone},
    {"incorrect", kNegationCues, Tag::kNone},
    {"untrue", kNegationCues, Tag::kNone},
    {"neither", kNegationCues, Tag::kNone},
    {"nor", kNegationCues, Tag::kNone},
    {"none", kNegationCues, Tag::kNone},
    {"cannot", kNegationCues, Tag::kNone},
    {"least", kNegationCues, Tag::kLeast},
    {"isn", kNegationCues, Tag::kNone},
    {"aren", kNegationCues, Tag::kNone},
    {"doesn", kNegationCues, Tag::kNone},
    {"didn", kNegationCues, Tag::kNone},
    {"wasn", kNegationCues, Tag::kNone},
    {"couldn", kNegationCues, Tag::kNone},
    {"shouldn", kNegationCues, Tag::kNone},
    // Specialist vocabulary (medicine, biology, law, economics, physics).
    {"patient", kDomainTerms, Tag::kNone},
    {"patients", kDomainTerms, Tag::kNone},
    {"diagnosis", kDomainTerms, Tag::kNone},
    {"treatment", kDomainTerms, Tag::kNone},
    {"disease", kDomainTerms, Tag::kNone},
    {"syndrome", kDomainTerms, Tag::kNone},
    {"drug", kDomainTerms, Tag::kNone},
    {"drugs", kDomainTerms, Tag::kNone},
    {"dose", kDomainTerms, Tag::kNone},
    {"clinical", kDomainTerms, Tag::kNone},
    {"symptom", kDomainTerms, Tag::kNone},
    {"symptoms", kDomainTerms, Tag::kNone},
    {"infection", kDomainTerms, Tag::kNone},
    {"chronic", kDomainTerms, Tag::kNone},
    {"acute", kDomainTerms, Tag::kNone},
    {"therapy", kDomainTerms, Tag::kNone},
    {"surgery", kDomainTerms, Tag::kNone},
    {"cell", kDomainTerms, Tag::kNone},
    {"cells", kDomainTerms, Tag::kNone},
    {"protein", kDomainTerms, Tag::kNone},
    {"enzyme", kDomainTerms, Tag::kNone},
    {"gene", kDomainTerms, Tag::kNone},
    {"genes", kDomainTerms, Tag::kNone},
    {"molecule", kDomainTerms, Tag::kNone},
    {"acid", kDomainTerms, Tag::kNone},
    {"tissue", kDomainTerms, Tag::kNone},
    {"nerve", kDomainTerms, Tag::kNone},
    {"artery", kDomainTerms, Tag::kNone},
    {"law", kDomainTerms, Tag::kNone},
    {"legal", kDomainTerms, Tag::kNone},
    {"court", kDomainTerms, Tag::kNone},
    {"plaintiff", kDomainTerms, Tag::kNone},
    {"defendant", kDomainTerms, Tag::kNone},
    {"statute", kDomainTerms, Tag::kNone},
    {"contract", kDomainTerms, Tag::kNone},
    {"liability", kDomainTerms, Tag::kNone},
    {"constitutional", kDomainTerms, Tag::kNone},
    {"economic", kDomainTerms, Tag::kNone},
    {"inflation", kDomainTerms, Tag::kNone},
    {"fiscal", kDomainTerms, Tag::kNone},
    {"monetary", kDomainTerms, Tag::kNone},
    {"quantum", kDomainTerms, Tag::kNone},
    {"velocity", kDomainTerms, Tag::kNone},
    {"electron", kDomainTerms, Tag::kNone},
};

constexpr size_t kEnglishCount = std::size(kEntries);
constexpr size_t kWordCount = kEnglishCount + std::size(kIntlWords);
constexpr size_t kSlotCount = 4096;  // power of two, load factor about 0.25

// The English words, then the other languages' (prompt_words_intl.h): one table for both.
constexpr const VocabularyEntry& entry_at(size_t i) {
  return i < kEnglishCount ? kEntries[i] : kIntlWords[i - kEnglishCount];
}

// Open addressing, built at compile time: slot -> 1 + index into entry_at, 0 = empty.
constexpr std::array<uint16_t, kSlotCount> kSlots = [] {
  std::array<uint16_t, kSlotCount> slots{};
  for (size_t i = 0; i < kWordCount; ++i) {
    size_t slot = fnv1a_letters(entry_at(i).word) & (kSlotCount - 1);
    while (slots[slot] != 0) {
      slot = (slot + 1) & (kSlotCount - 1);
    }
    slots[slot] = static_cast<uint16_t>(i + 1);
  }
  return slots;
}();

// Characters of a UTF-8 word: its bytes less the continuation bytes.
constexpr size_t characters(std::string_view word) {
  size_t n = 0;
  for (char c : word) {
    n += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
  }
  return n;
}

// Short, and made of lower-case ASCII letters and two-byte sequences the scanner reads as
// letters of a word (vocabulary_letter_at's lead bytes; that they are folded letters is checked
// by a test).
constexpr bool words_are_well_formed() {
  for (size_t i = 0; i < kWordCount; ++i) {
    const auto word = entry_at(i).word;
    if (word.empty() || characters(word) > kMaxWordLength) {
      return false;
    }
    for (size_t k = 0; k < word.size(); ++k) {
      const auto byte = static_cast<unsigned char>(word[k]);
      if (byte < 0x80) {
        if (byte < 'a' || byte > 'z') {
          return false;
        }
      } else if (byte < 0xc3 || byte > 0xd4 || k + 1 == word.size() ||
                 (static_cast<unsigned char>(word[++k]) & 0xc0) != 0x80) {
        return false;
      }
    }
  }
  return kWordCount * 2 < kSlotCount;
}

// No word twice: a repeat is inserted after its first entry, in the same probe chain, so each
// word is compared only with the words its chain passes on the way to its own slot (comparing
// every pair would exceed the compiler's constant-evaluation budget).
constexpr bool words_are_unique() {
  for (size_t i = 0; i < kWordCount; ++i) {
    const auto word = entry_at(i).word;
    size_t slot = fnv1a_letters(word) & (kSlotCount - 1);
    while (kSlots[slot] != i + 1) {
      if (entry_at(kSlots[slot] - 1u).word == word) {
        return false;
      }
      slot = (slot + 1) & (kSlotCount - 1);
    }
  }
  return true;
}

static_assert(words_are_well_formed(), "vocabulary words: lower-case and short");
static_assert(words_are_unique(), "vocabulary words: each once");

// `word` is letters in any case: ASCII and the two-byte letters the scanner reads into a word
// it looks up (vocabulary_letter_at). Entries are folded, and folding keeps a letter's two
// bytes, so the two are compared byte for byte, in place.
bool equals_folded(std::string_view entry, std::string_view word) {
  if (entry.size() != word.size()) {
    return false;
  }
  for (size_t i = 0; i < word.size();) {
    const auto byte = static_cast<unsigned char>(word[i]);
    if (byte < 0x80) {
      if (entry[i] != static_cast<char>(byte | 0x20)) {
        return false;
      }
      ++i;
      continue;
    }
    // 0 (not such a letter) folds to 0, whose lead byte no entry has.
    const uint32_t folded = fold_letter(vocabulary_letter_at(word, i));
    if (entry[i] != static_cast<char>(0xc0 | folded >> 6) ||
        entry[i + 1] != static_cast<char>(0x80 | (folded & 0x3f))) {
      return false;
    }
    i += 2;
  }
  return true;
}

}  // namespace

const VocabularyEntry* find_word(uint32_t hash, std::string_view word) {
  size_t slot = hash & (kSlotCount - 1);
  while (kSlots[slot] != 0) {
    const VocabularyEntry& entry = entry_at(kSlots[slot] - 1u);
    if (equals_folded(entry.word, word)) {
      return &entry;
    }
    slot = (slot + 1) & (kSlotCount - 1);
  }
  return nullptr;
}

std::span<const VocabularyEntry> english_words() {
  return kEntries;
}

std::span<const VocabularyEntry> intl_words() {
  return kIntlWords;
}

}  // namespace tandem::routing::prompt_detail
