#pragma once
// Small, stable, non-cryptographic hashes for splitting and sampling (row ids into folds,
// request ids into shadow samples). Stable across runs and machines: results that depend on
// them are reproducible. Never for anything an attacker could exploit.

#include <cstdint>
#include <string_view>

namespace tandem {

inline uint64_t fnv1a64(std::string_view text) {
  uint64_t hash = 14695981039346656037ULL;
  for (char c : text) {
    hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
  }
  return hash;
}

// splitmix64's finaliser: every input bit moves every output bit, so low bits are usable.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace tandem
