#pragma once
// Embeddings from the edge model: a second llama.cpp context over the same weights, made for
// pooled embeddings (the generation context keeps its KV cache and batch layout). Used only
// on the engine's inference thread, between generation steps (Engine::embed).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

struct llama_model;
struct llama_context;

namespace tandem::engine {

// How token vectors become one vector per input. kModel: what the model's metadata declares,
// and mean pooling when it declares none (a generative model).
enum class Pooling { kModel, kMean, kLast, kCls };

// "model", "mean", "last", "cls"; nullopt for anything else.
std::optional<Pooling> pooling_from_name(const std::string& name);

class EmbeddingContext {
 public:
  // `max_tokens`: the longest input, and the tokens one llama_decode call takes.
  static Result<std::unique_ptr<EmbeddingContext>> create(llama_model* model, Pooling pooling,
                                                          uint32_t max_tokens, int threads);
  ~EmbeddingContext();
  EmbeddingContext(const EmbeddingContext&) = delete;
  EmbeddingContext& operator=(const EmbeddingContext&) = delete;

  // One L2-normalised vector per input, in order; as many inputs per llama_decode call as fit.
  // Each input must be 1..max_tokens() valid token ids (Engine::embed checks).
  Result<std::vector<std::vector<float>>> embed(const std::vector<std::vector<int32_t>>& inputs);

  uint32_t max_tokens() const { return max_tokens_; }
  int dimensions() const { return dimensions_; }
  const std::string& pooling() const { return pooling_; }  // the pooling in use, by name

 private:
  EmbeddingContext() = default;
  llama_context* context_ = nullptr;
  uint32_t max_tokens_ = 0;
  int dimensions_ = 0;
  std::string pooling_;
};

}  // namespace tandem::engine
