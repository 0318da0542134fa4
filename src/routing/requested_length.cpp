#include "routing/requested_length.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "common/utf8.h"
#include "routing/request_spans.h"
#include "routing/text_numbers.h"

namespace tandem::routing {
namespace {

using text_numbers::could_be_number_word;
using text_numbers::digit_number;
using text_numbers::english_number;
using text_numbers::kLargestNumber;
using text_numbers::Number;
using text_numbers::starts_zh_number;
using text_numbers::zh_number;

// An answer this long a small model writes well; only what is asked beyond it counts, in
// thousands of words.
constexpr double kShortAnswerWords = 200;
constexpr double kWordsPerStep = 1000;
// A cap ("under 500 words") asks for at most that much: half of it, on average.
constexpr double kCapShare = 0.5;

enum class UnitKind : uint8_t { kText, kTime };

struct Unit {
  std::string_view text;
  double words;  // English-word equivalents of one unit
  UnitKind kind = UnitKind::kText;
};

// Units after a number in Latin or Cyrillic script, matched as whole words, ASCII letters in
// any case. French "pages" is English's.
constexpr Unit kWordUnits[] = {
    {"words", 1},
    {"word", 1},
    {"pages", 400},
    {"page", 400},
    {"paragraphs", 100},
    {"paragraph", 100},
    {"paras", 100},
    {"chapters", 3000},
    {"chapter", 3000},
    {"stanzas", 30},
    {"stanza", 30},
    {"verses", 30},
    {"lines", 8},
    {"line", 8},
    {"sentences", 15},
    {"sentence", 15},
    {"characters", 0.2},
    {"chars", 0.2},
    {"slides", 40},
    {"scenes", 500},
    {"tokens", 0.75},
    {"minutes", 130, UnitKind::kTime},
    {"minute", 130, UnitKind::kTime},
    {"min", 130, UnitKind::kTime},
    {"palabras", 1},
    {"palavras", 1},
    {"parole", 1},
    {"mots", 1},
    {"wörter", 1},
    {"worte", 1},
    {"wörtern", 1},
    {"páginas", 400},
    {"pagine", 400},
    {"seiten", 400},
    {"párrafos", 100},
    {"parágrafos", 100},
    {"paragrafi", 100},
    {"paragraphes", 100},
    {"capítulos", 3000},
    {"capitoli", 3000},
    {"chapitres", 3000},
    {"kapitel", 3000},
    {"minutos", 130, UnitKind::kTime},
    {"minuti", 130, UnitKind::kTime},
    {"minuten", 130, UnitKind::kTime},
    {"слов", 1},
    {"слова", 1},
    {"страниц", 400},
    {"страницы", 400},
    {"глав", 3000},
    {"минут", 130, UnitKind::kTime},
};

// The ASCII letters that begin a word unit, one bit each.
constexpr uint32_t kWordUnitInitials = [] {
  uint32_t bits = 0;
  for (const Unit& unit : kWordUnits) {
    const auto first = static_cast<unsigned char>(unit.text[0]);
    if (first >= 'a' && first <= 'z') {
      bits |= 1u << (first - 'a');
    }
  }
  return bits;
}();

// Units in Chinese, Japanese and Korean, matched as written (no word boundaries there). 字 is a
// character of Chinese text: about 0.7 English words.
constexpr Unit kCjkUnits[] = {
    {"字", 0.7},
    {"文字", 0.7},
    {"页", 500},
    {"頁", 500},
    {"ページ", 400},
    {"章", 3000},
    {"段落", 100},
    {"段", 100},
    {"句", 15},
    {"行", 8},
    {"자", 0.5},
    {"단어", 1},
    {"페이지", 400},
    {"分钟", 130, UnitKind::kTime},
    {"分鐘", 130, UnitKind::kTime},
    {"分間", 130, UnitKind::kTime},
    {"분", 130, UnitKind::kTime},
};

// The words just before a number that make it the size of material the prompt already has
// ("my 3,000-word essay", "I wrote 5000 words").
constexpr std::string_view kMaterialWords[] = {
    "this",  "that",     "these",    "those",    "the",    "my",       "our",
    "your",  "his",      "her",      "their",    "its",    "attached", "following",
    "above", "existing", "previous", "original", "wrote",  "written",  "have",
    "has",   "had",      "got",      "read",     "pasted",
};

// Minutes measure text only when what follows is spoken or read aloud ("a 5-minute toast",
// "5分钟的演讲稿"); "a 45-minute lesson", "40分钟的公开课" and "a 30-minute meeting" are times.
constexpr std::string_view kSpokenWords[] = {
    "speech", "toast",   "talk",    "script",   "eulogy",   "presentation", "monologue", "podcast",
    "sermon", "lecture", "keynote", "pitch",    "video",    "vlog",         "skit",      "play",
    "story",  "reading", "audio",   "discurso", "discours", "rede",         "речь",      "演讲",
    "讲话",   "发言",    "致辞",    "脚本",     "稿",       "剧本",         "小品",      "相声",
    "播客",   "视频",    "故事",    "スピーチ", "原稿",     "연설",         "발표",      "대본"};

// The words just before a number of minutes that make it a time, not a speech's length.
constexpr std::string_view kTimeWords[] = {"in",  "within", "after", "every", "for",  "each",
                                           "per", "last",   "takes", "took",  "spent"};

// The words just before a number that make it a cap.
constexpr std::string_view kCapWords[] = {"under", "below", "max", "maximum", "within", "upto"};

// Chinese characters just before a number that make it the size of material ("这篇", "我的",
// "写了").
constexpr std::string_view kZhMaterialMarks[] = {"这",   "那",   "该",   "此",  "本", "我",
                                                 "你",   "您",   "了",   "已",  "原", "我的",
                                                 "你的", "您的", "他的", "她的"};
constexpr std::string_view kZhClassifiers[] = {"篇", "份", "个", "本", "部", "首", "段"};
constexpr std::string_view kZhCapAfter[] = {"以内", "之内", "以下", "内"};

// Verbs that ask for text to be written (present or imperative: "wrote" and "written" name
// text that exists).
constexpr std::string_view kRequestVerbs[] = {
    "write",   "draft",   "compose", "create",   "generate", "produce", "prepare",
    "make",    "give",    "need",    "want",     "expand",   "extend",  "continue",
    "develop", "craft",   "pen",     "script",   "turn",     "rewrite", "build",
    "provide", "deliver", "put",     "do",       "outline",  "plan",    "escribe",
    "redacta", "écris",   "rédige",  "schreibe", "escreva",  "scrivi",  "напиши",
};
constexpr std::string_view kCjkRequestVerbs[] = {
    "写",   "创作", "生成",   "撰写", "起草", "编写",   "编一", "扩写", "扩展",
    "扩充", "续写", "需要",   "我要", "想要", "要一",   "做",   "准备", "来一",
    "出一", "给我", "書いて", "書く", "作成", "作って", "써",   "작성"};
constexpr std::string_view kCjkPastMarks[] = {"了", "过", "過", "完", "好的"};

// Sentence marks besides ASCII punctuation. Not the Chinese comma: "写一篇游记，3000字以内"
// is one request.
constexpr std::string_view kClauseMarks[] = {"。", "！", "？", "；"};

// A letter of any script: a word goes on through it.
bool is_letter_byte(unsigned char c) {
  return is_ascii_letter(c) || c >= 0x80;
}

// `text` at `at` starts with `word` (ASCII letters in any case).
bool starts_with_folded(std::string_view text, size_t at, std::string_view word) {
  if (at + word.size() > text.size()) {
    return false;
  }
  for (size_t k = 0; k < word.size(); ++k) {
    if (lower_ascii(text[at + k]) != word[k]) {
      return false;
    }
  }
  return true;
}

bool starts_with(std::string_view text, size_t at, std::string_view what) {
  return text.substr(at, what.size()) == what;
}

bool ends_with_at(std::string_view text, size_t end, std::string_view what) {
  return end >= what.size() && text.substr(end - what.size(), what.size()) == what;
}

template <size_t N>
bool any_ends_at(std::string_view text, size_t end, const std::string_view (&list)[N]) {
  return std::ranges::any_of(list, [&](std::string_view w) { return ends_with_at(text, end, w); });
}

// The unit at `at` (after the number and a space or hyphen), or nullptr.
const Unit* unit_at(std::string_view text, size_t at) {
  if (at >= text.size()) {
    return nullptr;
  }
  // Most numbers in prompts are followed by something else ("3.", "20%", "2024)"): one test
  // sends them away before the tables.
  const auto first = static_cast<unsigned char>(text[at]);
  if (first < 0x80 && !is_ascii_letter(first)) {
    return nullptr;
  }
  if (first >= 0x80) {
    // The first two bytes first: "150か所", "30分钟", "165円" mostly part at the second.
    const char second = at + 1 < text.size() ? text[at + 1] : '\0';
    for (const Unit& unit : kCjkUnits) {
      if (unit.text[0] == text[at] && unit.text[1] == second && starts_with(text, at, unit.text)) {
        return &unit;
      }
    }
    if (first != 0xd0 && first != 0xd1) {
      return nullptr;  // of the word units, only the Cyrillic ones begin with a non-ASCII byte
    }
  }
  const char folded = lower_ascii(static_cast<char>(first));
  if (folded >= 'a' && folded <= 'z' && ((kWordUnitInitials >> (folded - 'a')) & 1u) == 0) {
    return nullptr;  // "15 Russian dolls", "3 kilograms": no unit begins with that letter
  }
  for (const Unit& unit : kWordUnits) {
    const size_t after = at + unit.text.size();
    if (unit.text[0] == folded && starts_with_folded(text, at, unit.text) &&
        (after >= text.size() || !is_letter_byte(static_cast<unsigned char>(text[after])))) {
      return &unit;
    }
  }
  return nullptr;
}

// Whether a spoken piece is named just after a unit of minutes that ends at `at`: past blanks,
// hyphens, "long" and "的" ("a 5-minute wedding toast" reads one adjective word too).
bool spoken_piece_after(std::string_view text, size_t at) {
  for (int words = 0; words < 3 && at < text.size(); ++words) {
    while (at < text.size() && (text[at] == ' ' || text[at] == '-')) {
      ++at;
    }
    if (starts_with(text, at, "的")) {
      at += 3;
    }
    for (std::string_view spoken : kSpokenWords) {
      if (starts_with_folded(text, at, spoken)) {
        return true;
      }
    }
    while (at < text.size() && is_ascii_letter(static_cast<unsigned char>(text[at]))) {
      ++at;  // one word between ("wedding", "long") and look again
    }
  }
  return false;
}

// The ASCII word that ends just before `end` (skipping blanks), lower-cased; `start` is set to
// where it begins. Empty when there is none.
std::string_view word_before(std::string_view text, size_t end, size_t& start,
                             std::array<char, 16>& buffer) {
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '~' || text[end - 1] == '(')) {
    --end;
  }
  size_t begin = end;
  while (begin > 0 && begin + buffer.size() > end &&
         is_ascii_letter(static_cast<unsigned char>(text[begin - 1]))) {
    --begin;
  }
  start = begin;
  if (begin == end || (begin > 0 && static_cast<unsigned char>(text[begin - 1]) >= 0x80)) {
    return {};
  }
  for (size_t k = begin; k < end; ++k) {
    buffer[k - begin] = lower_ascii(text[k]);
  }
  return {buffer.data(), end - begin};
}

