#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include <llama-cpp.h>
#include <llama.h>

#include "engine/decode_retry.h"
#include "engine/event_dispatcher.h"
#include "engine/llama_backend.h"
#include "engine/prompt_store.h"
#include "engine/text_stream.h"
#include "sampling.h"

namespace tandem::engine {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kDefaultMaxContext = 4096;
// A cached prefix shorter than this (unless it is the whole prompt) is not worth evicting
// another slot's cache for: prefilling a few tokens costs about one decode step.
constexpr size_t kMinUsefulPrefix = 8;
// Streaming latency added at most by batching callback wake-ups (see EventDispatcher).
constexpr auto kCallbackFlushInterval = std::chrono::microseconds(1000);

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

struct CommonSamplerDeleter {
  void operator()(common_sampler* sampler) const { common_sampler_free(sampler); }
};
using CommonSamplerPtr = std::unique_ptr<common_sampler, CommonSamplerDeleter>;

// A request from submit() until it finishes. Owned by the queue, then by its slot.
struct PendingRequest {
  std::shared_ptr<RequestHandle> handle;
  GenerationRequest request;
  std::vector<llama_token> prompt;
  std::shared_ptr<const GenerationCallbacks> callbacks;
  Clock::time_point submitted;
  // Constrained requests sample through llama.cpp's common sampler (grammar, lazy triggers,
  // the template's generation prompt), built at submit() so a bad grammar fails there.
  CommonSamplerPtr constrained;
  std::vector<llama_token> preserved;  // sorted: shown as text, not dropped as control tokens
};

// Owns a llama_batch (RAII) and fills it.
class Batch {
 public:
  explicit Batch(int32_t capacity) : batch_(llama_batch_init(capacity, 0, 1)) {}
  ~Batch() { llama_batch_free(batch_); }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  void clear() { batch_.n_tokens = 0; }
  int32_t size() const { return batch_.n_tokens; }
  // Returns the index of the added token within the batch.
  int32_t add(llama_token token, llama_pos pos, llama_seq_id seq, bool wants_logits) {
    const int32_t i = batch_.n_tokens++;
    batch_.token[i] = token;
    batch_.pos[i] = pos;
    batch_.n_seq_id[i] = 1;
    batch_.seq_id[i][0] = seq;
    batch_.logits[i] = wants_logits ? 1 : 0;
    return i;
  }
  const llama_batch& get() const { return batch_; }

 private:
  llama_batch batch_;
};

// An embeddings request waiting for the inference thread.
struct EmbedJob {
  std::vector<std::vector<int32_t>> inputs;
  int tokens = 0;
  std::function<void(Result<EmbeddingResult>)> done;
};

// One sequence of the shared context, and the request it is serving.
struct Slot {
  llama_seq_id seq = 0;
  std::optional<PendingRequest> active;
  llama_sampler_ptr sampler;
  std::optional<TextStream> stream;
  // Tokens whose KV is in this sequence, at positions 0..size-1. Kept after a request (the
  // prompt cache): the next request here prefills only what follows their common prefix.
  std::vector<llama_token> cached;
  size_t reused = 0;                          // prompt tokens of the active request found cached
  Clock::time_point last_used{};              // when the slot last finished a request
  size_t prompt_done = 0;                     // prompt tokens already in the KV cache
  llama_pos position = 0;                     // next position in this sequence
  llama_token next_input = LLAMA_TOKEN_NULL;  // sampled token not yet decoded
  int32_t logits_index = -1;                  // row of this slot's logits in the last batch, or -1
  int generated = 0;
  double logprob_sum = 0.0;
  double logprob_min = 0.0;
  double entropy_sum = 0.0;
  Clock::time_point admitted;
  double prefill_ms = 0.0;  // time in llama_decode calls that carried this slot's prompt
  Clock::time_point first_token;

