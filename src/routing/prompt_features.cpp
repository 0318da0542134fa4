#include "routing/prompt_features.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/utf8.h"
#include "routing/prompt_cues_zh.h"
#include "routing/task_model.h"

namespace tandem::routing {
namespace {

// Feature indices, in the order of feature_names(). Cue categories below store one of these.
enum Feature : uint8_t {
  kLogChars,
  kLogWords,
  kLogTurns,
  kLogSystemChars,
  kLogHistoryChars,
  kSentences,
  kQuestionMarks,
  kLines,
  kDigitRatio,
  kNumbers,
  kMathSymbols,
  kMathTerms,
  kCodeSymbols,
  kCodeKeywords,
  kEasyTaskCues,
  kYesNoCues,
  kChoiceOptions,
  kHardTaskCues,
  kReasoningCues,
  kCreativeCues,
  kConstraintCues,
  kFactoidCues,
  kNegationCues,
  kDomainTerms,
  kNonAsciiRatio,
  kCjkRatio,
  kCapitalizedRatio,
  kAvgWordLength,
  kLongWordRatio,
  kTaskNgrams,
  kFeatureEnd,
  kNoCue = 0xff,
};
static_assert(kFeatureEnd == kFeatureCount, "feature enum and kFeatureCount disagree");

constexpr std::array<std::string_view, kFeatureCount> kNames = {
    "log_chars",         "log_words",      "log_turns",         "log_system_chars",
    "log_history_chars", "sentences",      "question_marks",    "lines",
    "digit_ratio",       "numbers",        "math_symbols",      "math_terms",
    "code_symbols",      "code_keywords",  "easy_task_cues",    "yes_no_cues",
    "choice_options",    "hard_task_cues", "reasoning_cues",    "creative_cues",
    "constraint_cues",   "factoid_cues",   "negation_cues",     "domain_terms",
    "non_ascii_ratio",   "cjk_ratio",      "capitalized_ratio", "avg_word_length",
    "long_word_ratio",   "task_ngrams",
};

// Words that take part in multi-word cues ("step by step", "at least", "which of the
// following"...). The scanner remembers the tags of the last two words, so phrases cost no
// lookahead and no allocation.
enum class Tag : uint8_t {
  kNone,
  kStep,
  kBy,
  kAt,
  kNo,
  kMore,
  kLess,
  kThan,
  kMost,
  kLeast,
  kHow,
  kMany,
  kMuch,
  kExplain,
  kWhy,
  kThe,
  kOf,
  kFollowing,
  kYes,
  kOr,
  kWhether,
  kJudge,  // assess, evaluate, determine, decide: "assess whether" asks for a judgement
  kTrade,
  kOffs,
};

struct Entry {
  std::string_view word;
  uint8_t cue;  // a Feature counted when the word occurs alone, or kNoCue
  Tag tag;
};

// The vocabulary: small on purpose. Each list holds the words that signal the category in
// instructions, not every synonym; docs/ROUTER_TRAINING.md explains the categories.
constexpr Entry kEntries[] = {
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

// The cues that name the task asked for (prompt_features.h): counted in the instruction only.
constexpr uint8_t kInstructionCues[] = {kEasyTaskCues,  kYesNoCues,    kHardTaskCues,
                                        kReasoningCues, kCreativeCues, kConstraintCues,
                                        kFactoidCues};

// A line longer than this many characters is read as material (a pasted email, an article),
// not as the request. Characters, not bytes: a Chinese request is three bytes a character.
constexpr size_t kMaxInstructionLineChars = 400;

constexpr size_t kMaxWordLength = 16;  // longer words are never in the vocabulary
constexpr size_t kSlotCount = 1024;    // power of two, load factor about 0.3

constexpr uint32_t kFnvOffset = 2166136261u;
constexpr uint32_t kFnvPrime = 16777619u;

constexpr uint32_t fnv1a(std::string_view text) {
  uint32_t hash = kFnvOffset;
  for (char c : text) {
    hash = (hash ^ static_cast<uint8_t>(c)) * kFnvPrime;
  }
  return hash;
}

// Open addressing, built at compile time: slot -> 1 + index into kEntries, 0 = empty.
constexpr std::array<uint16_t, kSlotCount> kSlots = [] {
  std::array<uint16_t, kSlotCount> slots{};
  for (size_t i = 0; i < std::size(kEntries); ++i) {
    size_t slot = fnv1a(kEntries[i].word) & (kSlotCount - 1);
    while (slots[slot] != 0) {
      slot = (slot + 1) & (kSlotCount - 1);
    }
    slots[slot] = static_cast<uint16_t>(i + 1);
  }
  return slots;
}();

constexpr bool vocabulary_is_valid() {
  for (size_t i = 0; i < std::size(kEntries); ++i) {
    const auto word = kEntries[i].word;
    if (word.empty() || word.size() > kMaxWordLength) {
      return false;
    }
    for (char c : word) {
      if (c < 'a' || c > 'z') {
        return false;
      }
    }
    for (size_t j = i + 1; j < std::size(kEntries); ++j) {
      if (kEntries[j].word == word) {
        return false;
      }
    }
  }
  return std::size(kEntries) * 2 < kSlotCount;
}
static_assert(vocabulary_is_valid(), "vocabulary words: unique, lower-case ASCII, short");

// `word` is ASCII letters in any case; vocabulary entries are lower case.
bool equals_lowered(std::string_view entry, std::string_view word) {
  if (entry.size() != word.size()) {
    return false;
  }
  for (size_t i = 0; i < word.size(); ++i) {
    if (entry[i] != static_cast<char>(word[i] | 0x20)) {
      return false;
    }
  }
  return true;
}

const Entry* lookup(uint32_t hash, std::string_view word) {
  size_t slot = hash & (kSlotCount - 1);
  while (kSlots[slot] != 0) {
    const Entry& entry = kEntries[kSlots[slot] - 1];
    if (equals_lowered(entry.word, word)) {
      return &entry;
    }
    slot = (slot + 1) & (kSlotCount - 1);
  }
  return nullptr;
}

// ASCII letters to lower case; 0 for every other byte. One load both tests and folds.
constexpr std::array<uint8_t, 256> kLowerLetter = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 'a'; c <= 'z'; ++c) {
    table[c] = static_cast<uint8_t>(c);
    table[c - 'a' + 'A'] = static_cast<uint8_t>(c);
  }
  return table;
}();

bool is_ascii_letter(unsigned char c) {
  return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}
bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}
bool is_blank(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// What a non-ASCII code point counts as.
enum class CodePointKind : uint8_t { kLetter, kCjk, kMath, kTerminator, kQuestion, kSeparator };

CodePointKind classify(uint32_t cp) {
  if ((cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
      (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0xac00 && cp <= 0xd7af) ||
      (cp >= 0xf900 && cp <= 0xfaff)) {
    return CodePointKind::kCjk;
  }
  if ((cp >= 0x2200 && cp <= 0x22ff) || cp == 0xd7 || cp == 0xf7 ||
      (cp >= 0x0370 && cp <= 0x03ff)) {
    return CodePointKind::kMath;  // operators, x, division sign, Greek letters
  }
  if (cp == 0x3002 || cp == 0xff01 || cp == 0xff0e) {
    return CodePointKind::kTerminator;
  }
  if (cp == 0xff1f) {
    return CodePointKind::kQuestion;
  }
  if (cp < 0xc0 || (cp >= 0x2000 && cp <= 0x2bff) || (cp >= 0x3000 && cp <= 0x303f) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff65) || cp == 0xfffd ||
      cp >= 0x1f000) {
    // Latin-1 and general punctuation, CJK punctuation, emoji, invalid bytes.
    return CodePointKind::kSeparator;
  }
  return CodePointKind::kLetter;  // accented Latin, Cyrillic, Arabic...: part of a word
}

// The Chinese cues (prompt_cues_zh.h) by the FNV-1a hash of their UTF-8 bytes: open
// addressing, built once on first use.
class ZhCueTable {
 public:
  static constexpr size_t kSlots = 512;  // power of two, load factor under 0.4

  ZhCueTable() {
    const auto cues = zh_cues();
    for (size_t i = 0; i < cues.size(); ++i) {
      size_t slot = fnv1a(cues[i].phrase) & (kSlots - 1);
      while (slots_[slot] != 0) {
        slot = (slot + 1) & (kSlots - 1);
      }
      slots_[slot] = static_cast<uint16_t>(i + 1);
      const size_t feature = feature_index(cues[i].feature);
      features_[i] = static_cast<uint8_t>(feature < kFeatureCount ? feature : size_t{kNoCue});
      const auto [previous, last] = last_two_code_points(cues[i].phrase);
      if (previous == 0) {
        set(singles_, last);
      } else {
        set(pairs_, pair_key(previous, last));
      }
    }
  }

  // Filters that let most characters skip the lookups (Chinese text costs a bit test or two
  // per character, not four hashes): whether a one-character phrase is this character, and
  // whether a longer phrase may end with these two (false positives only cost a lookup).
  bool may_be_a_phrase(uint32_t cp) const { return test(singles_, cp); }
  bool may_end_a_phrase(uint32_t previous, uint32_t cp) const {
    return test(pairs_, pair_key(previous, cp));
  }

  // The feature the phrase counts toward, or kNoCue.
  uint8_t find(std::string_view phrase) const {
    const auto cues = zh_cues();
    size_t slot = fnv1a(phrase) & (kSlots - 1);
    while (slots_[slot] != 0) {
      const size_t index = slots_[slot] - 1u;
      if (cues[index].phrase == phrase) {
        return features_[index];
      }
      slot = (slot + 1) & (kSlots - 1);
    }
    return kNoCue;
  }

 private:
  static constexpr uint32_t kFilterBits = 0x10000;
  using Filter = std::array<uint64_t, kFilterBits / 64>;

  static uint32_t pair_key(uint32_t previous, uint32_t cp) {
    return (previous * 31u + cp) & (kFilterBits - 1);
  }
  static void set(Filter& filter, uint32_t key) {
    key &= kFilterBits - 1;
    filter[key / 64] |= uint64_t{1} << (key % 64);
  }
  static bool test(const Filter& filter, uint32_t key) {
    key &= kFilterBits - 1;
    return (filter[key / 64] >> (key % 64) & 1) != 0;
  }

  // The last two code points of a phrase (0 for the first when it has one); the phrases are
  // valid UTF-8 by construction.
  static std::pair<uint32_t, uint32_t> last_two_code_points(std::string_view text) {
    uint32_t previous = 0;
    uint32_t last = 0;
    for (size_t i = 0; i < text.size();) {
      uint32_t cp = 0;
      i += decode_utf8(text, i, cp);
      previous = last;
      last = cp;
    }
    return {previous, last};
  }

  std::array<uint16_t, kSlots> slots_{};
  std::array<uint8_t, kSlots> features_{};
  Filter singles_{};
  Filter pairs_{};
};

const ZhCueTable& zh_cue_table() {
  static const ZhCueTable table;
  return table;
}

// One pass over the last user message. Counts only; extract_features turns them into values.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text), zh_cues_(zh_cue_table()) {}

  void run() {
    const size_t n = text_.size();
    for (size_t i = 0; i < n; ++i) {
      const auto c = static_cast<unsigned char>(text_[i]);
      if (line_start_ && !is_blank(c) && c != '\n') {
        line_start_ = false;
        check_option_line(i);
      }
      if (is_ascii_letter(c)) {
        i = add_letters(i) - 1;
        continue;
      }
      if (c >= 0x80) {
        uint32_t cp = 0;
        const size_t length = decode_utf8(text_, i, cp);
        add_code_point(cp, i, length);
        i += length - 1;
        continue;
      }
      ++code_points_;
      end_word();
      if (is_digit(c)) {
        ++digits_;
        has_content_ = true;
        sentence_has_content_ = true;
        ends_with_terminator_ = false;
        if (!in_number_) {
          in_number_ = true;
          ++numbers_;
        }
        sentence_start_ = false;
        continue;
      }
      const bool after_digit = in_number_;
      in_number_ = false;
      add_symbol(c, i, after_digit);
    }
    end_word();
    if (has_content_ && !ends_with_terminator_) {
      ++sentences_;  // the last sentence often has no full stop
    }
    close_line();
  }

  void fill(PromptFeatures& f) const {
    auto log_count = [](double count) { return static_cast<float>(std::log1p(count)); };
    auto ratio = [](double part, double whole) {
      return whole > 0 ? static_cast<float>(part / whole) : 0.0f;
    };
    auto& v = f.values;
    v[kLogChars] = log_count(static_cast<double>(text_.size()));
    v[kLogWords] = log_count(static_cast<double>(words_));
    v[kSentences] = log_count(static_cast<double>(sentences_));
    v[kQuestionMarks] = log_count(static_cast<double>(question_marks_));
    v[kLines] = log_count(static_cast<double>(has_content_ ? newlines_ + 1 : 0));
    v[kDigitRatio] = ratio(static_cast<double>(digits_), static_cast<double>(code_points_));
    v[kNumbers] = log_count(static_cast<double>(numbers_));
    for (uint8_t cue : {kMathSymbols, kMathTerms, kCodeSymbols, kCodeKeywords, kChoiceOptions,
                        kNegationCues, kDomainTerms}) {
      v[cue] = log_count(static_cast<double>(cues_[cue]));
    }
    // Task cues say what is asked, so they count where the asking is: the first and the last
    // sentence, outside text after a colon (what is pasted to be classified, translated or
    // summarised mentions "plan" or "design" without asking for one).
    for (uint8_t cue : kInstructionCues) {
      const bool add_last = lines_with_content_ > 1 && !first_line_short_;
      const size_t count = first_line_cues_[cue] + (add_last ? last_line_cues_[cue] : 0);
      v[cue] = log_count(static_cast<double>(count));
    }
    v[kNonAsciiRatio] = ratio(static_cast<double>(non_ascii_), static_cast<double>(code_points_));
    v[kCjkRatio] = ratio(static_cast<double>(cjk_), static_cast<double>(code_points_));
    v[kCapitalizedRatio] =
        ratio(static_cast<double>(capitalized_words_), static_cast<double>(letter_words_));
    // Capped: one base64 blob must not turn into an extreme value.
    v[kAvgWordLength] =
        std::min(ratio(static_cast<double>(letters_), static_cast<double>(letter_words_)), 30.0f);
    v[kLongWordRatio] = ratio(static_cast<double>(long_words_), static_cast<double>(letter_words_));
  }

 private:
  // Consumes the run of ASCII letters starting at `begin`; returns where it ends. Most of the
  // text is letters, so this loop is the hot path: locals only, one pass, hashing as it reads
  // (the word is compared in place on lookup, never copied).
  size_t add_letters(size_t begin) {
    if (word_length_ == 0) {
      word_start_ = begin;
      word_capitalized_ = text_[begin] >= 'A' && text_[begin] <= 'Z';
      word_at_sentence_start_ = sentence_start_;
      word_hash_ = kFnvOffset;
      word_lookup_ = true;
    }
    in_number_ = false;
    sentence_start_ = false;
    has_content_ = true;
    sentence_has_content_ = true;
    ends_with_terminator_ = false;
    // Words longer than any vocabulary entry are hashed too (cheaper than a branch) but never
    // looked up.
    uint32_t hash = word_hash_;
    size_t end = begin;
    for (; end < text_.size(); ++end) {
      const uint8_t lower = kLowerLetter[static_cast<unsigned char>(text_[end])];
      if (lower == 0) {
        break;
      }
      hash = (hash ^ lower) * kFnvPrime;
    }
    word_length_ += end - begin;
    if (word_length_ > kMaxWordLength) {
      word_lookup_ = false;
    }
    word_hash_ = hash;
    code_points_ += end - begin;
    return end;
  }

  void add_code_point(uint32_t cp, size_t begin, size_t length) {
    ++code_points_;
    ++non_ascii_;
    in_number_ = false;
    switch (classify(cp)) {
      case CodePointKind::kLetter:
        // Continues (or starts) a word that no vocabulary entry can match.
        if (word_length_ == 0) {
          word_capitalized_ = false;
          word_at_sentence_start_ = sentence_start_;
        }
        word_lookup_ = false;
        ++word_length_;
        sentence_start_ = false;
        has_content_ = true;
        sentence_has_content_ = true;
        ends_with_terminator_ = false;
        return;
      case CodePointKind::kCjk:
        // CJK has no spaces: each character counts as a word for the length features.
        end_word();
        ++cjk_;
        ++words_;
        add_zh_character(cp, begin, length);
        sentence_start_ = false;
        has_content_ = true;
        sentence_has_content_ = true;
        ends_with_terminator_ = false;
        return;
      case CodePointKind::kMath:
        end_word();
        ++cues_[kMathSymbols];
        return;
      case CodePointKind::kQuestion:
        ++question_marks_;
        [[fallthrough]];
      case CodePointKind::kTerminator:
        end_word();
        ++sentences_;
        sentence_start_ = true;
        ends_with_terminator_ = true;
        close_sentence();
        return;
      case CodePointKind::kSeparator:
        end_word();
        if (cp == 0xff1a) {  // a full-width colon, as after "请翻译下面这段话："
          in_content_ = true;
        }
        return;
    }
  }

  // A task cue: counted over the whole text, and in the sentence unless it sits in material
  // after a colon.
  void count_cue(uint8_t cue) {
    ++cues_[cue];
    if (!in_content_) {
      ++sentence_cues_[cue];
    }
  }

  // Ends the sentence in progress (at a terminator, a line break or the end of the text).
  void close_sentence() {
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
  }

  // Ends the line in progress (at a line break, counted, or the end of the text). The request is
  // the first line when it is short ("Translate this into French:" over a pasted email); a long
  // first line is material, so the request is its first sentence and the last line (whole when
  // short, else its last sentence: "<article>\n\nSummarise the above."). When the first line is
  // short, a short last line is not added: pasted mail ends in short lines too ("Thanks, Anna").
  void close_line() {
    close_sentence();
    if (line_sentences_ > 0) {
      const bool whole = code_points_ - line_begin_ <= kMaxInstructionLineChars;
      if (lines_with_content_ == 0) {
        first_line_short_ = whole;
        first_line_cues_ = whole ? line_cues_ : line_first_cues_;
      }
      last_line_cues_ = whole ? line_cues_ : line_last_cues_;
      ++lines_with_content_;
    }
    line_cues_ = {};
    line_sentences_ = 0;
    line_begin_ = code_points_;
  }

  void add_symbol(unsigned char c, size_t i, bool after_digit) {
    switch (c) {
      case '\n':
        ++newlines_;
        line_start_ = true;
        sentence_start_ = true;
        close_line();
        return;
      case '?':
        ++question_marks_;
        [[fallthrough]];
      case '.':
      case '!':
        // A full stop inside "3.5" or "e.g." is not the end of a sentence; one before a
        // closing quote is ("...in 2024." Format it...).
        if (ends_sentence(i + 1)) {
          ++sentences_;
          sentence_start_ = true;
          ends_with_terminator_ = true;
          close_sentence();
        }
        return;
      case ':':
        // "Classify this review: ..." — what follows is the material, not the request. Not
        // in "11:20".
        if (!after_digit &&
            (i + 1 == text_.size() || !is_digit(static_cast<unsigned char>(text_[i + 1])))) {
          in_content_ = true;
        }
        return;
      case '=':
      case '+':
      case '^':
      case '<':
      case '>':
      case '%':
      case '*':
      case '\\':
        ++cues_[kMathSymbols];
        return;
      case '/':
        if (after_digit) {
          ++cues_[kMathSymbols];  // 3/4, not "and/or"
        }
        return;
      case '{':
      case '}':
      case ';':
      case '`':
        ++cues_[kCodeSymbols];
        return;
      default:
        return;
    }
  }

  // A CJK character at text_[begin, begin + length): counts the longest Chinese cue that ends
  // with it. The run's last kMaxZhCueChars character starts are kept in a ring; a character
  // that does not follow the previous one directly starts a new run.
  void add_zh_character(uint32_t cp, size_t begin, size_t length) {
    if (begin != zh_run_end_) {
      zh_run_ = 0;
      zh_matched_until_ = 0;
    }
    zh_starts_[zh_run_ % kMaxZhCueChars] = begin;
    ++zh_run_;
    zh_run_end_ = begin + length;
    const uint32_t previous = zh_previous_;
    zh_previous_ = cp;
    // Phrases do not overlap: in "翻译成" the match "翻译" leaves "译成" uncounted.
    const size_t room = std::min(zh_run_ - zh_matched_until_, kMaxZhCueChars);
    const bool longer = room >= 2 && zh_cues_.may_end_a_phrase(previous, cp);
    const bool single = zh_cues_.may_be_a_phrase(cp);
    if (!longer && !single) {
      return;
    }
    for (size_t chars = longer ? room : 1; chars > 0; --chars) {
      const size_t start = zh_starts_[(zh_run_ - chars) % kMaxZhCueChars];
      const uint8_t cue = zh_cues_.find(text_.substr(start, zh_run_end_ - start));
      if (cue != kNoCue) {
        count_cue(cue);
        zh_matched_until_ = zh_run_;
        return;
      }
    }
  }

  // Whether a terminator before text_[next] ends a sentence: the text ends, or a blank or a
  // line break follows, after any closing quotes or brackets.
  bool ends_sentence(size_t next) const {
    while (next < text_.size() && (text_[next] == '"' || text_[next] == '\'' ||
                                   text_[next] == ')' || text_[next] == ']')) {
      ++next;
    }
    return next == text_.size() || is_blank(static_cast<unsigned char>(text_[next])) ||
           text_[next] == '\n';
  }

  // "A." "B)" "c:" "(D)" at the start of a line: a multiple-choice option.
  void check_option_line(size_t i) {
    auto at = [&](size_t k) -> unsigned char {
      return i + k < text_.size() ? static_cast<unsigned char>(text_[i + k]) : '\0';
    };
    auto option_letter = [](unsigned char c) {
      return (c >= 'A' && c <= 'H') || (c >= 'a' && c <= 'h');
    };
    auto follows_option = [](unsigned char c) { return c == ' ' || c == '\t' || c == '\0'; };
    const bool lettered = option_letter(at(0)) && (at(1) == '.' || at(1) == ')' || at(1) == ':') &&
                          follows_option(at(2));
    const bool parenthesised = at(0) == '(' && option_letter(at(1)) && at(2) == ')';
    if (lettered || parenthesised) {
      ++cues_[kChoiceOptions];
    }
  }

  void end_word() {
    if (word_length_ == 0) {
      return;
    }
    ++words_;
    ++letter_words_;
    letters_ += word_length_;
    if (word_length_ >= 10) {
      ++long_words_;
    }
    if (word_capitalized_ && !word_at_sentence_start_ && word_length_ > 1) {
      ++capitalized_words_;
    }
    Tag tag = Tag::kNone;
    if (word_lookup_) {
      if (const Entry* entry = lookup(word_hash_, text_.substr(word_start_, word_length_))) {
        tag = entry->tag;
        if (!count_phrase(tag) && entry->cue != kNoCue) {
          count_cue(entry->cue);
        }
      }
    }
    previous2_ = previous_;
    previous_ = tag;
    word_length_ = 0;
  }

  // Counts a phrase ending in this word; true when one matched (the word's own cue is then
  // not counted: "at least" is a constraint, not a negation).
  bool count_phrase(Tag tag) {
    auto count = [&](uint8_t cue) {
      count_cue(cue);
      return true;
    };
    switch (tag) {
      case Tag::kStep:
        return previous_ == Tag::kBy && previous2_ == Tag::kStep && count(kReasoningCues);
      case Tag::kLeast:
      case Tag::kMost:
        return previous_ == Tag::kAt && count(kConstraintCues);
      case Tag::kThan:
        return (previous_ == Tag::kMore || previous_ == Tag::kLess) && previous2_ == Tag::kNo &&
               count(kConstraintCues);
      case Tag::kMany:
      case Tag::kMuch:
        return previous_ == Tag::kHow && count(kMathTerms);
      case Tag::kWhy:
      case Tag::kHow:
        return previous_ == Tag::kExplain && count(kHardTaskCues);
      case Tag::kWhether:  // "explain (assess, determine) whether it would be enforceable"
        return (previous_ == Tag::kExplain || previous_ == Tag::kJudge) && count(kHardTaskCues);
      case Tag::kOffs:  // "trade-offs", "trade offs"
        return previous_ == Tag::kTrade && count(kHardTaskCues);
      case Tag::kFollowing:
        return previous_ == Tag::kThe && previous2_ == Tag::kOf && count(kChoiceOptions);
      case Tag::kNo:
        return (previous_ == Tag::kYes || (previous_ == Tag::kOr && previous2_ == Tag::kYes)) &&
               count(kYesNoCues);
      default:
        return false;
    }
  }

  std::string_view text_;
  const ZhCueTable& zh_cues_;
  std::array<size_t, kFeatureCount> cues_{};
  size_t code_points_ = 0;
  size_t non_ascii_ = 0;
  size_t cjk_ = 0;
  size_t digits_ = 0;
  size_t numbers_ = 0;
  size_t words_ = 0;
  size_t letter_words_ = 0;
  size_t letters_ = 0;
  size_t long_words_ = 0;
  size_t capitalized_words_ = 0;
  size_t sentences_ = 0;
  size_t question_marks_ = 0;
  size_t newlines_ = 0;

  // Task cues of the sentence and the line in progress, and of the first and last lines.
  using CueCounts = std::array<uint32_t, kFeatureCount>;
  CueCounts sentence_cues_{};
  CueCounts line_cues_{};
  CueCounts line_first_cues_{};
  CueCounts line_last_cues_{};
  CueCounts first_line_cues_{};
  CueCounts last_line_cues_{};
  size_t line_sentences_ = 0;
  size_t line_begin_ = 0;  // code_points_ where the line in progress began
  size_t lines_with_content_ = 0;
  bool first_line_short_ = false;
  bool sentence_has_content_ = false;
  bool in_content_ = false;

  std::array<size_t, kMaxZhCueChars> zh_starts_{};
  size_t zh_run_ = 0;
  size_t zh_run_end_ = 0;
  size_t zh_matched_until_ = 0;  // characters of the run already in a counted phrase
  uint32_t zh_previous_ = 0;     // the run's previous character

  size_t word_start_ = 0;
  size_t word_length_ = 0;
  uint32_t word_hash_ = kFnvOffset;
  bool word_lookup_ = true;
  bool word_capitalized_ = false;
  bool word_at_sentence_start_ = false;
  Tag previous_ = Tag::kNone;
  Tag previous2_ = Tag::kNone;

  bool in_number_ = false;
  bool sentence_start_ = true;
  bool line_start_ = true;
  bool has_content_ = false;
  bool ends_with_terminator_ = false;
};

}  // namespace