template <size_t N>
bool listed(std::string_view word, const std::string_view (&list)[N]) {
  return std::ranges::find(list, word) != std::end(list);
}

// kTarget: "in 2,000 words", "用八千字": a size the answer is to have, whatever the verb.
enum class Reading : uint8_t { kRequest, kTarget, kCap, kNotRequested };

// How the English (or other Latin-script) words before the number at `begin` read it.
Reading read_words_before(std::string_view text, size_t begin, UnitKind kind) {
  std::array<char, 16> first_buffer{};
  std::array<char, 16> second_buffer{};
  std::array<char, 16> third_buffer{};
  size_t start = 0;
  std::string_view first = word_before(text, begin, start, first_buffer);
  if (first == "a" || first == "an" || first == "about" || first == "around") {
    first = word_before(text, start, start, first_buffer);  // "my own 3,000-word", "a ~500"
  }
  if (listed(first, kMaterialWords) || (kind == UnitKind::kTime && listed(first, kTimeWords))) {
    return Reading::kNotRequested;
  }
  if (first == "to" || first == "than" || first == "most") {
    const std::string_view second = word_before(text, start, start, second_buffer);
    const std::string_view third = word_before(text, start, start, third_buffer);
    const bool no = third == "no" || third == "not";
    if ((first == "to" && second == "up") || (first == "most" && second == "at") ||
        (first == "than" && (second == "less" || second == "fewer" || second == "shorter" ||
                             ((second == "more" || second == "longer") && no)))) {
      return Reading::kCap;
    }
    return Reading::kRequest;
  }
  if (first == "in" || first == "using") {
    return Reading::kTarget;
  }
  return listed(first, kCapWords) ? Reading::kCap : Reading::kRequest;
}

