#pragma once
// The engine's inside, shared by the files that implement Engine (engine/engine*.cpp) and by
// nothing else: the only header besides llama_backend's that includes llama.h. engine.h keeps
// State opaque so that other components never see llama.cpp's types.
//
//   engine.cpp           the public interface: submit, embed, tokenization, stats
//   engine_open.cpp      validating options and the file, loading the model, starting threads
//   engine_slots.cpp     admission into slots, the prompt cache, a request's start and end
//   engine_sampling.cpp  sampler chains, grammar-constrained samplers, one token's sampling
//   engine_loop.cpp      the inference thread: steps, batched decoding, embeddings, shutdown

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include <llama-cpp.h>
#include <llama.h>

#include "engine/decode_retry.h"
#include "engine/engine.h"
#include "engine/event_dispatcher.h"
#include "engine/prompt_store.h"
#include "engine/text_stream.h"
#include "sampling.h"

namespace tandem::engine {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

struct CommonSamplerDeleter {
  void operator()(common_sampler* sampler) const { common_sampler_free(sampler); }
};
using CommonSamplerPtr = std::unique_ptr<common_sampler, CommonSamplerDeleter>;

// A request from submit() until it finishes. Owned by the queue (under State::mutex), then by
// its slot (inference thread only).
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

// Owns a llama_batch (RAII) and fills it. Inference thread only.
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

// An embeddings request waiting for the inference thread (queued under State::mutex).
struct EmbedJob {
  std::vector<std::vector<int32_t>> inputs;
  int tokens = 0;
  std::function<void(Result<EmbeddingResult>)> done;
};

// One sequence of the shared context, and the request it is serving. Inference thread only.
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
                               const std::vector<llama_logit_bias>& ban_end_of_generation);

// A token's text; `special` renders control tokens instead of dropping them.
std::string token_piece(const llama_vocab* vocab, llama_token token, bool special = false);

// Thread-safety: submit(), embed() and stats() (through Engine) take `mutex` for the fields it
// guards; every other member belongs to the inference thread, or is set before it starts and
// read-only after (options, identity, model, vocab, chat formatter).
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

}  // namespace tandem::engine