const std::array<std::string_view, kFeatureCount>& feature_names() {
  return kNames;
}

size_t feature_index(std::string_view name) {
  for (size_t i = 0; i < kFeatureCount; ++i) {
    if (kNames[i] == name) {
      return i;
    }
  }
  return kFeatureCount;
}

constexpr double kTaskLogitLimit = 12.0;

PromptFeatures extract_features(const PromptView& prompt) {
  return extract_features(prompt, TaskModel::builtin());
}

PromptFeatures extract_features(const PromptView& prompt, const TaskModel& task_model) {
  PromptFeatures features;
  Scanner scanner(prompt.last_user);
  scanner.run();
  scanner.fill(features);
  auto log_count = [](size_t count) { return static_cast<float>(std::log1p(count)); };
  features.values[kLogTurns] = log_count(prompt.turns);
  features.values[kLogSystemChars] = log_count(prompt.system.size());
  // What the conversation holds besides the system prompt and the last message: long
  // histories need long-context skill. total_chars may be 0 when the caller left it unset.
  const size_t own = prompt.system.size() + prompt.last_user.size();
  features.values[kLogHistoryChars] =
      log_count(prompt.total_chars > own ? prompt.total_chars - own : 0);
  // The task model's judgement of what is asked, clipped so that no prompt's n-grams can
  // outweigh every other feature (the training data's logits stay within about ±6).
  const double task = task_model.logit(prompt.last_user);
  features.values[kTaskNgrams] =
      static_cast<float>(std::clamp(task, -kTaskLogitLimit, kTaskLogitLimit));
  return features;
}

}  // namespace tandem::routing
