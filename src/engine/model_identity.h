#pragma once
// What a GGUF model is, read from its header without loading its weights. The sha256 of the
// file is the model's version: every answer Tandem gives records it.

#include <cstdint>
#include <string>

#include "common/result.h"
#include "engine/gguf_file.h"

namespace tandem::engine {

struct ModelIdentity {
  std::string path;
  std::string name;          // general.name, or the file name without extension
  std::string version;       // general.version ("" when the file has none)
  std::string architecture;  // general.architecture, e.g. "llama"
  uint64_t parameter_count = 0;
  std::string quantization;  // llama.cpp's name of the file type, e.g. "Q4_0", "all F32"
  uint64_t file_size_bytes = 0;
  std::string sha256;           // hex, lower case
  uint64_t context_length = 0;  // the context the model was trained with
  uint64_t layer_count = 0;
  uint64_t embedding_length = 0;
  uint64_t head_count = 0;
  uint64_t head_count_kv = 0;
  uint64_t vocab_size = 0;
  bool has_chat_template = false;
};

// Builds the identity from a parsed header. `sha256` is supplied by the caller because hashing
// a multi-gigabyte file is the expensive part and some callers already have it.
ModelIdentity identity_from_header(const std::string& path, uint64_t file_size,
                                   const GgufHeader& header, std::string sha256);

// Reads the header of `path`, hashes the file and returns its identity. Errors: kNotFound,
// kInvalidModel (see read_gguf_header).
Result<ModelIdentity> inspect_model(const std::string& path);

// Hex sha256 of a whole file, streamed in 1 MiB chunks.
Result<std::string> sha256_file(const std::string& path);

}  // namespace tandem::engine