  bool free() const { return !active.has_value(); }
  bool prefilling() const { return active && prompt_done < active->prompt.size(); }
};

// The chain follows llama-server's order: bias, penalties, truncation, temperature, draw.
llama_sampler_ptr make_sampler(const SamplingParams& p, int32_t vocab_size,
                               const std::vector<llama_logit_bias>& ban_end_of_generation) {
  llama_sampler_ptr chain(llama_sampler_chain_init(llama_sampler_chain_default_params()));
  if (p.ignore_eos && !ban_end_of_generation.empty()) {
    llama_sampler_chain_add(chain.get(),
                            llama_sampler_init_logit_bias(
                                vocab_size, static_cast<int32_t>(ban_end_of_generation.size()),
                                ban_end_of_generation.data()));
  }
  if (p.repeat_penalty != 1.0F && p.repeat_last_n > 0) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_penalties(vocab_size, p.repeat_last_n,
                                                                      p.repeat_penalty, 0, 0));
  }
  if (p.temperature <= 0.0F) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_greedy());
    return chain;
  }
  if (p.top_k > 0) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_top_k(p.top_k));
  }
  if (p.top_p < 1.0F) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_top_p(p.top_p, 1));
  }
  if (p.min_p > 0.0F) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_min_p(p.min_p, 1));
  }
  llama_sampler_chain_add(chain.get(), llama_sampler_init_temp(p.temperature));
  const uint32_t seed = p.seed.value_or(std::random_device{}());
  llama_sampler_chain_add(chain.get(), llama_sampler_init_dist(seed));
  return chain;
}

std::string token_piece(const llama_vocab* vocab, llama_token token, bool special = false) {
  char small[64];
  int32_t n = llama_token_to_piece(vocab, token, small, sizeof(small), 0, special);
  if (n >= 0) {
    return std::string(small, static_cast<size_t>(n));
  }
  std::string large(static_cast<size_t>(-n), '\0');
  n = llama_token_to_piece(vocab, token, large.data(), static_cast<int32_t>(large.size()), 0,
                           special);
  large.resize(static_cast<size_t>(std::max(n, 0)));
  return large;
}

}  // namespace

struct Engine::State {
  EngineOptions options;
  ModelIdentity identity;
  ChatTemplate chat_template;
  std::unique_ptr<ChatFormatter> chat_formatter;
  llama_model_ptr model;
  llama_context_ptr context;
  const llama_vocab* vocab = nullptr;
  int32_t vocab_size = 0;
  std::vector<llama_logit_bias> ban_end_of_generation;  // -inf on every end-of-generation token
  uint32_t context_per_sequence = 0;
  int threads = 1;  // options.threads resolved (0: one per hardware thread)

  mutable std::mutex mutex;
  std::condition_variable wake;
  std::deque<PendingRequest> queue;      // guarded by mutex
  std::deque<EmbedJob> embed_jobs;       // guarded by mutex
  bool stopping = false;                 // guarded by mutex
  size_t active_count = 0;               // guarded by mutex (for stats)
  uint64_t completed = 0;                // guarded by mutex
  uint64_t prompt_tokens_cached = 0;     // guarded by mutex
  uint64_t prompt_tokens_prefilled = 0;  // guarded by mutex
  uint64_t prompt_tokens_restored = 0;   // guarded by mutex
  size_t prompt_store_entries = 0;       // guarded by mutex (a copy of the store's)
  size_t prompt_store_bytes = 0;         // guarded by mutex (a copy of the store's)
  std::atomic<uint64_t> next_id{1};

  // Inference thread only.
  std::vector<Slot> slots;
  std::unique_ptr<EmbeddingContext> embedder;  // made on the first embeddings request
  std::unique_ptr<PromptStore> store;          // evicted prefixes; null when disabled
  TokenSignalCalculator signal_calculator;

  // Declared last: destroyed first, so callbacks drain before the model goes away.
  std::unique_ptr<EventDispatcher> events;
  std::thread inference_thread;

