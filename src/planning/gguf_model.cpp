#include "planning/gguf_model.h"

#include <filesystem>

#include "engine/gguf_file.h"
#include "engine/model_identity.h"
#include "planning/quantization.h"

namespace tandem::planning {
namespace {

Error missing_key(const std::string& path, const std::string& key, const char* flag) {
  return make_error(ErrorCode::kInvalidModel, path + ": the GGUF header has no " + key +
                                                  "; the planner needs it (" + flag + ")");
}

Error too_large(const std::string& path, const std::string& what) {
  return make_error(ErrorCode::kInvalidModel,
                    path + ": the GGUF header's " + what + " add up beyond 2^64: not a real model");
}

}  // namespace

Status apply_gguf_model(PlanInputs& inputs, const std::string& path) {
  auto header = engine::read_gguf_header(path);
  if (!header) {
    return header.error();
  }
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(path, ec);
  // The sha256 is the model's version elsewhere; planning needs no hash of gigabytes.
  const engine::ModelIdentity id =
      engine::identity_from_header(path, ec ? 0 : file_size, header.value(), "");
  const std::string& arch = id.architecture;
  if (id.parameter_count == 0) {
    return make_error(ErrorCode::kInvalidModel, path + ": the GGUF file has no tensors");
  }
  if (id.layer_count == 0) {
    return missing_key(path, arch + ".block_count", "--layers");
  }
  if (id.head_count == 0 || id.head_count_kv == 0) {
    return missing_key(path, arch + ".attention.head_count", "--kv-heads");
  }
  // A header's sizes are the file's word, not checked against each other: every sum is.
  uint64_t weights_bytes = 0;
  for (const auto& tensor : header->tensors) {
    if (__builtin_add_overflow(weights_bytes, tensor.size_bytes, &weights_bytes)) {
      return too_large(path, "its tensors' sizes");
    }
  }
  // Keys and values may have their own widths (key_length, value_length); the cache holds one
  // of each, so their mean is the head size that gives the same bytes.
  const uint64_t default_head_dim = id.embedding_length / id.head_count;
  const uint64_t key_dim =
      header->get_uint(arch + ".attention.key_length").value_or(default_head_dim);
  const uint64_t value_dim =
      header->get_uint(arch + ".attention.value_length").value_or(default_head_dim);
  uint64_t both_dims = 0;
  if (__builtin_add_overflow(key_dim, value_dim, &both_dims) || both_dims == UINT64_MAX) {
    return too_large(path, arch + ".attention.key_length and value_length");
  }
  if (both_dims == 0) {
    return missing_key(path, arch + ".embedding_length", "--head-dim");
  }

  inputs.model_name = id.name + " (" + std::filesystem::path(path).filename().string() + ")";
  inputs.model_file = path;
  inputs.params_billions = static_cast<double>(id.parameter_count) / 1e9;
  const auto type = find_quantization(id.quantization);
  inputs.quantization = type ? type->name : id.quantization;
  inputs.bits_per_weight.reset();
  inputs.exact_weights_bytes = weights_bytes;
  if (id.context_length > 0) {
    inputs.context_length = id.context_length;
  }
  inputs.layers = id.layer_count;
  inputs.kv_heads = id.head_count_kv;
  inputs.head_dim = (both_dims + 1) / 2;
  return {};
}

}  // namespace tandem::planning
