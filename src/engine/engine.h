#pragma once
// The edge engine: one GGUF model served in-process through llama.cpp.
//
// Threading: one inference thread owns the llama.cpp context and decodes every active
// sequence in one batch per step; callbacks run on a separate callback thread, in order per
// request. submit(), cancel() and the accessors are thread-safe. Requests beyond the free
// sequence slots wait in a bounded queue; when it is full, submit() fails with kBusy at once.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/saturating.h"
#include "engine/chat_format.h"
#include "engine/chat_template.h"
#include "engine/embedding_context.h"
#include "engine/generation.h"
#include "engine/model_identity.h"

namespace tandem::engine {

struct EngineOptions {
  std::string model_path;
  int threads = 0;                    // 0: one per hardware thread
  uint32_t context_per_sequence = 0;  // tokens per sequence; 0: min(trained context, 4096)
  uint32_t max_sequences = 4;         // sequences decoded together (batch slots)
  size_t max_queued_requests = 64;    // waiting beyond the slots; more is kBusy
  uint32_t batch_size = 512;          // tokens per llama_decode call (prompt chunks)
  // Keep each slot's KV cache after its request and give a new request the idle slot whose
  // cached tokens share the longest prefix with its prompt: only the rest is prefilled (a
  // chat's next turn, clients sharing a system prompt, a cascade's hand-off). Off: every
  // request prefills its whole prompt (the comparison in benchmarks).
  bool prompt_cache = true;
  // Host memory for prefixes pushed out of the slots (engine/prompt_store.h): a conversation
  // whose slot went to another restores its KV from here instead of prefilling. 0: none.
  size_t prompt_cache_bytes = size_t{256} << 20;
  // A Jinja chat template's source replacing the model's own (edge.chat_template_file).
  std::optional<std::string> chat_template;
  Pooling embedding_pooling = Pooling::kModel;  // /v1/embeddings (edge.embeddings.pooling)
  // Memory the load may use, instead of the system's MemAvailable. For tests and for
  // operators who want to reserve memory for something else.
  std::optional<uint64_t> memory_limit_bytes;
};

// The bytes a model needs with these options: weights, KV cache, output and compute buffers.
// An estimate on the safe side; compared against available memory before loading.
struct MemoryEstimate {
  uint64_t weights_bytes = 0;
  uint64_t kv_cache_bytes = 0;
  uint64_t buffers_bytes = 0;
  uint64_t total() const {  // saturates: a crafted header never wraps to "fits"
    return saturating_add(saturating_add(weights_bytes, kv_cache_bytes), buffers_bytes);
  }
};

// Cancels one request. Safe to call from any thread, any number of times, after completion.
class RequestHandle {
 public:
  explicit RequestHandle(uint64_t id) : id_(id) {}
  uint64_t id() const { return id_; }
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  uint64_t id_;
  std::atomic<bool> cancelled_{false};
};

// One input of Engine::embed: text, or token ids as OpenAI's API allows.
struct EmbeddingInput {
  std::string text;
  std::vector<int32_t> tokens;
  bool is_tokens = false;
};

struct EmbeddingResult {
  std::vector<std::vector<float>> vectors;  // L2-normalised, one per input, in order
  int prompt_tokens = 0;
  std::string pooling;  // the pooling used: mean, last, cls
};

struct EngineStats {
  size_t queued = 0;  // waiting for a slot
  size_t active = 0;  // holding a slot
  uint64_t completed = 0;
  uint64_t prompt_tokens_cached = 0;     // prompt tokens found in a slot's KV cache
  uint64_t prompt_tokens_prefilled = 0;  // prompt tokens decoded
  uint64_t prompt_tokens_restored = 0;   // of the cached: restored from the host prompt store
  size_t prompt_store_entries = 0;       // prefixes held in host memory
  size_t prompt_store_bytes = 0;         // their size (at most prompt_cache_bytes)
};

class Engine {
 public:
  // Validates the file, checks memory, loads the model and starts the threads.
  // Errors: kNotFound, kInvalidModel, kInsufficientMemory, kInvalidArgument (options), kInternal.
  static Result<std::unique_ptr<Engine>> open(const EngineOptions& options);

  // Stops taking work; queued and running requests end with kShuttingDown.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const ModelIdentity& model() const;
  const ChatTemplate& chat_template() const;
  // Renders a chat (messages, tools, response_format) for this model: llama.cpp's Jinja
  // templates, or the plain template for a model without one (engine/chat_format.h).
  Result<FormattedChat> format_chat(const ChatRequest& request) const;
  // "jinja" or "plain".
  const std::string& chat_format_kind() const;
  uint32_t context_per_sequence() const;

  // Tokenizes and queues a request. Errors are immediate: kInvalidArgument (sampling fields,
  // empty prompt), kContextOverflow (prompt longer than a sequence's context), kBusy,
  // kShuttingDown. On success the callbacks will be called, on the callback thread.
  Result<std::shared_ptr<RequestHandle>> submit(GenerationRequest request,
                                                GenerationCallbacks callbacks);

  // Embeds `inputs` on the inference thread, between generation steps, batched together.
  // Errors are immediate: kInvalidArgument (an empty input, a token id outside the
  // vocabulary), kContextOverflow (an input longer than batch_size tokens), kShuttingDown.
  // Otherwise `done` is called once, on the callback thread.
  Status embed(std::vector<EmbeddingInput> inputs,
               std::function<void(Result<EmbeddingResult>)> done);
  int embedding_dimensions() const;

  // Number of tokens `text` becomes, without generating.
  Result<int> count_tokens(const std::string& text, bool add_special, bool parse_special) const;
  // The token ids `text` becomes as a prompt's start (BOS added, special tokens not parsed);
  // empty when it cannot be tokenized.
  std::vector<int32_t> tokenize(const std::string& text) const;

  EngineStats stats() const;

  struct State;  // defined in engine_state.h: the llama.cpp side stays out of this header

 private:
  explicit Engine(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Estimates memory from the header alone (used by open(); public for `tandem models inspect`).
MemoryEstimate estimate_memory(const GgufHeader& header, const ModelIdentity& identity,
                               uint32_t context_per_sequence, uint32_t max_sequences,
                               uint32_t batch_size);

// Bytes the system can give a new allocation now (MemAvailable), or nullopt if unknown.
std::optional<uint64_t> available_memory_bytes();

}  // namespace tandem::engine