  void run();
  void run_embeddings(std::deque<EmbedJob> jobs);
  std::vector<Slot*> admit_locked();
  Slot* pick_slot(const std::vector<llama_token>& prompt);
  void start(Slot& slot);
  size_t restore_from_store(Slot& slot);
  void save_to_store(Slot& slot);
  void forget_cache(Slot& slot);
  void finish(Slot& slot, FinishReason reason);
  void fail(Slot& slot, const Error& error);
  void release(Slot& slot);
  void sample(Slot& slot);
  Result<CommonSamplerPtr> constrained_sampler(const GenerationRequest& request) const;
  std::vector<llama_token> preserved_token_ids(const Constraint& constraint) const;
  std::optional<llama_token> single_token(const std::string& text) const;
  Result<int> token_count(const std::string& text, bool add_special, bool parse_special) const;
  Result<std::vector<llama_token>> tokenize(const std::string& text, bool add_special,
                                            bool parse_special) const;
  void step(Batch& batch);
  int decode_pieces(Batch& batch, std::span<const DecodePart> parts, std::span<const size_t> starts,
                    std::span<const DecodePiece> pieces);
  void advance(Batch& batch);
};

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

// Samples the next token of `slot` from the logits of the last batch and reports it.
void Engine::State::sample(Slot& slot) {
  PendingRequest& req = *slot.active;
  llama_token token = LLAMA_TOKEN_NULL;
  if (req.constrained) {
    token = common_sampler_sample(req.constrained.get(), context.get(), slot.logits_index);
    common_sampler_accept(req.constrained.get(), token, true);
  } else {
    token = llama_sampler_sample(slot.sampler.get(), context.get(), slot.logits_index);
  }
  if (slot.generated == 0) {
    slot.first_token = Clock::now();
  }
  if (llama_vocab_is_eog(vocab, token)) {
    finish(slot, FinishReason::kStop);
    return;
  }
  const float* logits = llama_get_logits_ith(context.get(), slot.logits_index);
  TokenEvent event;
  event.token = token;
  event.signals =
      signal_calculator.compute(std::span<const float>(logits, static_cast<size_t>(vocab_size)),
                                token, req.request.sampling.top_logprobs);
  event.piece = token_piece(vocab, token,
                            std::binary_search(req.preserved.begin(), req.preserved.end(), token));
  event.top_pieces.reserve(event.signals.top.size());
  for (const auto& alternative : event.signals.top) {
    event.top_pieces.push_back(token_piece(vocab, alternative.token));
  }
  const auto update = slot.stream->push(event.piece);
  event.text = update.text;

  slot.logprob_sum += event.signals.logprob;
  slot.logprob_min = slot.generated == 0
                         ? event.signals.logprob
                         : std::min<double>(slot.logprob_min, event.signals.logprob);
  slot.entropy_sum += event.signals.entropy;
  ++slot.generated;
  events->enqueue({req.callbacks, std::move(event)});

  if (update.stopped) {
    finish(slot, FinishReason::kStop);
  } else if (slot.generated >= req.request.sampling.max_tokens ||
             static_cast<uint32_t>(slot.position) + 1 >= context_per_sequence) {
    // position tokens are in the KV cache and one more was just sampled: the sequence holds
    // prompt + completion <= context_per_sequence, as a client counting tokens expects.
    finish(slot, FinishReason::kLength);
  } else {
    slot.next_input = token;
  }
}

// The token `text` is when it is exactly one (special tokens parsed), else nullopt.
std::optional<llama_token> Engine::State::single_token(const std::string& text) const {
  llama_token token = LLAMA_TOKEN_NULL;
  const int32_t n =
      llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), &token, 1, false, true);
  return n == 1 ? std::optional<llama_token>(token) : std::nullopt;
}

