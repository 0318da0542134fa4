#include "engine/gguf_file.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include <sys/stat.h>

#include <ggml.h>

namespace tandem::engine {
namespace {

constexpr std::array<char, 4> kMagic = {'G', 'G', 'U', 'F'};
constexpr uint64_t kDefaultAlignment = 32;
// Far above any real model (llama.cpp caps at 1 M keys/tensors too) and low enough that the
// counts cannot drive the parser into pathological work before the byte checks trip.
constexpr uint64_t kMaxEntries = 1u << 20;
constexpr uint32_t kMaxDims = 4;

enum GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

uint64_t scalar_size(uint32_t type) {
  switch (type) {
    case kUint8:
    case kInt8:
    case kBool:
      return 1;
    case kUint16:
    case kInt16:
      return 2;
    case kUint32:
    case kInt32:
    case kFloat32:
      return 4;
    case kUint64:
    case kInt64:
    case kFloat64:
      return 8;
    default:
      return 0;
  }
}

// Sequential reader that knows how many bytes remain and turns every shortfall into an error.
class Reader {
 public:
  Reader(std::istream& in, uint64_t size, const std::string& label)
      : in_(in), size_(size), label_(label) {}

  uint64_t position() const { return position_; }
  uint64_t remaining() const { return size_ - position_; }

  Status read_bytes(void* out, uint64_t n, const char* what) {
    if (n > remaining()) {
      return truncated(what);
    }
    in_.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
    if (!in_) {
      return truncated(what);
    }
    position_ += n;
    return {};
  }

  template <typename T>
  Status read(T& out, const char* what) {
    return read_bytes(&out, sizeof(T), what);
  }

  Status skip(uint64_t n, const char* what) {
    if (n > remaining()) {
      return truncated(what);
    }
    in_.seekg(static_cast<std::streamoff>(n), std::ios::cur);
    if (!in_) {
      return truncated(what);
    }
    position_ += n;
    return {};
  }

  Status read_string(std::string& out, const char* what) {
    uint64_t length = 0;
    if (auto s = read(length, what); !s) {
      return s;
    }
    if (length > remaining()) {
      return corrupt(std::string(what) + " declares a length of " + std::to_string(length) +
                     " bytes, more than the " + std::to_string(remaining()) + " left in the file");
    }
    out.resize(length);
    return read_bytes(out.data(), length, what);
  }

  Error corrupt(const std::string& detail) const {
    return make_error(ErrorCode::kInvalidModel, "'" + label_ +
                                                    "' is not a valid GGUF file: " + detail +
                                                    " (at byte " + std::to_string(position_) + ")");
  }

  Error truncated(const char* what) const {
    return make_error(ErrorCode::kInvalidModel, "'" + label_ + "' is truncated: it ends at byte " +
                                                    std::to_string(size_) + " while reading " +
                                                    what + " (was the download interrupted?)");
  }

