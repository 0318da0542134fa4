#include "routing/query_cluster.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <string>

namespace tandem::routing {
namespace {

// Words that say nothing about what a query is about.
constexpr std::array<std::string_view, 40> kStopWords = {
    "a",      "an",   "the",  "and",   "or",  "of", "to",   "in",   "on",   "for",
    "with",   "is",   "are",  "was",   "be",  "it", "this", "that", "what", "how",
    "why",    "who",  "when", "can",   "you", "me", "my",   "i",    "do",   "does",
    "please", "tell", "give", "about", "by",  "at", "from", "as",   "your", "we"};

bool is_stop_word(std::string_view word) {
  return std::find(kStopWords.begin(), kStopWords.end(), word) != kStopWords.end();
}

uint64_t fnv1a(std::string_view text) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) {
    hash = (hash ^ c) * 1099511628211ULL;
  }
  return hash;
}

// splitmix64: a cheap, well-mixed family of hash functions indexed by `seed`.
uint64_t mix(uint64_t value, uint64_t seed) {
  uint64_t z = value + seed * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Content words: lower-cased ASCII alphanumeric runs (no stop words, no single letters), and
// each multi-byte UTF-8 character as its own word (CJK text has no spaces; characters carry
// meaning).
std::vector<uint64_t> word_hashes(std::string_view text) {
  std::vector<uint64_t> hashes;
  std::string word;
  auto flush = [&] {
    if (word.size() > 1 && !is_stop_word(word)) {
      hashes.push_back(fnv1a(word));
    }
    word.clear();
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (std::isalnum(c) != 0) {
        word.push_back(static_cast<char>(std::tolower(c)));
      } else {
        flush();
      }
      ++i;
      continue;
    }
    flush();
    size_t length = 1;
    while (i + length < text.size() &&
           (static_cast<unsigned char>(text[i + length]) & 0xC0) == 0x80) {
      ++length;
    }
    hashes.push_back(fnv1a(text.substr(i, length)));
    i += length;
  }
  flush();
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  return hashes;
}

}  // namespace

std::vector<uint64_t> query_cluster_keys(std::string_view text) {
  const std::vector<uint64_t> words = word_hashes(text);
  if (words.empty()) {
    return {};
  }
  std::vector<uint64_t> keys;
  keys.reserve(kClusterBands);
  for (size_t band = 0; band < kClusterBands; ++band) {
    uint64_t key = mix(band, 0xC0FFEE);
    for (size_t row = 0; row < kClusterRows; ++row) {
      const uint64_t seed = band * kClusterRows + row + 1;
      uint64_t minimum = std::numeric_limits<uint64_t>::max();
      for (uint64_t word : words) {
        minimum = std::min(minimum, mix(word, seed));
      }
      key = mix(key ^ minimum, seed);
    }
    keys.push_back(key);
  }
  return keys;
}

}  // namespace tandem::routing
