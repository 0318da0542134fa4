// A model file's bytes through the GGUF header reader that runs before llama.cpp sees a file.
// A header it accepts must be internally consistent (every tensor's size, recomputed here with
// overflow checks, and its data inside the file); anything else is a kInvalidModel error.

#include <sstream>
#include <string>

#include <ggml.h>

#include "engine/gguf_file.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/property_check.h"

namespace tandem::fuzz {
namespace {

constexpr const char* kLabel = "fuzz.gguf";

// The tensor's bytes from its shape, or nullopt when they do not fit in 64 bits.
std::optional<uint64_t> expected_size(const engine::GgufTensorInfo& tensor) {
  for (const uint64_t dim : tensor.dims) {
    if (dim == 0) {
      return 0;  // no elements, however long the other dimensions
    }
  }
  const auto type = static_cast<ggml_type>(tensor.ggml_type);
  const auto block = static_cast<uint64_t>(ggml_blck_size(type));
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(tensor.dims[0] / block, ggml_type_size(type), &bytes)) {
    return std::nullopt;
  }
  for (size_t i = 1; i < tensor.dims.size(); ++i) {
    if (__builtin_mul_overflow(bytes, tensor.dims[i], &bytes)) {
      return std::nullopt;
    }
  }
  return bytes;
}

void check_header(const engine::GgufHeader& header, uint64_t file_size) {
  FUZZ_CHECK(header.version == 2 || header.version == 3);
  const uint64_t alignment = header.get_uint("general.alignment").value_or(32);
  FUZZ_CHECK(alignment != 0 && (alignment & (alignment - 1)) == 0);
  FUZZ_CHECK(header.data_offset % alignment == 0);
  FUZZ_CHECK(header.data_offset >= 24);  // magic, version and the two counts come first
  FUZZ_CHECK(header.required_file_size <= file_size);
  for (const auto& tensor : header.tensors) {
    FUZZ_CHECK(!tensor.dims.empty() && tensor.dims.size() <= 4);
    FUZZ_CHECK(tensor.ggml_type < GGML_TYPE_COUNT);
    const auto size = expected_size(tensor);
    FUZZ_CHECK_MSG(size.has_value() && *size == tensor.size_bytes,
                   "tensor '" + tensor.name + "' declared " + std::to_string(tensor.size_bytes) +
                       " bytes, its shape needs " + (size ? std::to_string(*size) : "> 2^64"));
    FUZZ_CHECK(tensor.offset % alignment == 0);
    FUZZ_CHECK(tensor.offset <= header.required_file_size - header.data_offset);
    FUZZ_CHECK(tensor.size_bytes <= header.required_file_size - header.data_offset - tensor.offset);
  }
}

}  // namespace

void fuzz_gguf_header(const uint8_t* data, size_t size) {
  std::istringstream in{std::string(as_text(data, size))};
  const auto header = engine::parse_gguf_header(in, size, kLabel);
  if (header) {
    check_header(header.value(), size);
  } else {
    FUZZ_CHECK(header.error().code == ErrorCode::kInvalidModel);
    FUZZ_CHECK(header.error().message.find(kLabel) != std::string::npos);
  }
}

}  // namespace tandem::fuzz