 private:
  std::istream& in_;
  uint64_t size_;
  uint64_t position_ = 0;
  const std::string& label_;
};

Status skip_array_elements(Reader& reader, uint32_t type, uint64_t length) {
  if (type == kString) {
    std::string ignored;
    for (uint64_t i = 0; i < length; ++i) {
      uint64_t n = 0;
      if (auto s = reader.read(n, "a string array element"); !s) {
        return s;
      }
      if (auto s = reader.skip(n, "a string array element"); !s) {
        return s;
      }
    }
    return {};
  }
  const uint64_t element = scalar_size(type);
  if (element == 0) {
    return reader.corrupt("array of unsupported element type " + std::to_string(type));
  }
  if (length > reader.remaining() / element) {
    return reader.truncated("an array");
  }
  return reader.skip(length * element, "an array");
}

template <typename T>
Result<GgufValue> read_scalar_as(Reader& reader) {
  T raw{};
  if (auto s = reader.read(raw, "a metadata value"); !s) {
    return s.error();
  }
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return GgufValue{static_cast<double>(raw)};
  } else if constexpr (std::is_signed_v<T>) {
    return GgufValue{static_cast<int64_t>(raw)};
  } else {
    return GgufValue{static_cast<uint64_t>(raw)};
  }
}

Result<GgufValue> read_value(Reader& reader, uint32_t type) {
  switch (type) {
    case kUint8:
      return read_scalar_as<uint8_t>(reader);
    case kInt8:
      return read_scalar_as<int8_t>(reader);
    case kUint16:
      return read_scalar_as<uint16_t>(reader);
    case kInt16:
      return read_scalar_as<int16_t>(reader);
    case kUint32:
      return read_scalar_as<uint32_t>(reader);
    case kInt32:
      return read_scalar_as<int32_t>(reader);
    case kUint64:
      return read_scalar_as<uint64_t>(reader);
    case kInt64:
      return read_scalar_as<int64_t>(reader);
    case kFloat32:
      return read_scalar_as<float>(reader);
    case kFloat64:
      return read_scalar_as<double>(reader);
    case kBool: {
      uint8_t raw = 0;
      if (auto s = reader.read(raw, "a boolean value"); !s) {
        return s.error();
      }
      if (raw > 1) {
        return reader.corrupt("boolean value " + std::to_string(raw));
      }
      return GgufValue{raw == 1};
    }
    case kString: {
      std::string text;
      if (auto s = reader.read_string(text, "a string value"); !s) {
        return s.error();
      }
      return GgufValue{std::move(text)};
    }
    case kArray: {
      GgufArraySummary summary;
      if (auto s = reader.read(summary.element_type, "an array type"); !s) {
        return s.error();
      }
      if (auto s = reader.read(summary.length, "an array length"); !s) {
        return s.error();
      }
      if (summary.element_type == kArray) {
        return reader.corrupt("nested arrays are not part of GGUF");
      }
      if (auto s = skip_array_elements(reader, summary.element_type, summary.length); !s) {
        return s.error();
      }
      return GgufValue{summary};
    }
    default:
      return reader.corrupt("unknown metadata type " + std::to_string(type));
  }
}

// Size in bytes of a tensor, or an error for unknown types and impossible shapes.
Result<uint64_t> tensor_size(Reader& reader, const GgufTensorInfo& tensor) {
  if (tensor.ggml_type >= GGML_TYPE_COUNT) {
    return reader.corrupt("tensor '" + tensor.name + "' has unknown type " +
                          std::to_string(tensor.ggml_type));
  }
  const auto type = static_cast<ggml_type>(tensor.ggml_type);
  const uint64_t block = ggml_blck_size(type);
  const uint64_t type_size = ggml_type_size(type);
  if (block == 0 || type_size == 0) {
    return reader.corrupt("tensor '" + tensor.name + "' uses removed type " +
                          std::to_string(tensor.ggml_type));
  }
  if (tensor.dims.empty() || tensor.dims[0] % block != 0) {
    return reader.corrupt("tensor '" + tensor.name + "' has a row length that is not a " +
                          "multiple of its type's block size");
  }
  uint64_t elements_rows = tensor.dims[0] / block;
  if (elements_rows > std::numeric_limits<uint64_t>::max() / type_size) {
    return reader.corrupt("tensor '" + tensor.name + "' has an impossible size");
  }
  uint64_t bytes = elements_rows * type_size;
  for (size_t i = 1; i < tensor.dims.size(); ++i) {
    if (tensor.dims[i] != 0 && bytes > std::numeric_limits<uint64_t>::max() / tensor.dims[i]) {
      return reader.corrupt("tensor '" + tensor.name + "' has an impossible size");
    }
    bytes *= tensor.dims[i];
  }
  return bytes;
}

// The `kv_count` metadata pairs; a key seen twice is corrupt.
Status read_metadata(Reader& reader, uint64_t kv_count, GgufHeader& header) {
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key;
    if (auto s = reader.read_string(key, "a metadata key"); !s) {
      return s.error();
    }
    uint32_t type = 0;
    if (auto s = reader.read(type, "a metadata type"); !s) {
      return s.error();
    }
    auto value = read_value(reader, type);
    if (!value) {
      return value.error();
    }
    if (!header.metadata.emplace(key, std::move(value).value()).second) {
      return reader.corrupt("duplicate metadata key '" + key + "'");
    }
  }
  return {};
}

// One tensor's name, shape, type and offset, and its size from them.
Result<GgufTensorInfo> read_tensor_info(Reader& reader) {
  GgufTensorInfo tensor;
  if (auto s = reader.read_string(tensor.name, "a tensor name"); !s) {
    return s.error();
  }
  uint32_t n_dims = 0;
  if (auto s = reader.read(n_dims, "a tensor's dimension count"); !s) {
    return s.error();
  }
  if (n_dims == 0 || n_dims > kMaxDims) {
    return reader.corrupt("tensor '" + tensor.name + "' has " + std::to_string(n_dims) +
                          " dimensions (1 to 4 allowed)");
  }
  tensor.dims.resize(n_dims);
  for (auto& dim : tensor.dims) {
    if (auto s = reader.read(dim, "a tensor dimension"); !s) {
      return s.error();
    }
  }
  if (auto s = reader.read(tensor.ggml_type, "a tensor type"); !s) {
    return s.error();
  }
  if (auto s = reader.read(tensor.offset, "a tensor offset"); !s) {
    return s.error();
  }
  auto size = tensor_size(reader, tensor);
  if (!size) {
    return size.error();
  }
  tensor.size_bytes = size.value();
  return tensor;
}

