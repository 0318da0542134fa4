// The engine's public interface: requests and embeddings validated and tokenized on the
// caller's thread, then queued for the inference thread; accessors and statistics.

#include "engine/engine_state.h"

namespace tandem::engine {

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
