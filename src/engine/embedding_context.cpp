#include "engine/embedding_context.h"

#include <algorithm>
#include <cmath>

#include <llama.h>

namespace tandem::engine {
namespace {

// Sequences one llama_decode call embeds together.
constexpr int32_t kMaxSequences = 16;

enum llama_pooling_type to_llama(Pooling pooling) {
  switch (pooling) {
    case Pooling::kMean:
      return LLAMA_POOLING_TYPE_MEAN;
    case Pooling::kLast:
      return LLAMA_POOLING_TYPE_LAST;
    case Pooling::kCls:
      return LLAMA_POOLING_TYPE_CLS;
    case Pooling::kModel:
      break;
  }
  return LLAMA_POOLING_TYPE_UNSPECIFIED;
}

const char* pooling_name(enum llama_pooling_type type) {
  switch (type) {
    case LLAMA_POOLING_TYPE_MEAN:
      return "mean";
    case LLAMA_POOLING_TYPE_LAST:
      return "last";
    case LLAMA_POOLING_TYPE_CLS:
      return "cls";
    case LLAMA_POOLING_TYPE_RANK:
      return "rank";
    default:
      return "none";
  }
}

llama_context* make_context(llama_model* model, enum llama_pooling_type pooling,
                            uint32_t max_tokens, int threads) {
  llama_context_params params = llama_context_default_params();
  params.n_ctx = max_tokens;
  params.n_batch = max_tokens;
  params.n_ubatch = max_tokens;  // pooling needs each input whole in one micro-batch
  params.n_seq_max = kMaxSequences;
  params.kv_unified = true;
  params.embeddings = true;
  params.pooling_type = pooling;
  params.n_threads = threads;
  params.n_threads_batch = threads;
  params.no_perf = true;
  return llama_init_from_model(model, params);
}

void normalize(std::vector<float>& v) {
  double sum = 0.0;
  for (const float x : v) {
    sum += static_cast<double>(x) * x;
  }
  const double norm = std::sqrt(sum);
  if (norm > 0.0) {
    for (float& x : v) {
      x = static_cast<float>(x / norm);
    }
  }
}

}  // namespace

std::optional<Pooling> pooling_from_name(const std::string& name) {
  if (name == "model") {
    return Pooling::kModel;
  }
  if (name == "mean") {
    return Pooling::kMean;
  }
  if (name == "last") {
    return Pooling::kLast;
  }
  if (name == "cls") {
    return Pooling::kCls;
  }
  return std::nullopt;
}

Result<std::unique_ptr<EmbeddingContext>> EmbeddingContext::create(llama_model* model,
                                                                   Pooling pooling,
                                                                   uint32_t max_tokens,
                                                                   int threads) {
  std::unique_ptr<EmbeddingContext> out(new EmbeddingContext());
  out->max_tokens_ = max_tokens;
  out->dimensions_ = llama_model_n_embd(model);
  out->context_ = make_context(model, to_llama(pooling), max_tokens, threads);
  if (out->context_ != nullptr && pooling == Pooling::kModel &&
      llama_pooling_type(out->context_) == LLAMA_POOLING_TYPE_NONE) {
    // A generative model declares no pooling: one vector per input is the mean of its tokens.
    llama_free(out->context_);
    out->context_ = make_context(model, LLAMA_POOLING_TYPE_MEAN, max_tokens, threads);
  }
  if (out->context_ == nullptr) {
    return make_error(ErrorCode::kInternal, "llama.cpp could not create an embeddings context");
  }
  const enum llama_pooling_type used = llama_pooling_type(out->context_);
  if (used == LLAMA_POOLING_TYPE_NONE || used == LLAMA_POOLING_TYPE_RANK) {
    return make_error(ErrorCode::kInvalidArgument,
                      std::string("the model's pooling '") + pooling_name(used) +
                          "' gives no embedding vector; set edge.embeddings.pooling");
  }
  out->pooling_ = pooling_name(used);
  return out;
}

EmbeddingContext::~EmbeddingContext() {
  if (context_ != nullptr) {
    llama_free(context_);
  }
}

Result<std::vector<std::vector<float>>> EmbeddingContext::embed(
    const std::vector<std::vector<int32_t>>& inputs) {
  std::vector<std::vector<float>> out;
  out.reserve(inputs.size());
  llama_batch batch = llama_batch_init(static_cast<int32_t>(max_tokens_), 0, 1);
  size_t next = 0;
  while (next < inputs.size()) {
    // As many whole inputs as fit in one call.
    batch.n_tokens = 0;
    const size_t first = next;
    while (next < inputs.size() && static_cast<int32_t>(next - first) < kMaxSequences &&
           batch.n_tokens + inputs[next].size() <= max_tokens_) {
      const auto seq = static_cast<llama_seq_id>(next - first);
      for (size_t i = 0; i < inputs[next].size(); ++i) {
        const int32_t at = batch.n_tokens++;
        batch.token[at] = inputs[next][i];
        batch.pos[at] = static_cast<llama_pos>(i);
        batch.n_seq_id[at] = 1;
        batch.seq_id[at][0] = seq;
        batch.logits[at] = 1;
      }
      ++next;
    }
    llama_memory_clear(llama_get_memory(context_), true);
    const int32_t rc = llama_decode(context_, batch);
    if (rc != 0) {
      llama_batch_free(batch);
      return make_error(ErrorCode::kInternal,
                        "llama_decode failed with code " + std::to_string(rc) + " (embeddings)");
    }
    for (size_t i = first; i < next; ++i) {
      const float* pooled =
          llama_get_embeddings_seq(context_, static_cast<llama_seq_id>(i - first));
      if (pooled == nullptr) {
        llama_batch_free(batch);
        return make_error(ErrorCode::kInternal, "llama.cpp returned no pooled embedding");
      }
      std::vector<float> vector(pooled, pooled + dimensions_);
      normalize(vector);
      out.push_back(std::move(vector));
    }
  }
  llama_batch_free(batch);
  return out;
}

}  // namespace tandem::engine