// Where the tensor data starts (after the header, aligned) and the file size the tensors need,
// which the stream must have: a truncated download is caught here, before llama.cpp maps it.
Status place_tensor_data(const Reader& reader, uint64_t stream_size, const std::string& label,
                         GgufHeader& header) {
  const uint64_t alignment = header.get_uint("general.alignment").value_or(kDefaultAlignment);
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return reader.corrupt("general.alignment " + std::to_string(alignment) +
                          " is not a power of two");
  }
  header.data_offset = (reader.position() + alignment - 1) / alignment * alignment;

  uint64_t data_end = header.data_offset;
  for (const auto& tensor : header.tensors) {
    if (tensor.offset % alignment != 0) {
      return reader.corrupt("tensor '" + tensor.name + "' is not aligned");
    }
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    if (tensor.offset > max - header.data_offset ||
        tensor.size_bytes > max - header.data_offset - tensor.offset) {
      return reader.corrupt("tensor '" + tensor.name + "' lies past any possible file end");
    }
    data_end = std::max(data_end, header.data_offset + tensor.offset + tensor.size_bytes);
  }
  header.required_file_size = data_end;
  if (data_end > stream_size) {
    return make_error(ErrorCode::kInvalidModel,
                      "'" + label + "' is truncated: it has " + std::to_string(stream_size) +
                          " bytes but its tensors need " + std::to_string(data_end) +
                          " (was the download interrupted?)");
  }
  return {};
}

}  // namespace

std::optional<std::string> GgufHeader::get_string(const std::string& key) const {
  auto it = metadata.find(key);
  if (it == metadata.end()) {
    return std::nullopt;
  }
  if (const auto* text = std::get_if<std::string>(&it->second)) {
    return *text;
  }
  return std::nullopt;
}

std::optional<uint64_t> GgufHeader::get_uint(const std::string& key) const {
  auto it = metadata.find(key);
  if (it == metadata.end()) {
    return std::nullopt;
  }
  if (const auto* u = std::get_if<uint64_t>(&it->second)) {
    return *u;
  }
  if (const auto* i = std::get_if<int64_t>(&it->second); i && *i >= 0) {
    return static_cast<uint64_t>(*i);
  }
  return std::nullopt;
}

Result<GgufHeader> parse_gguf_header(std::istream& in, uint64_t stream_size,
                                     const std::string& label) {
  Reader reader(in, stream_size, label);
  std::array<char, 4> magic{};
  if (stream_size < magic.size() || !reader.read_bytes(magic.data(), magic.size(), "the magic")) {
    return make_error(ErrorCode::kInvalidModel, "'" + label + "' is not a GGUF file: it has only " +
                                                    std::to_string(stream_size) + " bytes");
  }
  if (magic != kMagic) {
    return make_error(ErrorCode::kInvalidModel,
                      "'" + label + "' is not a GGUF file (it does not start with 'GGUF'); " +
                          "convert the model with llama.cpp's convert_hf_to_gguf.py");
  }

  GgufHeader header;
  uint64_t tensor_count = 0;
  uint64_t kv_count = 0;
  if (auto s = reader.read(header.version, "the version"); !s) {
    return s.error();
  }
  if (header.version < 2 || header.version > 3) {
    return reader.corrupt("unsupported GGUF version " + std::to_string(header.version) +
                          " (supported: 2 and 3)");
  }
  if (auto s = reader.read(tensor_count, "the tensor count"); !s) {
    return s.error();
  }
  if (auto s = reader.read(kv_count, "the metadata count"); !s) {
    return s.error();
  }
  if (tensor_count > kMaxEntries || kv_count > kMaxEntries) {
    return reader.corrupt("implausible counts: " + std::to_string(tensor_count) + " tensors, " +
                          std::to_string(kv_count) + " metadata keys");
  }

  if (auto s = read_metadata(reader, kv_count, header); !s) {
    return s.error();
  }

  header.tensors.reserve(tensor_count);
  for (uint64_t i = 0; i < tensor_count; ++i) {
    auto tensor = read_tensor_info(reader);
    if (!tensor) {
      return tensor.error();
    }
    header.tensors.push_back(std::move(tensor).value());
  }

  if (auto s = place_tensor_data(reader, stream_size, label, header); !s) {
    return s.error();
  }
  return header;
}

Result<GgufHeader> read_gguf_header(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return make_error(ErrorCode::kNotFound,
                      "model file '" + path + "' cannot be read: " + errno_message(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return make_error(ErrorCode::kNotFound, "model path '" + path + "' is not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(ErrorCode::kNotFound,
                      "model file '" + path + "' cannot be opened: " + errno_message(errno));
  }
  return parse_gguf_header(in, static_cast<uint64_t>(info.st_size), path);
}

}  // namespace tandem::engine
