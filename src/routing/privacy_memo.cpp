#include "routing/privacy_memo.h"

#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <unordered_set>

namespace tandem::routing::privacy_detail {
namespace {

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

struct Memo {
  uint64_t rules_id = 0;  // 0: unused (ids start at 1)
  uint64_t last_used = 0;
  std::unordered_set<std::string, TextHash, std::equal_to<>> clean;
};

// A request meets several scanners (the router's, the egress guard's with every detector on):
// one memo each, the least recently used given to a new set of rules.
struct ThreadMemos {
  std::array<Memo, kMemoScanners> memos;
  uint64_t clock = 0;

  Memo* find(uint64_t rules_id) {
    for (Memo& memo : memos) {
      if (memo.rules_id == rules_id) {
        memo.last_used = ++clock;
        return &memo;
      }
    }
    return nullptr;
  }

  Memo& take(uint64_t rules_id) {
    if (Memo* memo = find(rules_id)) {
      return *memo;
    }
    Memo& oldest = *std::min_element(memos.begin(), memos.end(), [](const Memo& a, const Memo& b) {
      return a.last_used < b.last_used;
    });
    oldest.clean.clear();
    oldest.rules_id = rules_id;
    oldest.last_used = ++clock;
    return oldest;
  }
};

ThreadMemos& thread_memos() {
  thread_local ThreadMemos memos;
  return memos;
}

}  // namespace

bool known_clean(uint64_t rules_id, std::string_view text) {
  if (text.size() > kMaxMemoBytes) {
    return false;
  }
  const Memo* memo = thread_memos().find(rules_id);
  return memo != nullptr && memo->clean.contains(text);
}

void remember_clean(uint64_t rules_id, std::string_view text) {
  if (text.size() > kMaxMemoBytes) {
    return;
  }
  Memo& memo = thread_memos().take(rules_id);
  if (memo.clean.size() >= kMaxMemoEntries) {
    memo.clean.clear();
  }
  memo.clean.emplace(text);
}

size_t memo_size() {
  size_t entries = 0;
  for (const Memo& memo : thread_memos().memos) {
    entries += memo.clean.size();
  }
  return entries;
}

}  // namespace tandem::routing::privacy_detail
