// Slots and the prompt cache: which free slot a queued request gets (the one whose KV cache
// shares the longest prefix with its prompt), moving prefixes between the slots and the host
// prompt store, and a request's start, finish and release. Inference thread only, except
// admit_locked(), which runs on it under State::mutex.

#include <algorithm>

#include "engine/engine_state.h"

namespace tandem::engine {
namespace {

// A cached prefix shorter than this (unless it is the whole prompt) is not worth evicting
// another slot's cache for: prefilling a few tokens costs about one decode step.
constexpr size_t kMinUsefulPrefix = 8;

}  // namespace

void Engine::State::forget_cache(Slot& slot) {
  llama_memory_seq_rm(llama_get_memory(context.get()), slot.seq, -1, -1);
  slot.cached.clear();
}

void Engine::State::release(Slot& slot) {
  if (!options.prompt_cache) {
    forget_cache(slot);
  }
  slot.last_used = Clock::now();
  slot.active.reset();
  slot.sampler.reset();
  slot.stream.reset();
  slot.logits_index = -1;
  std::lock_guard lock(mutex);
  --active_count;
  ++completed;
}

void Engine::State::finish(Slot& slot, FinishReason reason) {
  const auto now = Clock::now();
  PendingRequest& req = *slot.active;
  CompletionSummary summary;
  summary.finish_reason = reason;
  if (auto tail = slot.stream->finish(); !tail.empty()) {
    // Held-back text (an unfinished stop-string prefix) is released with no token of its own.
    TokenEvent flush;
    flush.token = LLAMA_TOKEN_NULL;
    flush.text = std::move(tail);
    events->enqueue({req.callbacks, std::move(flush)});
  }
  summary.text = slot.stream->released();
  summary.prompt_tokens = static_cast<int>(req.prompt.size());
  summary.cached_prompt_tokens = static_cast<int>(slot.reused);
  summary.completion_tokens = slot.generated;
  if (slot.generated > 0) {
    summary.mean_logprob = slot.logprob_sum / slot.generated;
    summary.min_logprob = slot.logprob_min;
    summary.mean_entropy = slot.entropy_sum / slot.generated;
    summary.time_to_first_token_ms = ms_between(req.submitted, slot.first_token);
    const double decode_ms = ms_between(slot.first_token, now);
    if (slot.generated > 1 && decode_ms > 0.0) {
      summary.decode_tokens_per_second = (slot.generated - 1) / (decode_ms / 1000.0);
    }
  }
  summary.queue_ms = ms_between(req.submitted, slot.admitted);
  summary.prefill_ms = slot.prefill_ms;
  summary.total_ms = ms_between(req.submitted, now);
  events->enqueue({req.callbacks, std::move(summary)});
  release(slot);
}

void Engine::State::fail(Slot& slot, const Error& error) {
  events->enqueue({slot.active->callbacks, error});
  release(slot);
}

// Moves queued requests into free slots (the slots are prepared by start(), outside the
// lock); drops the ones cancelled while they waited.
std::vector<Slot*> Engine::State::admit_locked() {
  for (auto it = queue.begin(); it != queue.end();) {
    if (it->handle->cancelled()) {
      events->enqueue({it->callbacks,
                       make_error(ErrorCode::kCancelled, "request cancelled before it started")});
      it = queue.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<Slot*> admitted;
  while (!queue.empty()) {
    Slot* slot = pick_slot(queue.front().prompt);
    if (slot == nullptr) {
      break;
    }
    slot->active = std::move(queue.front());
    queue.pop_front();
    ++active_count;
    admitted.push_back(slot);
  }
  return admitted;
}

// The free slot whose cached tokens share the longest prefix with `prompt`. Without a useful
// match (a BOS token or a few words in common), the slot idle longest: a fresh prompt evicts
// the least recently used cache, never a valuable one while an older or empty slot is free.
Slot* Engine::State::pick_slot(const std::vector<llama_token>& prompt) {
  Slot* longest = nullptr;
  Slot* oldest = nullptr;
  size_t longest_shared = 0;
  for (auto& slot : slots) {
    if (!slot.free()) {
      continue;
    }
    const size_t shared = options.prompt_cache ? common_prefix_length(slot.cached, prompt) : 0;
    if (longest == nullptr || shared > longest_shared) {
      longest = &slot;
      longest_shared = shared;
    }
    if (oldest == nullptr || slot.last_used < oldest->last_used) {
      oldest = &slot;
    }
  }
  const bool useful = longest_shared >= std::min(kMinUsefulPrefix, prompt.size());
  return useful ? longest : oldest;
}

// Copies the slot's KV cache into the store, so a conversation pushed out of its slot can
// come back without a prefill. Only caches worth a prefill are kept.
void Engine::State::save_to_store(Slot& slot) {
  if (!store || slot.cached.size() < kMinUsefulPrefix) {
    return;
  }
  llama_context* ctx = context.get();
  const size_t size = llama_state_seq_get_size(ctx, slot.seq);
  if (size == 0 || size + slot.cached.size() * sizeof(llama_token) > store->limit()) {
    return;
  }
  PromptStore::Entry entry;
  entry.state.resize(size);
  if (llama_state_seq_get_data(ctx, entry.state.data(), size, slot.seq) != size) {
    return;
  }
  entry.tokens = slot.cached;
  store->put(std::move(entry));
}

// Gives the slot the stored prefix sharing the most with its prompt, when that beats what the
// slot holds by enough to be worth a copy; the slot's own cache goes to the store first.
// Returns the tokens restored (0 when none).
size_t Engine::State::restore_from_store(Slot& slot) {
  const auto& prompt = slot.active->prompt;
  const size_t in_slot = common_prefix_length(slot.cached, prompt);
  if (!store || store->longest_shared(prompt) < in_slot + kMinUsefulPrefix) {
    if (in_slot * 2 < slot.cached.size()) {
      save_to_store(slot);  // most of the slot's cache is about to be overwritten
    }
    return 0;
  }
  auto entry = store->take(prompt, in_slot + kMinUsefulPrefix);
  if (!entry) {
    return 0;
  }
  if (common_prefix_length(slot.cached, entry->tokens) < slot.cached.size()) {
    save_to_store(slot);
  }
  llama_context* ctx = context.get();
  if (llama_state_seq_set_data(ctx, entry->state.data(), entry->state.size(), slot.seq) == 0) {
    forget_cache(slot);  // what llama.cpp left in the sequence is unknown
    return 0;
  }
  slot.cached = std::move(entry->tokens);
  return common_prefix_length(slot.cached, prompt);
}

// Prepares the slot admit_locked() gave a request: its cache (restored from the store, or
// kept where it shares a prefix with the prompt) and a fresh sampler and counters.
void Engine::State::start(Slot& slot) {
  const size_t restored = options.prompt_cache ? restore_from_store(slot) : 0;
  const auto& prompt = slot.active->prompt;
  // The last prompt token is always decoded again: sampling needs its logits.
  size_t reuse = std::min(common_prefix_length(slot.cached, prompt), prompt.size() - 1);
  if (!llama_memory_seq_rm(llama_get_memory(context.get()), slot.seq, static_cast<llama_pos>(reuse),
                           -1)) {
    forget_cache(slot);  // a model whose memory cannot drop a suffix (recurrent) starts over
    reuse = 0;
  }
  slot.cached.resize(reuse);
  {
    std::lock_guard lock(mutex);
    prompt_tokens_cached += reuse;
    prompt_tokens_prefilled += prompt.size() - reuse;
    prompt_tokens_restored += std::min(restored, reuse);
    prompt_store_entries = store ? store->entries() : 0;
    prompt_store_bytes = store ? store->bytes() : 0;
  }

  slot.sampler = make_sampler(slot.active->request.sampling, vocab_size, ban_end_of_generation);
  slot.stream.emplace(slot.active->request.sampling.stop);
  slot.reused = reuse;
  slot.prompt_done = reuse;
  slot.position = static_cast<llama_pos>(reuse);
  slot.next_input = LLAMA_TOKEN_NULL;
  slot.logits_index = -1;
  slot.generated = 0;
  slot.logprob_sum = 0.0;
  slot.logprob_min = 0.0;
  slot.entropy_sum = 0.0;
  slot.prefill_ms = 0.0;
  slot.admitted = Clock::now();
}

}  // namespace tandem::engine
