#include "routing/prompt_scanner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "common/utf8.h"
#include "routing/prompt_code_points.h"
#include "routing/prompt_cues_th.h"
#include "routing/prompt_cues_zh.h"
#include "routing/prompt_feature_ids.h"
#include "routing/prompt_request_text.h"
#include "routing/prompt_vocabulary.h"
#include "routing/prompt_word_forms.h"
#include "routing/request_cues.h"
#include "routing/request_spans.h"

namespace tandem::routing {
namespace {

using namespace prompt_detail;

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
        if (vocabulary_letter_at(text_, i) != 0) {
          i = add_letters(i) - 1;
          continue;
        }
        if (run_cjk_at(text_, i) != 0) {
          i = add_ideograph_run(i) - 1;
          continue;
        }
        if (thai_letter_at(text_, i)) {
          i = add_thai_letters(i) - 1;
          continue;
        }
        if (greek_letter_at(text_, i) != 0) {
          i = add_greek_letters(i) - 1;
          continue;
        }
        uint32_t cp = 0;
        const size_t length = decode_utf8(text_, i, cp);
        add_code_point(cp, i, length);
        i += length - 1;
        continue;
      }
      ++code_points_;
      end_word();
      if (is_ascii_digit(c)) {
        ++digits_;
        mark_content();
        if (!in_number_) {
          in_number_ = true;
          ++numbers_;
        }
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
    v[kLogChars] = log_count(weighed_prompt_length(text_));
    v[kLogWords] = log_count(static_cast<double>(words_));
    v[kSentences] = log_count(static_cast<double>(sentences_));
    v[kQuestionMarks] = log_count(static_cast<double>(question_marks_));
    v[kLines] = log_count(static_cast<double>(has_content_ ? newlines_ + 1 : 0));
    v[kDigitRatio] = ratio(static_cast<double>(digits_), static_cast<double>(code_points_));
    // Pages pasted between a prompt's first and last lines (more than the task model's two
    // windows) count as the length does: the figures, terms and negations of a contract are
    // what a lookup searches, not how much the answer must do. A shorter prompt's middle is its
    // question (a benchmark harness's "Question: ..." between its instruction and "Answer:"),
    // and its terms are the signal. A multiple-choice question's options are its shape, not
    // material, wherever they stand (query_kind.cpp reads them too).
    const bool pasted_pages =
        request_.lines_with_content() > 1 && text_.size() > 2 * kRequestWindowBytes;
    auto weighed = [&](size_t total, size_t in_request) {
      return pasted_pages ? weigh_material(total, in_request) : static_cast<double>(total);
    };
    v[kNumbers] = log_count(weighed(numbers_, line_counts_.numbers_in_request()));
    for (uint8_t cue :
         {kMathSymbols, kMathTerms, kCodeSymbols, kCodeKeywords, kNegationCues, kDomainTerms}) {
      v[cue] = log_count(weighed(cues_[cue], line_counts_.cues_in_request(cue)));
    }
    v[kChoiceOptions] = log_count(static_cast<double>(cues_[kChoiceOptions]));
    // Task cues say what is asked, so they count where the asking is (request_cues.h).
    for (uint8_t cue : kInstructionCues) {
      v[cue] = log_count(static_cast<double>(request_.count(cue)));
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
  // Consumes the run of letters starting at `begin`, ASCII or of the vocabulary's other scripts
  // (accented Latin, Cyrillic, Hebrew, Arabic: two UTF-8 bytes each; the Indic scripts,
  // Vietnamese: three); returns where it ends. Most of the text is letters, so this loop is the hot
  // path: locals only, one pass, hashing each letter's folded code point as it reads (the word is
  // compared in place on lookup, never copied; Arabic and Hebrew marks are left out of the hash and
  // the copy).
  size_t add_letters(size_t begin) {
    if (word_length_ == 0) {
      word_start_ = begin;
      word_capitalized_ = text_[begin] >= 'A' && text_[begin] <= 'Z';
      word_at_sentence_start_ = sentence_start_;
      word_hash_ = kFnvOffset;
      word_lookup_ = true;
    }
    in_number_ = false;
    mark_content();
    // Words longer than any vocabulary entry are hashed too (cheaper than a branch) but never
    // looked up.
    uint32_t hash = word_hash_;
    size_t letters = 0;
    size_t other_letters = 0;
    size_t marks = 0;
    size_t end = begin;
    while (end < text_.size()) {
      const uint8_t lower = kLowerLetter[static_cast<unsigned char>(text_[end])];
      if (lower != 0) {
        hash = (hash ^ lower) * kFnvPrime;
        ++end;
        ++letters;
        continue;
      }
      const uint32_t cp = vocabulary_letter_at(text_, end);
      if (cp == 0) {
        break;
      }
      if (is_word_mark(cp)) {
        ++marks;  // an Arabic vowel sign or a Hebrew point: the word is looked up without it
      } else {
        hash = (hash ^ fold_vocabulary_letter(cp)) * kFnvPrime;
      }
      end += letter_bytes(cp);
      ++letters;
      ++other_letters;
    }
    word_length_ += letters;
    word_marks_ += marks;
    if (word_length_ - word_marks_ > kMaxWordLength) {
      word_lookup_ = false;
    }
    word_hash_ = hash;
    word_end_ = end;
    code_points_ += letters;
    non_ascii_ += other_letters;
    return end;
  }

  // A letter of a script the vocabulary has no words in (Armenian, Georgian, Ethiopic...)
  // continues or starts a word that is never looked up.
  void add_letter(size_t begin, size_t length) { add_unlisted_letters(begin, begin + length, 1); }

  // `letters` letters of such a script, in [begin, end).
  void add_unlisted_letters(size_t begin, size_t end, size_t letters) {
    if (word_length_ == 0) {
      word_start_ = begin;
      word_capitalized_ = false;
      word_at_sentence_start_ = sentence_start_;
    }
    word_lookup_ = false;
    word_length_ += letters;
    word_end_ = end;
    mark_content();
  }

  // Consumes the run of Thai letters starting at `begin`; returns where it ends. What
  // add_code_point does for each, with the counts added once per run: Thai text is mostly such
  // runs. The run's cue phrases are counted when it ends (end_thai_run).
  size_t add_thai_letters(size_t begin) {
    size_t end = begin + 3;
    while (end < text_.size() && thai_letter_at(text_, end)) {
      end += 3;
    }
    const size_t letters = (end - begin) / 3;
    code_points_ += letters;
    non_ascii_ += letters;
    in_number_ = false;
    add_unlisted_letters(begin, end, letters);
    if (thai_run_end_ != begin) {
      if (thai_run_end_ != 0) {
        end_thai_run();
      }
      thai_run_begin_ = begin;
    }
    thai_run_end_ = end;
    return end;
  }

  // Consumes the run of Greek letters starting at `begin`; returns where it ends. Two or more
  // are a Greek word, looked up folded (fold_greek). One letter alone is a maths symbol, as
  // classify() reads it (α, π, Δ in a formula, "ΔH" included: what follows is another word),
  // unless a space and a Greek word of two letters or more follow it: the articles and "or" of
  // Greek prose ("η ρίζα", "Ο καιρός", "ναι ή όχι").
  size_t add_greek_letters(size_t begin) {
    size_t end = begin;
    uint32_t hash = kFnvOffset;
    for (uint32_t cp = greek_letter_at(text_, end); cp != 0; cp = greek_letter_at(text_, end)) {
      hash = (hash ^ fold_greek(cp)) * kFnvPrime;
      end += 2;
    }
    const size_t letters = (end - begin) / 2;
    const bool before_greek_word = end < text_.size() && text_[end] == ' ' &&
                                   greek_letter_at(text_, end + 1) != 0 &&
                                   greek_letter_at(text_, end + 3) != 0;
    if (letters == 1 && !before_greek_word) {
      add_code_point(greek_letter_at(text_, begin), begin, 2);
      return end;
    }
    end_word();
    in_number_ = false;
    mark_content();
    word_start_ = begin;
    word_end_ = end;
    word_capitalized_ = false;
    word_at_sentence_start_ = sentence_start_;
    word_hash_ = hash;
    word_length_ = letters;
    word_lookup_ = letters <= kMaxWordLength;
    code_points_ += letters;
    non_ascii_ += letters;
    end_word();  // Latin letters right after it start a word of their own, as after α
    return end;
  }

  // Consumes the run of common ideographs starting at `begin`; returns where it ends. What
  // add_code_point does for each CJK character, with the counts added once per run: Chinese
  // text is mostly such runs, and this is its hot path.
  size_t add_ideograph_run(size_t begin) {
    end_word();
    in_number_ = false;
    mark_content();
    // Locals, not members: the loop then keeps them in registers.
    const std::string_view text = text_;
    ZhRun zh = zh_;
    size_t end = begin;
    for (uint32_t cp = run_cjk_at(text, end); cp != 0;) {
      if (const size_t room = zh.add(cp, end, 3, zh_cues_); room != 0) {
        zh.matched_until = match_zh_phrase(zh, room);
      }
      end += 3;
      cp = run_cjk_at(text, end);
    }
    zh_ = zh;
    const size_t characters = (end - begin) / 3;
    code_points_ += characters;
    non_ascii_ += characters;
    cjk_ += characters;
    words_ += characters;
    return end;
  }

  void add_code_point(uint32_t cp, size_t begin, size_t length) {
    ++code_points_;
    ++non_ascii_;
    in_number_ = false;
    switch (classify(cp)) {
      case CodePointKind::kLetter:
        add_letter(begin, length);  // Thai letters are read by add_thai_letters
        return;
      case CodePointKind::kCjk:
        // CJK has no spaces: each character counts as a word for the length features.
        end_word();
        ++cjk_;
        ++words_;
        if (const size_t room = zh_.add(cp, begin, length, zh_cues_); room != 0) {
          zh_.matched_until = match_zh_phrase(zh_, room);
        }
        mark_content();
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
        clause_start_ = begin + length;
        ++sentences_;
        sentence_start_ = true;
        ends_with_terminator_ = true;
        request_.close_sentence();
        return;
      case CodePointKind::kSeparator:
        end_word();
        if (cp == 0xff0c || cp == 0xff1b || cp == 0xff1a) {  // ，；：
          clause_start_ = begin + length;
        }
        if (cp == 0xff1a) {  // a full-width colon, as after "请翻译下面这段话："
          request_.open_colon_material(words_, cjk_);
        }
        return;
    }
  }

  // A letter, digit or ideograph: the text and the sentence have content, which no longer
  // starts a sentence nor ends at a terminator.
  void mark_content() {
    request_.mark_content();
    sentence_start_ = false;
    has_content_ = true;
    ends_with_terminator_ = false;
  }

  // A task cue at byte `at`: counted over the whole text, and in the sentence unless it sits in
  // material after a colon or a negation forbids it ("no explanation", "不要解释").
  void count_cue(uint8_t cue, size_t at) {
    ++cues_[cue];
    // A constraint is often a negation itself ("no more than", "without a calculator").
    if (cue != kConstraintCues && is_instruction_cue(cue) &&
        task_negated_before(text_, clause_start_, at)) {
      return;
    }
    request_.add(cue);
  }

  // Ends the line in progress (at a line break, counted, or the end of the text).
  void close_line() {
    const bool first = request_.lines_with_content() == 0;
    if (request_.close_line(code_points_, question_marks_ > 0, words_, cjk_)) {
      line_counts_.keep_line(cues_, numbers_, first);
    }
    line_counts_.start_line(cues_, numbers_);
  }

  void add_symbol(unsigned char c, size_t i, bool after_digit) {
    if (c == ',' || c == ';' || c == ':' || c == '.' || c == '!' || c == '?' || c == '\n') {
      clause_start_ = i + 1;
    }
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
        if (ends_sentence(text_, i + 1)) {
          ++sentences_;
          sentence_start_ = true;
          ends_with_terminator_ = true;
          request_.close_sentence();
        }
        return;
      case ':':
        // "Classify this review: ..." — what follows is the material, not the request. Not
        // in "11:20".
        if (!after_digit &&
            (i + 1 == text_.size() || !is_ascii_digit(static_cast<unsigned char>(text_[i + 1])))) {
          request_.open_colon_material(words_, cjk_);
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

  // Counts the longest Chinese cue phrase of at most `room` characters that ends the run;
  // returns the run's new matched_until. By value: the caller's copy of the run never has its
  // address taken, so its counters stay in registers.
  size_t match_zh_phrase(ZhRun zh, size_t room) {
    for (size_t chars = room; chars > 0; --chars) {
      const uint8_t cue = zh_cues_.find(zh.last(text_, chars));
      if (cue != kNoCue) {
        const std::string_view phrase = zh.last(text_, chars);
        count_cue(cue, static_cast<size_t>(phrase.data() - text_.data()));
        return zh.length;
      }
    }
    return zh.matched_until;
  }

  void check_option_line(size_t i) {
    if (opens_choice_option(text_, i)) {
      ++cues_[kChoiceOptions];
    }
  }

  [[gnu::always_inline]] void end_word() {
    if (word_length_ == 0) {
      return;
    }
    if (thai_run_end_ != 0) {
      end_thai_run();  // a run of Thai letters is inside a word
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
    bool may_start_pair = false;
    if (word_lookup_) {
      // The pair test is inline and cheap; reading a pair is out of line (Vietnamese text).
      const bool after_first = pair_first_end_ != 0 && word_start_ == pair_first_end_ + 1 &&
                               text_[pair_first_end_] == ' ';
      if (!after_first || !count_word_pair()) {
        tag = look_up_word();
        may_start_pair = may_start_a_pair(word_hash_);
      }
    }
    // A word that ended a pair starts none: "viết lại" is not read again in "hãy viết lại".
    pair_first_end_ = may_start_pair ? word_end_ : 0;
    pair_first_start_ = word_start_;
    pair_first_hash_ = word_hash_;
    previous2_ = previous_;
    previous_ = tag;
    word_length_ = 0;
    word_marks_ = 0;
  }

  // Counts the cue phrases of the run of Thai letters that just ended (prompt_cues_th.h): Thai
  // writes no spaces between words.
  [[gnu::noinline]] void end_thai_run() {
    std::array<uint8_t, 64> found;  // a run with more cues than this is not a request
    const size_t count = find_thai_cues(
        std::string_view(text_.data() + thai_run_begin_, thai_run_end_ - thai_run_begin_), found);
    for (size_t i = 0; i < count; ++i) {
      count_cue(found[i], thai_run_begin_);
    }
    thai_run_end_ = 0;
  }

  // Counts the word in progress when it is in the vocabulary; returns its tag.
  [[gnu::always_inline]] Tag look_up_word() {
    std::string_view word(text_.data() + word_start_, word_end_ - word_start_);
    std::array<char, 3 * kMaxWordLength> unmarked;
    if (word_marks_ != 0) {
      word = without_word_marks(word, unmarked);
      if (word.empty()) {
        return Tag::kNone;  // marks alone, a vowel sign typed on its own
      }
    }
    const VocabularyEntry* entry = find_word(word_hash_, word);
    if (entry == nullptr && (word.front() == '\xd9' || word.front() == '\xd7')) {
      // Arabic و and Hebrew ו, with the other letters of the same lead byte
      entry = find_word_after_conjunction(word);
    }
    if (entry == nullptr && word.ends_with("\xd8\xa7")) {  // an Arabic word ending in alif
      entry = find_word_before_accusative_alif(word);
    }
    if (entry == nullptr) {
      return Tag::kNone;
    }
    const bool names_a_tool =
        is_instruction_cue(entry->cue) && part_of_identifier(text_, word_start_, word_end_);
    if (!count_phrase(entry->tag) && entry->cue != kNoCue && !names_a_tool) {
      count_cue(entry->cue, word_start_);
    }
    return entry->tag;
  }

  // Counts a two-word entry ending in this word ("chứng minh", "phân tích": Vietnamese writes a
  // word as syllables with a space between); true when one matched (the word alone is then not
  // looked up, nor read as the first word of the next pair). Only a word that may start a pair
  // (may_start_a_pair) followed by one space is read as a first word, so other text pays a bit
  // test per word.
  [[gnu::noinline]] bool count_word_pair() {
    const VocabularyEntry* entry = find_word(
        pair_hash(pair_first_hash_, word_hash_),
        std::string_view(text_.data() + pair_first_start_, word_end_ - pair_first_start_));
    if (entry == nullptr || entry->cue == kNoCue) {
      return false;
    }
    count_cue(entry->cue, pair_first_start_);
    return true;
  }

  // Counts a phrase ending in this word; true when one matched (the word's own cue is then
  // not counted: "at least" is a constraint, not a negation).
  bool count_phrase(Tag tag) {
    const uint8_t cue = phrase_cue(tag, previous_, previous2_);
    if (cue == kNoCue) {
      return false;
    }
    count_cue(cue, word_start_);
    return true;
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
  LineCounts line_counts_;   // cues_ and numbers_ on the first and last lines
  RequestCues request_;      // the task cues where the request is
  size_t clause_start_ = 0;  // byte offset where the clause in progress began

  ZhRun zh_;

  size_t word_start_ = 0;  // byte offsets of the word in progress
  size_t word_end_ = 0;
  size_t word_length_ = 0;  // its characters
  size_t word_marks_ = 0;   // of which Arabic vowel signs and Hebrew points (is_word_mark)
  uint32_t word_hash_ = kFnvOffset;
  bool word_lookup_ = true;
  bool word_capitalized_ = false;
  bool word_at_sentence_start_ = false;
  Tag previous_ = Tag::kNone;
  Tag previous2_ = Tag::kNone;

  // The run of Thai letters in progress (end 0: none), byte offsets.
  size_t thai_run_begin_ = 0;
  size_t thai_run_end_ = 0;

  // The word before, when it may be the first word of a two-word entry (end 0: none).
  size_t pair_first_start_ = 0;
  size_t pair_first_end_ = 0;
  uint32_t pair_first_hash_ = kFnvOffset;

  bool in_number_ = false;
  bool sentence_start_ = true;
  bool line_start_ = true;
  bool has_content_ = false;
  bool ends_with_terminator_ = false;
};

}  // namespace

void scan_prompt_text(std::string_view text, PromptFeatures& features) {
  Scanner scanner(text);
  scanner.run();
  scanner.fill(features);
}

}  // namespace tandem::routing
