#include "engine/decode_retry.h"

#include <algorithm>

namespace tandem::engine {
namespace {

// The next call's pieces: the undecoded tokens of the parts still going, in order, up to `cap`.
void fill(std::span<const DecodePart> parts, const std::vector<size_t>& done,
          const std::vector<bool>& dropped, size_t cap, std::vector<DecodePiece>& pieces) {
  pieces.clear();
  size_t room = cap;
  for (size_t p = 0; p < parts.size() && room > 0; ++p) {
    const size_t left = parts[p].count - done[p];
    if (dropped[p] || left == 0) {
      continue;
    }
    const size_t take = std::min(left, room);
    pieces.push_back(DecodePiece{p, done[p], take});
    room -= take;
  }
}

size_t tokens_in(const std::vector<DecodePiece>& pieces) {
  size_t n = 0;
  for (const auto& piece : pieces) {
    n += piece.count;
  }
  return n;
}

}  // namespace

size_t decode_with_retry(std::span<const DecodePart> parts, size_t max_tokens,
                         const DecodeCalls& calls) {
  std::vector<size_t> done(parts.size(), 0);
  std::vector<bool> dropped(parts.size(), false);
  std::vector<DecodePiece> pieces;
  size_t cap = std::max<size_t>(max_tokens, 1);
  size_t failures = 0;
  while (true) {
    fill(parts, done, dropped, cap, pieces);
    if (pieces.empty()) {
      return failures;
    }
    const int code = calls.decode(pieces);
    if (code == 0) {
      for (const auto& piece : pieces) {
        done[piece.part] += piece.count;
      }
      calls.decoded(pieces);
      continue;
    }
    ++failures;
    const size_t tried = tokens_in(pieces);
    if (tried > 1) {
      cap = tried / 2;  // the same tokens again, in calls half the size
      continue;
    }
    // One token of one request failed alone: that request is the cause.
    const size_t owner = parts[pieces.front().part].owner;
    for (size_t p = 0; p < parts.size(); ++p) {
      if (parts[p].owner == owner) {
        dropped[p] = true;
      }
    }
    calls.failed(owner, code);
    cap = std::max<size_t>(max_tokens, 1);  // the cause is gone: the others go on at full size
  }
}

}  // namespace tandem::engine
