#include "routing/prompt_vocabulary.h"

#include <algorithm>
#include <array>
#include <iterator>

#include "routing/prompt_code_points.h"
#include "routing/prompt_words_ar_hi_vi.h"
#include "routing/prompt_words_bn_ur.h"
#include "routing/prompt_words_he_el.h"
#include "routing/prompt_words_intl.h"
#include "routing/prompt_words_mr_gu_pa.h"
#include "routing/prompt_words_sw.h"
#include "routing/prompt_words_ta_te.h"
#include "routing/prompt_words_tr_id_nl_pl.h"
#include "routing/prompt_words_uk_fa.h"

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

// Every language's list (prompt_words_*.h), English first: one table holds them all.
constexpr std::array<std::span<const VocabularyEntry>, 10> kLists = {
    kEntries,   kIntlWords, kTrIdNlPlWords, kArHiViWords, kUkFaWords,
    kHeElWords, kBnUrWords, kSwWords,       kTaTeWords,   kMrGuPaWords};

constexpr size_t kWordCount = [] {
  size_t n = 0;
  for (std::span<const VocabularyEntry> list : kLists) {
    n += list.size();
  }
  return n;
}();
constexpr size_t kSlotCount = 8192;  // power of two, load factor about 0.4

constexpr std::array<VocabularyEntry, kWordCount> kAllWords = [] {
  std::array<VocabularyEntry, kWordCount> all{};
  size_t n = 0;
  for (std::span<const VocabularyEntry> list : kLists) {
    for (const VocabularyEntry& entry : list) {
      all[n++] = entry;
    }
  }
  return all;
}();

constexpr const VocabularyEntry& entry_at(size_t i) {
  return kAllWords[i];
}

// A slot: 1 + index into entry_at in the low 16 bits (0 = empty), the top 16 bits of the
// entry's hash above them. Most words looked up are not in the vocabulary; the fingerprint
// turns them away without reading an entry (an entry is read only when it matches).
constexpr uint32_t slot_of(uint32_t hash, size_t index) {
  return (hash & 0xffff0000u) | static_cast<uint32_t>(index + 1);
}
constexpr size_t slot_index(uint32_t slot) {
  return (slot & 0xffffu) - 1;
}

// Open addressing, built at compile time.
constexpr std::array<uint32_t, kSlotCount> kSlots = [] {
  std::array<uint32_t, kSlotCount> slots{};
  for (size_t i = 0; i < kWordCount; ++i) {
    const uint32_t hash = entry_hash(entry_at(i).word);
    size_t slot = hash & (kSlotCount - 1);
    while (slots[slot] != 0) {
      slot = (slot + 1) & (kSlotCount - 1);
    }
    slots[slot] = slot_of(hash, i);
  }
  return slots;
}();

}  // namespace

constexpr std::array<uint64_t, 64> kPairFirstWords = [] {
  std::array<uint64_t, 64> bits{};
  for (size_t i = 0; i < kWordCount; ++i) {
    const std::string_view word = entry_at(i).word;
    if (const size_t space = word.find(' '); space != std::string_view::npos) {
      const uint32_t hash = fnv1a_letters(word.substr(0, space));
      bits[(hash >> 6) & 63] |= uint64_t{1} << (hash & 63);
    }
  }
  return bits;
}();

