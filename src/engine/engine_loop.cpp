// The inference thread: waits for work, admits queued requests into slots, runs embeddings
// between steps, decodes one step of every active sequence in as few llama_decode calls as fit,
// and on shutdown answers everything left with kShuttingDown.

#include <algorithm>

#include "engine/engine_state.h"

namespace tandem::engine {
namespace {

// Streaming latency added at most by batching callback wake-ups (see EventDispatcher).
constexpr auto kCallbackFlushInterval = std::chrono::microseconds(1000);

}  // namespace

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

}  // namespace tandem::engine