std::vector<llama_token> Engine::State::preserved_token_ids(const Constraint& constraint) const {
  std::vector<llama_token> ids;
  for (const auto& text : constraint.preserved_tokens) {
    if (const auto token = single_token(text)) {
      ids.push_back(*token);
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// llama.cpp's common sampler for a request with a grammar: the same chain as make_sampler()
// (common_sampler orders penalties, top-k, top-p, min-p and temperature the same way), plus
// the grammar, tried after sampling and applied before a resample when the token breaks it.
Result<CommonSamplerPtr> Engine::State::constrained_sampler(
    const GenerationRequest& request) const {
  const Constraint& c = request.constraint;
  if (c.grammar.empty()) {
    return CommonSamplerPtr();
  }
  const SamplingParams& s = request.sampling;
  common_params_sampling p;
  p.seed = s.seed.value_or(LLAMA_DEFAULT_SEED);
  p.temp = s.temperature;
  p.top_k = s.top_k;
  p.top_p = s.top_p;
  p.min_p = s.min_p;
  p.penalty_repeat = s.repeat_penalty;
  p.penalty_last_n = s.repeat_last_n;
  p.ignore_eos = s.ignore_eos;
  if (s.ignore_eos) {
    p.logit_bias_eog = ban_end_of_generation;
  }
  p.no_perf = true;
  p.grammar = common_grammar(
      c.from_template ? COMMON_GRAMMAR_TYPE_OUTPUT_FORMAT : COMMON_GRAMMAR_TYPE_USER, c.grammar);
  p.grammar_lazy = c.lazy;
  p.generation_prompt = c.generation_prompt;
  for (const auto& t : c.triggers) {
    common_grammar_trigger trigger{COMMON_GRAMMAR_TRIGGER_TYPE_WORD, t.value, t.token};
    switch (t.kind) {
      case GrammarTrigger::Kind::kToken: {
        trigger.type = COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN;
        const auto token =
            t.token >= 0 ? std::optional<llama_token>(t.token) : single_token(t.value);
        if (!token) {
          continue;  // not one token in this vocabulary: it can never be sampled as one
        }
        trigger.token = *token;
        break;
      }
      case GrammarTrigger::Kind::kPattern:
        trigger.type = COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN;
        break;
      case GrammarTrigger::Kind::kPatternFull:
        trigger.type = COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL;
        break;
      case GrammarTrigger::Kind::kWord:
        break;
    }
    p.grammar_triggers.push_back(std::move(trigger));
  }
  for (const auto token : preserved_token_ids(c)) {
    p.preserved_tokens.insert(token);
  }
  try {
    CommonSamplerPtr sampler(common_sampler_init(model.get(), p));
    if (sampler) {
      return sampler;
    }
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidArgument,
                      std::string("the grammar is invalid: ") + e.what());
  }
  return make_error(ErrorCode::kInvalidArgument, "the grammar is invalid (llama.cpp refused it)");
}

// Plans one step (a token each for decoding slots, then prompt chunks within the remaining
// budget) and decodes it, retrying failed llama_decode calls with smaller batches so that a
// failure ends only the request that causes it (engine/decode_retry.h).
void Engine::State::step(Batch& batch) {
  std::vector<DecodePart> parts;
  std::vector<size_t> starts;  // per part: the prompt index its tokens start at
  for (size_t i = 0; i < slots.size(); ++i) {
    Slot& slot = slots[i];
    slot.logits_index = -1;
    if (slot.active && !slot.prefilling() && slot.next_input != LLAMA_TOKEN_NULL) {
      parts.push_back(DecodePart{i, 1});
      starts.push_back(0);
    }
  }
  size_t budget = options.batch_size - parts.size();
  for (size_t i = 0; i < slots.size() && budget > 0; ++i) {
    Slot& slot = slots[i];
    if (!slot.prefilling()) {
      continue;
    }
    const size_t take = std::min(slot.active->prompt.size() - slot.prompt_done, budget);
    parts.push_back(DecodePart{i, take});
    starts.push_back(slot.prompt_done);
    budget -= take;
  }

  DecodeCalls calls;
  calls.decode = [&](std::span<const DecodePiece> pieces) {
    return decode_pieces(batch, parts, starts, pieces);
  };
  calls.decoded = [&](std::span<const DecodePiece>) { advance(batch); };
  calls.failed = [&](size_t owner, int code) {
    Slot& slot = slots[owner];
    forget_cache(slot);
    fail(slot, make_error(ErrorCode::kInternal,
                          "llama_decode failed with code " + std::to_string(code) +
                              (code == 1 ? " (no room in the KV cache)" : "") +
                              " on this request's tokens, also in a batch of its own"));
  };
  decode_with_retry(parts, options.batch_size, calls);
}

// One llama_decode call over `pieces`. On failure the KV cache is put back as it was: llama.cpp
// removes the failed micro-batch's cells, and this removes what earlier ones added.
int Engine::State::decode_pieces(Batch& batch, std::span<const DecodePart> parts,
                                 std::span<const size_t> starts,
                                 std::span<const DecodePiece> pieces) {
  batch.clear();
  bool prefill = false;
  for (const auto& piece : pieces) {
    Slot& slot = slots[parts[piece.part].owner];
    slot.logits_index = -1;
    if (!slot.prefilling()) {
      slot.logits_index = batch.add(slot.next_input, slot.position, slot.seq, true);
      continue;
    }
    prefill = true;
    const auto& prompt = slot.active->prompt;
    for (size_t i = 0; i < piece.count; ++i) {
      const size_t index = starts[piece.part] + piece.offset + i;
      const bool last = index + 1 == prompt.size();
      const int32_t at = batch.add(prompt[index], static_cast<llama_pos>(index), slot.seq, last);
      if (last) {
        slot.logits_index = at;
      }
    }
  }
  const auto decode_start = Clock::now();
  const int32_t rc = llama_decode(context.get(), batch.get());
  if (prefill) {
    const double decode_ms = ms_between(decode_start, Clock::now());
    for (const auto& piece : pieces) {
      Slot& slot = slots[parts[piece.part].owner];
      if (slot.prefilling()) {
        slot.prefill_ms += decode_ms;
      }
    }
  }
  if (rc != 0) {
    for (const auto& piece : pieces) {
      Slot& slot = slots[parts[piece.part].owner];
      llama_memory_seq_rm(llama_get_memory(context.get()), slot.seq,
                          static_cast<llama_pos>(slot.cached.size()), -1);
      slot.logits_index = -1;
    }
  }
  return rc;
}

// After a successful call: every slot advances by what the batch held for it, then the slots
// whose logits it computed sample their next token.
void Engine::State::advance(Batch& batch) {
  const llama_batch& b = batch.get();
  for (int32_t i = 0; i < b.n_tokens; ++i) {
    Slot& slot = slots[static_cast<size_t>(b.seq_id[i][0])];
    slot.cached.push_back(b.token[i]);
    slot.position = b.pos[i] + 1;
    if (slot.prefilling()) {
      ++slot.prompt_done;
    }
  }
  for (int32_t i = 0; i < b.n_tokens; ++i) {
    Slot& slot = slots[static_cast<size_t>(b.seq_id[i][0])];
    if (slot.active && slot.logits_index == i) {
      slot.next_input = LLAMA_TOKEN_NULL;
      sample(slot);
    }
  }
}

// Embeds every waiting job (between two generation steps: a step waits for them, as a long
// prompt's prefill chunk would) and posts each answer to the callback thread.
void Engine::State::run_embeddings(std::deque<EmbedJob> jobs) {
  if (!embedder) {
    auto made = EmbeddingContext::create(model.get(), options.embedding_pooling, options.batch_size,
                                         threads);
    if (!made) {
      for (auto& job : jobs) {
        events->enqueue({nullptr, EngineTask([done = std::move(job.done), error = made.error()] {
                           done(error);
                         })});
      }
      events->flush();
      return;
    }
    embedder = std::move(made).value();
  }
  for (auto& job : jobs) {
    auto vectors = embedder->embed(job.inputs);
    Result<EmbeddingResult> result =
        vectors ? Result<EmbeddingResult>(
                      EmbeddingResult{std::move(vectors).value(), job.tokens, embedder->pooling()})
                : Result<EmbeddingResult>(vectors.error());
    events->enqueue(
        {nullptr, EngineTask([done = std::move(job.done), result = std::move(result)]() mutable {
           done(std::move(result));
         })});
  }
  events->flush();
}

void Engine::State::run() {
  Batch batch(static_cast<int32_t>(options.batch_size));
  std::deque<EmbedJob> jobs;
  std::vector<Slot*> admitted;
  auto last_flush = Clock::now();
  while (true) {
    {
      std::unique_lock lock(mutex);
      if (!stopping && queue.empty() && active_count == 0) {
        lock.unlock();
        events->flush();  // going idle: deliver everything now
        lock.lock();
      }
      wake.wait(lock, [this] {
        return stopping || !queue.empty() || active_count > 0 || !embed_jobs.empty();
      });
      if (stopping) {
        break;
      }
      admitted = admit_locked();
      jobs.swap(embed_jobs);
    }
    for (Slot* slot : admitted) {
      start(*slot);
    }
    if (!jobs.empty()) {
      run_embeddings(std::move(jobs));
      jobs.clear();
    }
    for (auto& slot : slots) {
      if (slot.active && slot.active->handle->cancelled()) {
        finish(slot, FinishReason::kCancelled);
      }
    }
    step(batch);
    if (const auto now = Clock::now(); now - last_flush >= kCallbackFlushInterval) {
      events->flush();
      last_flush = now;
    }
  }

  // Shutting down: nothing queued or running gets an answer other than an error.
  const Error error = make_error(ErrorCode::kShuttingDown, "the edge engine is shutting down");
  for (auto& slot : slots) {
    if (slot.active) {
      fail(slot, error);
    }
  }
  std::lock_guard lock(mutex);
  for (auto& pending : queue) {
    events->enqueue({pending.callbacks, error});
  }
  queue.clear();
  for (auto& job : embed_jobs) {
    events->enqueue({nullptr, EngineTask([done = std::move(job.done), error] { done(error); })});
  }
  embed_jobs.clear();
}

Result<std::unique_ptr<Engine>> Engine::open(const EngineOptions& options) {
  if (options.max_sequences < 1 || options.max_sequences > 256) {
    return make_error(ErrorCode::kInvalidArgument, "max_sequences must be between 1 and 256");
  }
  if (options.batch_size < options.max_sequences) {
    return make_error(ErrorCode::kInvalidArgument, "batch_size must be at least max_sequences (" +
                                                       std::to_string(options.max_sequences) + ")");
  }
  if (options.threads < 0) {
    return make_error(ErrorCode::kInvalidArgument, "threads must be >= 0 (0: automatic)");
  }
  ensure_llama_backend();

  auto header = read_gguf_header(options.model_path);
  if (!header) {
    return header.error();
  }
  auto digest = sha256_file(options.model_path);
  if (!digest) {
    return digest.error();
  }
  auto state = std::make_unique<State>();
  state->options = options;
  state->identity = identity_from_header(options.model_path, header->required_file_size,
                                         header.value(), std::move(digest).value());
  const ModelIdentity& id = state->identity;
  if (id.context_length == 0 || id.layer_count == 0) {
    return make_error(
        ErrorCode::kInvalidModel,
        "'" + options.model_path + "' lacks " + id.architecture +
            ".context_length or .block_count: not a generative model llama.cpp knows");
  }
  uint32_t ctx = options.context_per_sequence;
  if (ctx == 0) {
    ctx = static_cast<uint32_t>(std::min<uint64_t>(id.context_length, kDefaultMaxContext));
  }
  state->context_per_sequence = ctx;

  const MemoryEstimate need =
      estimate_memory(header.value(), id, ctx, options.max_sequences, options.batch_size);
  const auto available =
      options.memory_limit_bytes ? options.memory_limit_bytes : available_memory_bytes();
  if (available && need.total() > *available) {
    auto mib = [](uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; };
    return make_error(ErrorCode::kInsufficientMemory,
                      "model '" + id.name + "' needs about " + mib(need.total()) + " (weights " +
                          mib(need.weights_bytes) + ", KV cache " + mib(need.kv_cache_bytes) +
                          " for " + std::to_string(options.max_sequences) + " sequences of " +
                          std::to_string(ctx) + " tokens, buffers " + mib(need.buffers_bytes) +
                          ") but only " + mib(*available) +
                          " is available; use a smaller context, fewer parallel sequences or a "
                          "smaller quantization");
  }

  llama_model_params model_params = llama_model_default_params();
  model_params.n_gpu_layers = 0;
  state->model.reset(llama_model_load_from_file(options.model_path.c_str(), model_params));
  if (!state->model) {
    return make_error(ErrorCode::kInvalidModel,
                      "llama.cpp could not load '" + options.model_path +
                          "' (unsupported architecture or corrupt tensors; run with "
                          "--verbose for llama.cpp's own message)");
  }
  state->identity.parameter_count = llama_model_n_params(state->model.get());
  state->vocab = llama_model_get_vocab(state->model.get());
  state->vocab_size = llama_vocab_n_tokens(state->vocab);
  for (llama_token token = 0; token < state->vocab_size; ++token) {
    if (llama_vocab_is_eog(state->vocab, token)) {
      state->ban_end_of_generation.push_back({token, -INFINITY});
    }
  }
  const char* tmpl = llama_model_chat_template(state->model.get(), nullptr);
  state->chat_template =
      ChatTemplate::from_model(tmpl ? std::optional<std::string>(tmpl) : std::nullopt);
  auto formatter =
      ChatFormatter::create(state->model.get(), options.chat_template, state->chat_template);
  if (!formatter) {
    return formatter.error();
  }
  state->chat_formatter = std::move(formatter).value();

  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  state->threads = threads;
  llama_context_params ctx_params = llama_context_default_params();
  ctx_params.n_ctx = ctx * options.max_sequences;
  ctx_params.n_seq_max = options.max_sequences;
  ctx_params.n_batch = options.batch_size;
  ctx_params.n_ubatch = options.batch_size;
  ctx_params.n_threads = threads;
  ctx_params.n_threads_batch = threads;
  ctx_params.kv_unified = false;  // each sequence owns `ctx` cells: no cross-request eviction
  ctx_params.no_perf = true;
  state->context.reset(llama_init_from_model(state->model.get(), ctx_params));
  if (!state->context) {
    return make_error(ErrorCode::kInternal, "llama.cpp could not create a context of " +
                                                std::to_string(ctx_params.n_ctx) + " tokens for '" +
                                                id.name + "'");
  }
  state->context_per_sequence = llama_n_ctx_seq(state->context.get());

  if (options.prompt_cache && options.prompt_cache_bytes > 0) {
    state->store = std::make_unique<PromptStore>(options.prompt_cache_bytes);
  }
  state->slots.resize(options.max_sequences);
  for (uint32_t i = 0; i < options.max_sequences; ++i) {
    state->slots[i].seq = static_cast<llama_seq_id>(i);
  }
  state->events = std::make_unique<EventDispatcher>();
  State* raw = state.get();
  state->inference_thread = std::thread([raw] { raw->run(); });
  return std::unique_ptr<Engine>(new Engine(std::move(state)));
}

Engine::Engine(std::unique_ptr<State> state) : state_(std::move(state)) {}

Engine::~Engine() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  state_->inference_thread.join();
  state_->events.reset();  // delivers every queued event before the model is freed
}

const ModelIdentity& Engine::model() const {
  return state_->identity;
}
const ChatTemplate& Engine::chat_template() const {
  return state_->chat_template;
}
Result<FormattedChat> Engine::format_chat(const ChatRequest& request) const {
  return state_->chat_formatter->format(request);
}
const std::string& Engine::chat_format_kind() const {
  return state_->chat_formatter->kind();
}
uint32_t Engine::context_per_sequence() const {
  return state_->context_per_sequence;
}

Result<int> Engine::State::token_count(const std::string& text, bool add_special,
                                       bool parse_special) const {
  if (text.size() > static_cast<size_t>(INT32_MAX / 2)) {
    return make_error(ErrorCode::kInvalidArgument, "text is too long to tokenize");
  }
  const int32_t n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), nullptr,
                                   0, add_special, parse_special);
  if (n == INT32_MIN) {
    return make_error(ErrorCode::kInvalidArgument, "text is too long to tokenize");
  }
  return n < 0 ? -n : n;
}

