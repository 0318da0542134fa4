// Memory planning for a model before any of it is loaded.

#include <fstream>
#include <sstream>

#include "common/saturating.h"
#include "engine/engine.h"

namespace tandem::engine {
namespace {

constexpr uint64_t kKvBytesPerElement = 2;  // llama.cpp's default K/V cache type is F16
constexpr uint64_t kFloatBytes = 4;
constexpr uint64_t kFixedOverheadBytes = 64ULL << 20;  // graph metadata, thread pools, slack

}  // namespace

MemoryEstimate estimate_memory(const GgufHeader& header, const ModelIdentity& identity,
                               uint32_t context_per_sequence, uint32_t max_sequences,
                               uint32_t batch_size) {
  MemoryEstimate estimate;
  for (const auto& tensor : header.tensors) {
    estimate.weights_bytes = saturating_add(estimate.weights_bytes, tensor.size_bytes);
  }
  const std::string& arch = identity.architecture;
  const uint64_t head_count = identity.head_count == 0 ? 1 : identity.head_count;
  const uint64_t head_dim_default = identity.embedding_length / head_count;
  const uint64_t key_dim =
      header.get_uint(arch + ".attention.key_length").value_or(head_dim_default);
  const uint64_t value_dim =
      header.get_uint(arch + ".attention.value_length").value_or(head_dim_default);
  // Every count comes from the file: a crafted header saturates instead of wrapping.
  estimate.kv_cache_bytes = saturating_mul(
      {context_per_sequence, max_sequences, identity.layer_count, identity.head_count_kv,
       saturating_add(key_dim, value_dim), kKvBytesPerElement});
  // Logits for one output per sequence, plus activations for one batch of prompt tokens
  // (a generous multiple of the embedding width) and fixed overhead.
  const uint64_t logits =
      saturating_mul({identity.vocab_size, std::max<uint64_t>(max_sequences, 1), kFloatBytes});
  const uint64_t activations = saturating_mul(
      {batch_size,
       saturating_add(saturating_mul({identity.embedding_length, 16}), identity.vocab_size),
       kFloatBytes});
  estimate.buffers_bytes = saturating_add(saturating_add(logits, activations), kFixedOverheadBytes);
  return estimate;
}

std::optional<uint64_t> available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      uint64_t kib = 0;
      if (fields >> kib) {
        return kib * 1024;
      }
    }
  }
  return std::nullopt;
}

}  // namespace tandem::engine