// How the Chinese characters before the number at `begin` read it.
Reading read_zh_before(std::string_view text, size_t begin) {
  if (ends_with_at(text, begin, "第")) {
    return Reading::kNotRequested;  // an ordinal: "第三章" names a chapter, not a length
  }
  size_t end = begin;
  if (any_ends_at(text, end, kZhClassifiers)) {
    end -= 3;  // every classifier listed is one three-byte character
  }
  if (any_ends_at(text, end, kZhMaterialMarks)) {
    return Reading::kNotRequested;
  }
  if (ends_with_at(text, begin, "用")) {
    return Reading::kTarget;
  }
  if (ends_with_at(text, begin, "最多") || ends_with_at(text, begin, "不超过") ||
      ends_with_at(text, begin, "不多于") ||
      (ends_with_at(text, begin, "少于") && !ends_with_at(text, begin, "不少于"))) {
    return Reading::kCap;
  }
  return Reading::kRequest;
}

// The length of what joins the two ends of a range at `at` ("-", "–", "~", " to ", " - ",
// "到", "至"), or 0. Chosen by its first byte: a number is mostly followed by a blank and a
// word that is none of these.
size_t range_dash_length(std::string_view text, size_t at) {
  if (at >= text.size()) {
    return 0;
  }
  switch (text[at]) {
    case '-':
    case '~':
      return 1;
    case ' ':
      for (std::string_view dash : {" to ", " - ", " – "}) {
        if (starts_with(text, at, dash)) {
          return dash.size();
        }
      }
      return 0;
    default:
      for (std::string_view dash : {"–", "到", "至"}) {
        if (starts_with(text, at, dash)) {
          return dash.size();
        }
      }
      return 0;
  }
}

