#pragma once
// Prompt prefixes evicted from the slots' KV caches, kept in host memory with their KV state
// so that a conversation that comes back restores its context instead of prefilling it again
// (edge.prompt_cache_mib). Bounded in bytes; the least recently used entry goes first.
// Used by the engine's inference thread only: not thread-safe.

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <vector>

namespace tandem::engine {

class PromptStore {
 public:
  struct Entry {
    std::vector<int32_t> tokens;  // the prefix whose KV `state` holds
    std::vector<uint8_t> state;   // llama_state_seq_get_data's bytes for those tokens
    size_t bytes() const { return state.size() + tokens.size() * sizeof(int32_t); }
  };

  explicit PromptStore(size_t limit_bytes) : limit_(limit_bytes) {}

  // Keeps `entry`, first dropping the entries it makes useless (any whose tokens are a prefix
  // of its own), then the least recently used ones until everything fits. Refused (false)
  // when the entry alone exceeds the limit or an entry already holds its tokens and more.
  bool put(Entry entry);

  // The length of the longest prefix an entry shares with `prompt` (0 when none does).
  size_t longest_shared(const std::vector<int32_t>& prompt) const;

  // Removes and returns the entry sharing the longest prefix with `prompt`, if it shares at
  // least `min_shared` tokens.
  std::optional<Entry> take(const std::vector<int32_t>& prompt, size_t min_shared);

  size_t entries() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }
  size_t limit() const { return limit_; }

 private:
  using Entries = std::list<Entry>;  // most recently stored first
  Entries::iterator best(const std::vector<int32_t>& prompt, size_t* shared);
  void erase(Entries::iterator it);

  size_t limit_;
  size_t bytes_ = 0;
  Entries entries_;
};

// How many leading tokens `a` and `b` have in common.
size_t common_prefix_length(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

}  // namespace tandem::engine
