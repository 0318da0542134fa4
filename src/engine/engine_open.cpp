// Opening the engine: options and the file checked before llama.cpp reads anything (a header
// that lies, a model that cannot fit), then the model, its vocabulary and chat formatter, the
// context its sequences share, and the threads. Runs on the caller's thread, before the
// inference thread exists.

#include <algorithm>
#include <cmath>
#include <thread>

#include "engine/engine_state.h"
#include "engine/llama_backend.h"

namespace tandem::engine {
namespace {

constexpr uint32_t kDefaultMaxContext = 4096;

Status check_options(const EngineOptions& options) {
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
  return {};
}

// Refuses a model that would not fit before llama.cpp allocates any of it: an allocation that
// fails inside llama.cpp aborts the process instead of returning an error.
Status check_memory(const GgufHeader& header, const ModelIdentity& id, const EngineOptions& options,
                    uint32_t ctx) {
  const MemoryEstimate need =
      estimate_memory(header, id, ctx, options.max_sequences, options.batch_size);
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
  return {};
}

// The weights, the vocabulary (and the bias that bans its end-of-generation tokens for
// ignore_eos) and the chat formatter of the model's or the configured template.
Status load_model(Engine::State& state) {
  const EngineOptions& options = state.options;
  llama_model_params model_params = llama_model_default_params();
  model_params.n_gpu_layers = 0;
  state.model.reset(llama_model_load_from_file(options.model_path.c_str(), model_params));
  if (!state.model) {
    return make_error(ErrorCode::kInvalidModel,
                      "llama.cpp could not load '" + options.model_path +
                          "' (unsupported architecture or corrupt tensors; run with "
                          "--verbose for llama.cpp's own message)");
  }
  state.identity.parameter_count = llama_model_n_params(state.model.get());
  state.vocab = llama_model_get_vocab(state.model.get());
  state.vocab_size = llama_vocab_n_tokens(state.vocab);
  for (llama_token token = 0; token < state.vocab_size; ++token) {
    if (llama_vocab_is_eog(state.vocab, token)) {
      state.ban_end_of_generation.push_back({token, -INFINITY});
    }
  }
  const char* tmpl = llama_model_chat_template(state.model.get(), nullptr);
  state.chat_template =
      ChatTemplate::from_model(tmpl ? std::optional<std::string>(tmpl) : std::nullopt);
  auto formatter =
      ChatFormatter::create(state.model.get(), options.chat_template, state.chat_template);
  if (!formatter) {
    return formatter.error();
  }
  state.chat_formatter = std::move(formatter).value();
  return {};
}

// One context for every sequence, `ctx` tokens each.
Status create_context(Engine::State& state, uint32_t ctx) {
  const EngineOptions& options = state.options;
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  state.threads = threads;
  llama_context_params ctx_params = llama_context_default_params();
  ctx_params.n_ctx = ctx * options.max_sequences;
  ctx_params.n_seq_max = options.max_sequences;
  ctx_params.n_batch = options.batch_size;
  ctx_params.n_ubatch = options.batch_size;
  ctx_params.n_threads = threads;
  ctx_params.n_threads_batch = threads;
  ctx_params.kv_unified = false;  // each sequence owns `ctx` cells: no cross-request eviction
  ctx_params.no_perf = true;
  state.context.reset(llama_init_from_model(state.model.get(), ctx_params));
  if (!state.context) {
    return make_error(ErrorCode::kInternal, "llama.cpp could not create a context of " +
                                                std::to_string(ctx_params.n_ctx) + " tokens for '" +
                                                state.identity.name + "'");
  }
  state.context_per_sequence = llama_n_ctx_seq(state.context.get());
  return {};
}

// The prompt store, one slot per sequence, the callback thread, then the inference thread.
void start_threads(Engine::State& state) {
  const EngineOptions& options = state.options;
  if (options.prompt_cache && options.prompt_cache_bytes > 0) {
    state.store = std::make_unique<PromptStore>(options.prompt_cache_bytes);
  }
  state.slots.resize(options.max_sequences);
  for (uint32_t i = 0; i < options.max_sequences; ++i) {
    state.slots[i].seq = static_cast<llama_seq_id>(i);
  }
  state.events = std::make_unique<EventDispatcher>();
  Engine::State* raw = &state;
  state.inference_thread = std::thread([raw] { raw->run(); });
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::open(const EngineOptions& options) {
  if (auto checked = check_options(options); !checked) {
    return checked.error();
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

  if (auto fits = check_memory(header.value(), id, options, ctx); !fits) {
    return fits.error();
  }
  if (auto loaded = load_model(*state); !loaded) {
    return loaded.error();
  }
  if (auto created = create_context(*state, ctx); !created) {
    return created.error();
  }
  start_threads(*state);
  return std::unique_ptr<Engine>(new Engine(std::move(state)));
}

}  // namespace tandem::engine