Result<std::vector<llama_token>> Engine::State::tokenize(const std::string& text, bool add_special,
                                                         bool parse_special) const {
  auto count = token_count(text, add_special, parse_special);
  if (!count) {
    return count.error();
  }
  std::vector<llama_token> tokens(static_cast<size_t>(count.value()));
  llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                 count.value(), add_special, parse_special);
  return tokens;
}

Result<int> Engine::count_tokens(const std::string& text, bool add_special,
                                 bool parse_special) const {
  return state_->token_count(text, add_special, parse_special);
}

Result<std::shared_ptr<RequestHandle>> Engine::submit(GenerationRequest request,
                                                      GenerationCallbacks callbacks) {
  if (auto status = validate(request.sampling); !status) {
    return status.error();
  }
  if (request.prompt.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "prompt must not be empty");
  }
  auto tokenized = state_->tokenize(request.prompt, request.add_special, request.parse_special);
  if (!tokenized) {
    return tokenized.error();
  }
  std::vector<llama_token> tokens = std::move(tokenized).value();
  const uint32_t limit = state_->context_per_sequence;
  if (tokens.size() >= limit) {
    return make_error(ErrorCode::kContextOverflow,
                      "the prompt is " + std::to_string(tokens.size()) +
                          " tokens but a sequence holds at most " + std::to_string(limit) +
                          " (prompt plus at least one generated token); shorten the prompt");
  }
  if (tokens.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "the prompt tokenizes to nothing");
  }

  auto constrained = state_->constrained_sampler(request);
  if (!constrained) {
    return constrained.error();
  }
  std::vector<llama_token> preserved = state_->preserved_token_ids(request.constraint);

  auto handle = std::make_shared<RequestHandle>(state_->next_id.fetch_add(1));
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopping) {
      return make_error(ErrorCode::kShuttingDown, "the edge engine is shutting down");
    }
    if (state_->queue.size() >= state_->options.max_queued_requests) {
      return make_error(ErrorCode::kBusy,
                        "the edge engine is busy: " + std::to_string(state_->queue.size()) +
                            " requests are queued (limit " +
                            std::to_string(state_->options.max_queued_requests) + "); retry later");
    }
    state_->queue.push_back(
        PendingRequest{handle, std::move(request), std::move(tokens),
                       std::make_shared<const GenerationCallbacks>(std::move(callbacks)),
                       Clock::now(), std::move(constrained).value(), std::move(preserved)});
  }
  state_->wake.notify_one();
  return handle;
}

