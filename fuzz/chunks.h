#pragma once
// Where a byte stream is cut into reads. The cuts derive from the bytes themselves (a hash
// driving splitmix64), so seeds stay plain files that a person can read and edit, while each
// mutation of an input is also fed across different read boundaries.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/hash.h"

namespace tandem::fuzz {

// Consecutive pieces of `bytes`, each 1 to `max_piece` bytes long (the last may be shorter).
inline std::vector<std::string_view> derived_pieces(std::string_view bytes, size_t max_piece) {
  std::vector<std::string_view> pieces;
  uint64_t state = fnv1a64(bytes);
  while (!bytes.empty()) {
    state = mix64(state + 0x9e3779b97f4a7c15ULL);
    const size_t length = std::min<size_t>(bytes.size(), 1 + state % max_piece);
    pieces.push_back(bytes.substr(0, length));
    bytes.remove_prefix(length);
  }
  return pieces;
}

}  // namespace tandem::fuzz