// After a number: a range's upper end ("1500-2000", "1500 to 2000", "3到5"), blanks, a hyphen
// ("3,000-word"), "个" ("800个字"). Returns the unit's position; `value` becomes the range's top.
size_t skip_to_unit(std::string_view text, size_t at, double& value) {
  size_t i = at;
  const auto range_at = [&](size_t k) {
    return k < text.size() && is_ascii_digit(static_cast<unsigned char>(text[k]));
  };
  const size_t dash = range_dash_length(text, i);
  if (dash > 0 && range_at(i + dash)) {
    const Number top = digit_number(text, i + dash);
    value = std::max(value, top.value);
    i = top.end;
  }
  while (i < text.size() && (text[i] == ' ' || text[i] == '-')) {
    ++i;
  }
  for (std::string_view filler : {"个", "個", "多", "余"}) {
    if (starts_with(text, i, filler)) {
      i += filler.size();
    }
  }
  return i;
}

double cap_after(std::string_view text, size_t at) {
  return std::ranges::any_of(kZhCapAfter,
                             [&](std::string_view cap) { return starts_with(text, at, cap); })
             ? kCapShare
             : 1.0;
}

// Whether the bytes at `at` end a clause: a sentence's end or a line break.
size_t clause_mark_length(std::string_view text, size_t at) {
  const char c = text[at];
  if (c == '.' || c == '!' || c == '?' || c == ';' || c == '\n') {
    const bool decimal = c == '.' && at + 1 < text.size() &&
                         is_ascii_digit(static_cast<unsigned char>(text[at + 1]));
    return decimal ? 0 : 1;
  }
  for (std::string_view mark : kClauseMarks) {
    if (starts_with(text, at, mark)) {
      return mark.size();
    }
  }
  return 0;
}

