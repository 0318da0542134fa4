#include "routing/task_ngrams.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/utf8.h"
#include "routing/request_spans.h"

namespace tandem::routing {
namespace {

// What a code point is to the tokenizer.
enum class CharKind : uint8_t {
  kSpace,        // ends a word, keeps the bigram chain
  kWordChar,     // ASCII letters and digits, and letters of other alphabets (é, ж, ع)
  kIdeograph,    // Chinese, Japanese and Korean characters: each one a token
  kPunctuation,  // ends a word and breaks the bigram chain
};

// What each ASCII byte is: letters, digits and the apostrophe continue a word.
constexpr std::array<CharKind, 128> kAsciiKinds = [] {
  std::array<CharKind, 128> kinds{};
  kinds.fill(CharKind::kPunctuation);
  for (char c : std::string_view(" \t\n\r\f\v")) {
    kinds[static_cast<unsigned char>(c)] = CharKind::kSpace;
  }
  for (int c = 0; c < 128; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\'') {
      kinds[c] = CharKind::kWordChar;
    }
  }
  return kinds;
}();

CharKind kind_of(uint32_t cp) {
  if (cp < 0x80) {
    return kAsciiKinds[cp];
  }
  if (cp - 0x4e00 <= 0x9fff - 0x4e00) {
    return CharKind::kIdeograph;  // the common ideographs, most of any Chinese text: one test
  }
  if (cp >= 0xc0 && cp < 0x2000 && cp != 0xd7 && cp != 0xf7) {
    // Latin, Greek, Cyrillic, Arabic, Devanagari...: one test, less the Arabic comma,
    // semicolon, question mark and full stop and the Devanagari dandas.
    return is_arabic_or_devanagari_mark(cp) ? CharKind::kPunctuation : CharKind::kWordChar;
  }
  if ((cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0xac00 && cp <= 0xd7af) ||  // kana, Hangul
      (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0x20000 && cp <= 0x2ffff)) {
    return CharKind::kIdeograph;
  }
  if (cp == 0xa0 || cp == 0x3000 || (cp >= 0x2000 && cp <= 0x200b)) {
    return CharKind::kSpace;
  }
  // Latin-1 symbols (« ° × ÷), general punctuation, arrows, maths and box drawing, CJK
  // punctuation (、。「」), full-width forms (，？！：), emoji and the replacement character.
  if ((cp >= 0x80 && cp <= 0xbf) || cp == 0xd7 || cp == 0xf7 || (cp >= 0x2000 && cp <= 0x2bff) ||
      (cp >= 0x3000 && cp <= 0x303f) || (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xffff) || cp >= 0x1f000) {
    return CharKind::kPunctuation;
  }
  return CharKind::kWordChar;
}

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;
// Seeds that keep a word, a number and a character apart even when their bytes agree.
constexpr uint64_t kWordSeed = 0x77;
constexpr uint64_t kNumberSeed = 0x23;
constexpr uint64_t kIdeographSeed = 0x63;
constexpr uint64_t kBigramSeed = 0x9e3779b97f4a7c15ull;

// splitmix64's finaliser: spreads FNV's low-entropy high bits before the bucket is taken.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Tokens of one window of text, turned into bucket counts as they come.
class Tokenizer {
 public:
  Tokenizer(NgramVector& out, std::vector<uint16_t>& counts) : out_(out), counts_(counts) {}

  size_t distinct() const { return distinct_; }

  // Counts each n-gram `weight` times.
  void run(std::string_view text, uint16_t weight) {
    weight_ = weight;
    previous_ = 0;
    for (size_t i = 0; i < text.size();) {
      const auto lead = static_cast<unsigned char>(text[i]);
      if (lead < 0x80 && kAsciiKinds[lead] == CharKind::kWordChar) {
        i = add_ascii_word(text, i);  // most of English text: one pass, no decoding
        continue;
      }
      uint32_t cp = 0;
      const size_t length = decode_utf8(text, i, cp);
      switch (kind_of(cp)) {
        case CharKind::kWordChar:
          add_word_bytes(text.substr(i, length));
          break;
        case CharKind::kIdeograph:
          end_word();
          add_token(hash_bytes(kIdeographSeed, text.substr(i, length)));
          break;
        case CharKind::kSpace:
          end_word();
          break;
        case CharKind::kPunctuation:
          end_word();
          previous_ = 0;
          break;
      }
      i += length;
    }
    end_word();
  }

 private:
  static uint64_t hash_bytes(uint64_t seed, std::string_view bytes) {
    uint64_t hash = kFnvOffset ^ seed;
    for (const char c : bytes) {
      hash = (hash ^ static_cast<unsigned char>(c)) * kFnvPrime;
    }
    return hash;
  }

  // Adds the run of ASCII word characters at text[begin] to the word in progress; returns where
  // the run ends. The same as add_word_bytes over the run, with the word's state in registers.
  size_t add_ascii_word(std::string_view text, size_t begin) {
    uint64_t hash = word_hash_;
    bool all_digits = all_digits_;
    size_t end = begin;
    for (; end < text.size(); ++end) {
      const auto byte = static_cast<unsigned char>(text[end]);
      if (byte >= 0x80 || kAsciiKinds[byte] != CharKind::kWordChar) {
        break;
      }
      const auto lower =
          static_cast<unsigned char>(byte >= 'A' && byte <= 'Z' ? byte | 0x20 : byte);
      all_digits = all_digits && byte >= '0' && byte <= '9';
      hash = (hash ^ lower) * kFnvPrime;
    }
    word_hash_ = hash;
    all_digits_ = all_digits;
    word_length_ += end - begin;
    return end;
  }