namespace {

// Characters of a UTF-8 word: its bytes less the continuation bytes.
constexpr size_t characters(std::string_view word) {
  size_t n = 0;
  for (char c : word) {
    n += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
  }
  return n;
}

// A vocabulary letter's UTF-8 length at word[k] (prompt_code_points.h's vocabulary_letter_at:
// lead bytes C3..D4 and D6..DB of two bytes, E0 and E1 of three; Greek's CE and CF are among
// the first), or 0 when it is not one.
constexpr size_t entry_letter_bytes(std::string_view word, size_t k) {
  const auto lead = static_cast<unsigned char>(word[k]);
  const bool two = (lead >= 0xc3 && lead <= 0xd4) || (lead >= 0xd6 && lead <= 0xdb);
  const size_t bytes = two ? 2 : lead == 0xe0 || lead == 0xe1 ? 3 : 0;
  if (bytes == 0 || k + bytes > word.size()) {
    return 0;
  }
  for (size_t b = 1; b < bytes; ++b) {
    if ((static_cast<unsigned char>(word[k + b]) & 0xc0) != 0x80) {
      return 0;
    }
  }
  return bytes;
}

// Short, and made of lower-case ASCII letters and the multi-byte letters the scanner reads as
// letters of a word (that they are folded letters is checked by a test); at most one space,
// between two words.
constexpr bool words_are_well_formed(std::span<const VocabularyEntry> list) {
  for (const VocabularyEntry& entry : list) {
    const auto word = entry.word;
    if (word.empty() || characters(word) > kMaxWordLength || word.front() == ' ' ||
        word.back() == ' ' || word.find(' ') != word.rfind(' ')) {
      return false;
    }
    for (size_t k = 0; k < word.size();) {
      const auto byte = static_cast<unsigned char>(word[k]);
      if (byte < 0x80) {
        if ((byte < 'a' || byte > 'z') && byte != ' ') {
          return false;
        }
        ++k;
        continue;
      }
      const size_t bytes = entry_letter_bytes(word, k);
      if (bytes == 0) {
        return false;
      }
      k += bytes;
    }
  }
  return true;
}

// No word twice: a repeat is inserted after its first entry, in the same probe chain, so each
// word is compared only with the words its chain passes on the way to its own slot (comparing
// every pair would exceed the compiler's constant-evaluation budget).
constexpr bool words_are_unique() {
  for (size_t i = 0; i < kWordCount; ++i) {
    const auto word = entry_at(i).word;
    size_t slot = entry_hash(word) & (kSlotCount - 1);
    while (slot_index(kSlots[slot]) != i) {
      if (entry_at(slot_index(kSlots[slot])).word == word) {
        return false;
      }
      slot = (slot + 1) & (kSlotCount - 1);
    }
  }
  return true;
}

static_assert(std::ranges::all_of(kLists, words_are_well_formed),
              "vocabulary words: lower-case and short");
static_assert(kWordCount * 10 < kSlotCount * 7 && kWordCount < 0xffff,
              "vocabulary table: room for every word");
static_assert(words_are_unique(), "vocabulary words: each once");

// `word` is letters in any case: ASCII and the multi-byte letters the scanner reads into a word
// it looks up (vocabulary_letter_at, or a Greek word's greek_letter_at), a space between two
// words. Entries are folded, and
// folding keeps a letter's length, so the two are compared byte for byte, in place.
[[gnu::always_inline]] inline bool equals_folded(std::string_view entry, std::string_view word) {
  if (entry.size() != word.size()) {
    return false;
  }
  for (size_t i = 0; i < word.size();) {
    const auto byte = static_cast<unsigned char>(word[i]);
    if (byte < 0x80) {
      if (entry[i] != static_cast<char>(byte | 0x20)) {  // ' ' stays ' '
        return false;
      }
      ++i;
      continue;
    }
    const uint32_t letter = vocabulary_letter_at(word, i);
    const uint32_t greek = letter == 0 ? greek_letter_at(word, i) : 0;
    if (letter == 0 && greek == 0) {
      return false;  // not a letter an entry holds
    }
    const uint32_t folded = letter != 0 ? fold_vocabulary_letter(letter) : fold_greek(greek);
    if (folded < 0x800) {
      if (entry[i] != static_cast<char>(0xc0 | folded >> 6) ||
          entry[i + 1] != static_cast<char>(0x80 | (folded & 0x3f))) {
        return false;
      }
      i += 2;
      continue;
    }
    if (i + 2 >= word.size() || entry[i] != static_cast<char>(0xe0 | folded >> 12) ||
        entry[i + 1] != static_cast<char>(0x80 | ((folded >> 6) & 0x3f)) ||
        entry[i + 2] != static_cast<char>(0x80 | (folded & 0x3f))) {
      return false;
    }
    i += 3;
  }
  return true;
}

}  // namespace

const VocabularyEntry* find_word(uint32_t hash, std::string_view word) {
  const uint32_t fingerprint = hash & 0xffff0000u;
  for (size_t slot = hash & (kSlotCount - 1); kSlots[slot] != 0;
       slot = (slot + 1) & (kSlotCount - 1)) {
    if ((kSlots[slot] & 0xffff0000u) != fingerprint) {
      continue;
    }
    const VocabularyEntry& entry = entry_at(slot_index(kSlots[slot]));
    if (equals_folded(entry.word, word)) {
      return &entry;
    }
  }
  return nullptr;
}

uint8_t phrase_cue(Tag tag, Tag previous, Tag previous2) {
  switch (tag) {
    case Tag::kStep:
      return previous == Tag::kBy && previous2 == Tag::kStep ? kReasoningCues : kNoCue;
    case Tag::kLeast:
    case Tag::kMost:
      return previous == Tag::kAt ? kConstraintCues : kNoCue;
    case Tag::kThan:
      return (previous == Tag::kMore || previous == Tag::kLess) && previous2 == Tag::kNo
                 ? kConstraintCues
                 : kNoCue;
    case Tag::kMany:
    case Tag::kMuch:
      return previous == Tag::kHow ? kMathTerms : kNoCue;
    case Tag::kWhy:
    case Tag::kHow:
      return previous == Tag::kExplain ? kHardTaskCues : kNoCue;
    case Tag::kWhether:  // "explain (assess, determine) whether it would be enforceable"
      return previous == Tag::kExplain || previous == Tag::kJudge ? kHardTaskCues : kNoCue;
    case Tag::kOffs:  // "trade-offs", "trade offs"
      return previous == Tag::kTrade ? kHardTaskCues : kNoCue;
    case Tag::kFollowing:
      return previous == Tag::kThe && previous2 == Tag::kOf ? kChoiceOptions : kNoCue;
    case Tag::kNo:
      return previous == Tag::kYes || (previous == Tag::kOr && previous2 == Tag::kYes) ? kYesNoCues
                                                                                       : kNoCue;
    default:
      return kNoCue;
  }
}

std::span<const VocabularyEntry> english_words() {
  return kLists.front();
}

std::span<const std::span<const VocabularyEntry>> other_language_words() {
  return std::span(kLists).subspan(1);
}

}  // namespace tandem::routing::prompt_detail