// The clause around [begin, end): from after the mark before it to the mark after it.
std::string_view clause_around(std::string_view text, size_t begin, size_t end) {
  size_t from = begin;
  while (from > 0) {
    const size_t back = from >= 3 && clause_mark_length(text, from - 3) == 3 ? 3 : 1;
    if (clause_mark_length(text, from - back) == back) {
      break;
    }
    from -= back;
  }
  size_t to = end;
  while (to < text.size() && clause_mark_length(text, to) == 0) {
    ++to;
  }
  return text.substr(from, to - from);
}

// Whether an English verb of the list stands in `clause` as a whole word.
bool has_english_verb(std::string_view clause) {
  for (size_t i = 0; i < clause.size();) {
    if (!is_letter_byte(static_cast<unsigned char>(clause[i])) ||
        static_cast<unsigned char>(clause[i]) >= 0x80) {
      ++i;
      continue;
    }
    size_t k = i;
    while (k < clause.size() && is_letter_byte(static_cast<unsigned char>(clause[k])) &&
           static_cast<unsigned char>(clause[k]) < 0x80) {
      ++k;
    }
    const bool whole = k >= clause.size() || static_cast<unsigned char>(clause[k]) < 0x80;
    if (whole && std::ranges::any_of(kRequestVerbs, [&](std::string_view verb) {
          return verb.size() == k - i && starts_with_folded(clause, i, verb);
        })) {
      return true;
    }
    i = k;
  }
  return false;
}

// Whether a Chinese, Japanese or Korean verb of the list stands in `clause`, not followed by a
// mark of the past ("写了", "写过", "写完": the text exists).
bool has_cjk_verb(std::string_view clause) {
  for (std::string_view verb : kCjkRequestVerbs) {
    for (size_t at = clause.find(verb); at != std::string_view::npos;
         at = clause.find(verb, at + verb.size())) {
      const size_t after = at + verb.size();
      const bool past = std::ranges::any_of(
          kCjkPastMarks, [&](std::string_view mark) { return starts_with(clause, after, mark); });
      if (!past) {
        return true;
      }
    }
  }
  return false;
}

// A size counts as asked for when its clause asks for text: "Write a 3,000-word story",
// "I need a 5k-word novelette", "写一篇3000字的", "2000字の小説を書いて". "My boss sent around a
// 12,000-word strategy doc" and "我写了一部三十万字的小说" name the size of what exists.
bool clause_asks_for_text(std::string_view text, size_t begin, size_t end) {
  const std::string_view clause = clause_around(text, begin, end);
  return has_english_verb(clause) || has_cjk_verb(clause);
}

