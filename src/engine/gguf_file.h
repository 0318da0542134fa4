#pragma once
// A bounds-checked reader of GGUF headers: metadata key/values and tensor descriptors, never
// tensor data. It runs before llama.cpp touches a file so that a missing, foreign, truncated
// or corrupt file gets a precise error instead of a crash or an opaque loader failure, and so
// that the model's identity can be read without loading its weights.
//
// The parser trusts nothing in the file: every length is checked against the bytes that
// remain, so hostile input costs at most O(file size) time and no large allocations.

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/result.h"

namespace tandem::engine {

// A metadata value. Arrays keep only their element type and length: the tokenizer's arrays
// can hold hundreds of thousands of entries that nothing in Tandem needs.
struct GgufArraySummary {
  uint32_t element_type = 0;
  uint64_t length = 0;
};
using GgufValue = std::variant<uint64_t, int64_t, double, bool, std::string, GgufArraySummary>;

struct GgufTensorInfo {
  std::string name;
  uint32_t ggml_type = 0;
  std::vector<uint64_t> dims;
  uint64_t offset = 0;  // relative to the start of the tensor data section
  uint64_t size_bytes = 0;
};

struct GgufHeader {
  uint32_t version = 0;
  std::map<std::string, GgufValue> metadata;
  std::vector<GgufTensorInfo> tensors;
  uint64_t data_offset = 0;         // absolute offset of the tensor data section
  uint64_t required_file_size = 0;  // bytes the file must have to hold every tensor

  std::optional<std::string> get_string(const std::string& key) const;
  // Any integer-typed value that fits in uint64_t.
  std::optional<uint64_t> get_uint(const std::string& key) const;
};

// Parses the header from `in`, which holds `stream_size` bytes in all. `label` names the
// source in error messages. Fails with kInvalidModel for anything that is not a complete,
// consistent GGUF file (wrong magic, unknown version or type, lengths past the end, tensor
// data past the end of the stream).
Result<GgufHeader> parse_gguf_header(std::istream& in, uint64_t stream_size,
                                     const std::string& label);

// Opens `path` and parses it; kNotFound when the file is missing or unreadable.
Result<GgufHeader> read_gguf_header(const std::string& path);

}  // namespace tandem::engine
