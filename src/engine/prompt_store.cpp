#include "engine/prompt_store.h"

#include <algorithm>

namespace tandem::engine {

size_t common_prefix_length(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const auto [end_a, end_b] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<size_t>(end_a - a.begin());
}

bool PromptStore::put(Entry entry) {
  if (entry.tokens.empty() || entry.bytes() > limit_) {
    return false;
  }
  for (auto it = entries_.begin(); it != entries_.end();) {
    const size_t shared = common_prefix_length(it->tokens, entry.tokens);
    if (shared == entry.tokens.size()) {
      return false;  // already held, with as much context or more
    }
    if (shared == it->tokens.size()) {
      auto superseded = it++;
      erase(superseded);
    } else {
      ++it;
    }
  }
  while (bytes_ + entry.bytes() > limit_ && !entries_.empty()) {
    erase(std::prev(entries_.end()));
  }
  bytes_ += entry.bytes();
  entries_.push_front(std::move(entry));
  return true;
}

PromptStore::Entries::iterator PromptStore::best(const std::vector<int32_t>& prompt,
                                                 size_t* shared) {
  auto found = entries_.end();
  *shared = 0;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    const size_t n = common_prefix_length(it->tokens, prompt);
    if (n > *shared) {
      *shared = n;
      found = it;
    }
  }
  return found;
}

size_t PromptStore::longest_shared(const std::vector<int32_t>& prompt) const {
  size_t longest = 0;
  for (const auto& entry : entries_) {
    longest = std::max(longest, common_prefix_length(entry.tokens, prompt));
  }
  return longest;
}

std::optional<PromptStore::Entry> PromptStore::take(const std::vector<int32_t>& prompt,
                                                    size_t min_shared) {
  size_t shared = 0;
  const auto it = best(prompt, &shared);
  if (it == entries_.end() || shared < min_shared) {
    return std::nullopt;
  }
  Entry entry = std::move(*it);
  erase(it);
  return entry;
}

void PromptStore::erase(Entries::iterator it) {
  bytes_ -= it->bytes();
  entries_.erase(it);
}

}  // namespace tandem::engine