  void add_word_bytes(std::string_view bytes) {
    for (const char c : bytes) {
      const auto byte = static_cast<unsigned char>(c);
      const bool upper = byte >= 'A' && byte <= 'Z';
      const unsigned char lower = upper ? static_cast<unsigned char>(byte + ('a' - 'A')) : byte;
      all_digits_ = all_digits_ && lower >= '0' && lower <= '9';
      word_hash_ = (word_hash_ ^ lower) * kFnvPrime;
      ++word_length_;
    }
  }

  void end_word() {
    if (word_length_ == 0) {
      return;
    }
    // Every number is one token: "3 apples" and "12 apples" are the same task.
    add_token(all_digits_ ? kNumberSeed : word_hash_);
    word_hash_ = kFnvOffset ^ kWordSeed;
    word_length_ = 0;
    all_digits_ = true;
  }

  void add_token(uint64_t token) {
    count(mix(token));
    if (previous_ != 0) {
      count(mix(previous_ * kFnvPrime + token + kBigramSeed));
    }
    previous_ = token;
  }

  // Without a branch on whether the bucket is new: in Chinese text that is close to a coin
  // toss, and a mispredicted branch costs more than the store (out_.buckets has room for every
  // n-gram, see hashed_ngrams).
  void count(uint64_t hash) {
    const auto bucket = static_cast<uint32_t>((hash >> 32) & (kNgramBuckets - 1));
    const uint16_t before = counts_[bucket];
    counts_[bucket] = static_cast<uint16_t>(before + weight_);
    out_.buckets[distinct_] = bucket;
    distinct_ += before == 0 ? 1 : 0;
  }

  NgramVector& out_;
  std::vector<uint16_t>& counts_;
  size_t distinct_ = 0;
  uint16_t weight_ = 1;
  uint64_t previous_ = 0;
  uint64_t word_hash_ = kFnvOffset ^ kWordSeed;
  size_t word_length_ = 0;
  bool all_digits_ = true;
};

// One window: its request (request_spans.h) counted `request_weight` times, its material once.
void run_window(Tokenizer& tokenizer, const RequestWindow& window, uint16_t request_weight) {
  if (request_weight == 1) {
    tokenizer.run(window.text, 1);  // nothing to tell apart: one run, bigrams across the spans
    return;
  }
  size_t at = 0;
  for (size_t i = 0; i < window.spans.count; ++i) {
    const TextSpan span = window.spans.spans[i];
    if (span.begin > at) {
      tokenizer.run(window.text.substr(at, span.begin - at), 1);
    }
    tokenizer.run(window.text.substr(span.begin, span.end - span.begin), request_weight);
    at = span.end;
  }
  if (at < window.text.size()) {
    tokenizer.run(window.text.substr(at), 1);
  }
}

// log(1 + count) for the counts a 2 KiB window can reach, so the per-bucket cost is a load,
// not a libm call (most counts are 1 or 2).
class LogCounts {
 public:
  static constexpr size_t kSize = 4 * kNgramWindowBytes + 1;
  LogCounts() {
    for (size_t i = 0; i < kSize; ++i) {
      table_[i] = static_cast<float>(std::log1p(static_cast<double>(i)));
    }
  }
  float operator()(uint16_t count) const {
    return count < kSize ? table_[count] : static_cast<float>(std::log1p(count));
  }

 private:
  std::array<float, kSize> table_{};
};

}  // namespace

// Every byte read adds at most one n-gram (a token needs a byte and a separator, or three bytes
// of an ideograph, and brings one bigram), so even at the highest weight no count overflows.
static_assert(size_t{kMaxRequestWeight} * (2 * kNgramWindowBytes + 16) < 65536);

void hashed_ngrams(std::string_view text, uint16_t request_weight, NgramVector& out) {
  hashed_ngrams(find_prompt_request(text), request_weight, out);
}

void hashed_ngrams(const PromptRequest& request, uint16_t request_weight, NgramVector& out) {
  request_weight = std::clamp<uint16_t>(request_weight, 1, kMaxRequestWeight);
  out.buckets.clear();
  out.values.clear();
  // Counts per bucket, zero between calls: only the buckets touched are reset below.
  thread_local std::vector<uint16_t> counts(kNgramBuckets, 0);
  // Each byte read ends at most one token and one bigram: room for every n-gram, so count()
  // stores without checking (resize keeps the capacity, so a warm buffer is not reallocated).
  size_t read = 8;
  for (size_t w = 0; w < request.count; ++w) {
    read += request.windows[w].text.size();
  }
  out.buckets.resize(2 * read + 2);
  Tokenizer tokenizer(out, counts);
  for (size_t w = 0; w < request.count; ++w) {
    run_window(tokenizer, request.windows[w], request_weight);
  }
  out.buckets.resize(tokenizer.distinct());
  static const LogCounts log_counts;
  double norm = 0;
  out.values.reserve(out.buckets.size());
  for (const uint32_t bucket : out.buckets) {
    const float value = log_counts(counts[bucket]);
    counts[bucket] = 0;
    out.values.push_back(value);
    norm += static_cast<double>(value) * value;
  }
  if (norm > 0) {
    const auto scale = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& value : out.values) {
      value *= scale;
    }
  }
}

}  // namespace tandem::routing