// The words asked for by a number that starts at `begin` and the unit after it, or 0.
double words_at(std::string_view text, size_t begin, Number number) {
  if (number.value <= 0 || number.value > kLargestNumber) {
    return 0;
  }
  double value = number.value;
  const size_t unit_begin = skip_to_unit(text, number.end, value);
  const Unit* unit = unit_at(text, unit_begin);
  if (unit == nullptr) {
    return 0;
  }
  const double named = value * unit->words;
  if (named <= kShortAnswerWords) {
    return named;  // a short answer adds nothing to the feature, whoever asks for it
  }
  const size_t unit_end = unit_begin + unit->text.size();
  if (unit->kind == UnitKind::kTime && !spoken_piece_after(text, unit_end)) {
    return 0;
  }
  const bool cjk_before = begin > 0 && static_cast<unsigned char>(text[begin - 1]) >= 0x80;
  const Reading reading =
      cjk_before ? read_zh_before(text, begin) : read_words_before(text, begin, unit->kind);
  if (reading == Reading::kNotRequested ||
      (reading == Reading::kRequest && !clause_asks_for_text(text, begin, unit_end))) {
    return 0;
  }
  double share = reading == Reading::kCap ? kCapShare : 1.0;
  share = std::min(share, cap_after(text, unit_end));
  return named * share;
}

// Whether an English number word follows `at` (after one blank): "a" is a number only as "a
// hundred", "a thousand", "a few", and is the commonest word of a request.
bool number_word_follows(std::string_view text, size_t at) {
  if (at >= text.size() || text[at] != ' ') {
    return false;
  }
  size_t end = ++at;
  while (end < text.size() && is_ascii_letter(static_cast<unsigned char>(text[end]))) {
    ++end;
  }
  return end > at && could_be_number_word(text, at, end - at);
}

// The most words a number in text[from, end) asks for; the words before `from` are read for
// what comes before the span's first number.
double span_words(std::string_view text, size_t from) {
  double most = 0;
  for (size_t i = from; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    Number number{0, i};
    if (is_ascii_digit(c)) {
      number = digit_number(text, i);
    } else if (c >= 0xe3 && c <= 0xe9 && starts_zh_number(text, i)) {
      number = zh_number(text, i);
    } else if (is_ascii_letter(c)) {
      size_t word_end = i;
      while (word_end < text.size() &&
             is_ascii_letter(static_cast<unsigned char>(text[word_end]))) {
        ++word_end;
      }
      const bool word_start = i == 0 || !is_letter_byte(static_cast<unsigned char>(text[i - 1]));
      if (word_start && could_be_number_word(text, i, word_end - i) &&
          (word_end - i > 1 || number_word_follows(text, word_end))) {
        number = english_number(text, i);
      }
      if (number.end == i) {  // not a number: on past the word at once
        i = word_end;
        continue;
      }
    }
    if (number.end > i) {
      most = std::max(most, words_at(text, i, number));
      i = number.end;
      continue;
    }
    // On past the whole character: a Chinese request is three bytes a character.
    i = c >= 0xc0 ? forward_to_boundary(text, i + 1) : i + 1;
  }
  return most;
}

// The most words the request of `window` asks for (request_spans.h).
double window_words(const RequestWindow& window) {
  double most = 0;
  for (size_t k = 0; k < window.spans.count; ++k) {
    const TextSpan span = window.spans.spans[k];
    // The span's own bytes, with what comes before it for reading the words before a number.
    most = std::max(most, span_words(window.text.substr(0, span.end), span.begin));
  }
  return most;
}

}  // namespace

double requested_answer_words(std::string_view text) {
  return requested_answer_words(find_prompt_request(text));
}

double requested_answer_words(const PromptRequest& request) {
  double most = 0;
  for (size_t w = 0; w < request.count; ++w) {
    most = std::max(most, window_words(request.windows[w]));
  }
  return most;
}

double requested_length_value(std::string_view text) {
  return requested_length_value(find_prompt_request(text));
}

double requested_length_value(const PromptRequest& request) {
  const double words = requested_answer_words(request);
  return std::log1p(std::max(0.0, words - kShortAnswerWords) / kWordsPerStep);
}

}  // namespace tandem::routing