std::vector<int32_t> Engine::tokenize(const std::string& text) const {
  auto tokens = state_->tokenize(text, true, false);
  return tokens ? std::move(tokens).value() : std::vector<int32_t>();
}

int Engine::embedding_dimensions() const {
  return llama_model_n_embd(state_->model.get());
}

Status Engine::embed(std::vector<EmbeddingInput> inputs,
                     std::function<void(Result<EmbeddingResult>)> done) {
  if (inputs.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "input must not be empty");
  }
  EmbedJob job;
  const uint32_t limit = state_->options.batch_size;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto& input = inputs[i];
    const std::string which = inputs.size() == 1 ? "input" : "input[" + std::to_string(i) + "]";
    std::vector<int32_t> tokens = std::move(input.tokens);
    if (!input.is_tokens) {
      auto tokenized = state_->tokenize(input.text, true, false);
      if (!tokenized) {
        return tokenized.error();
      }
      tokens = std::move(tokenized).value();
    }
    if (tokens.empty()) {
      return make_error(ErrorCode::kInvalidArgument, which + " must not be empty");
    }
    if (tokens.size() > limit) {
      return make_error(ErrorCode::kContextOverflow,
                        which + " is " + std::to_string(tokens.size()) +
                            " tokens; the edge model embeds at most " + std::to_string(limit));
    }
    for (const int32_t token : tokens) {
      if (token < 0 || token >= state_->vocab_size) {
        return make_error(ErrorCode::kInvalidArgument,
                          which + " holds token id " + std::to_string(token) +
                              ", outside the vocabulary (0.." +
                              std::to_string(state_->vocab_size - 1) + ")");
      }
    }
    job.tokens += static_cast<int>(tokens.size());
    job.inputs.push_back(std::move(tokens));
  }
  job.done = std::move(done);
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopping) {
      return make_error(ErrorCode::kShuttingDown, "the edge engine is shutting down");
    }
    state_->embed_jobs.push_back(std::move(job));
  }
  state_->wake.notify_one();
  return {};
}

EngineStats Engine::stats() const {
  std::lock_guard lock(state_->mutex);
  return EngineStats{state_->queue.size(),
                     state_->active_count,
                     state_->completed,
                     state_->prompt_tokens_cached,
                     state_->prompt_tokens_prefilled,
                     state_->prompt_tokens_restored,
                     state_->prompt_store_entries,
                     state_->prompt_store_bytes};
}

}  // namespace tandem::engine
