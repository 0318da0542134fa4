#include "engine/model_identity.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include <openssl/evp.h>

#include <llama.h>

namespace tandem::engine {
namespace {

std::string hex(const unsigned char* bytes, unsigned int n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(static_cast<size_t>(n) * 2);
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

uint64_t element_count(const GgufTensorInfo& tensor) {
  uint64_t n = 1;
  for (uint64_t dim : tensor.dims) {
    n *= dim;
  }
  return n;
}

}  // namespace

ModelIdentity identity_from_header(const std::string& path, uint64_t file_size,
                                   const GgufHeader& header, std::string sha256) {
  ModelIdentity id;
  id.path = path;
  id.file_size_bytes = file_size;
  id.sha256 = std::move(sha256);
  id.architecture = header.get_string("general.architecture").value_or("unknown");
  id.version = header.get_string("general.version").value_or("");
  id.name = header.get_string("general.name").value_or(std::filesystem::path(path).stem().string());
  const std::string& arch = id.architecture;
  id.context_length = header.get_uint(arch + ".context_length").value_or(0);
  id.layer_count = header.get_uint(arch + ".block_count").value_or(0);
  id.embedding_length = header.get_uint(arch + ".embedding_length").value_or(0);
  id.head_count = header.get_uint(arch + ".attention.head_count").value_or(0);
  id.head_count_kv = header.get_uint(arch + ".attention.head_count_kv").value_or(id.head_count);
  auto tokens = header.metadata.find("tokenizer.ggml.tokens");
  if (tokens != header.metadata.end()) {
    if (const auto* array = std::get_if<GgufArraySummary>(&tokens->second)) {
      id.vocab_size = array->length;
    }
  }
  id.has_chat_template = header.get_string("tokenizer.chat_template").has_value();
  for (const auto& tensor : header.tensors) {
    id.parameter_count += element_count(tensor);
  }
  // general.file_type is llama.cpp's llama_ftype; files written without it are F32 or F16
  // throughout, which llama.cpp itself reports as "all F32".
  const uint64_t file_type = header.get_uint("general.file_type").value_or(LLAMA_FTYPE_ALL_F32);
  id.quantization = llama_ftype_name(static_cast<llama_ftype>(file_type));
  return id;
}

Result<std::string> sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(ErrorCode::kNotFound,
                      "cannot open '" + path + "' to hash it: " + errno_message(errno));
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return make_error(ErrorCode::kInternal, "OpenSSL could not start a sha256 digest");
  }
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto n = in.gcount();
    if (n > 0 && EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(n)) != 1) {
      return make_error(ErrorCode::kInternal, "OpenSSL failed while hashing '" + path + "'");
    }
  }
  if (in.bad()) {
    return make_error(ErrorCode::kInternal, "read error while hashing '" + path + "'");
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1) {
    return make_error(ErrorCode::kInternal, "OpenSSL could not finish the sha256 digest");
  }
  return hex(digest, length);
}

Result<ModelIdentity> inspect_model(const std::string& path) {
  auto header = read_gguf_header(path);
  if (!header) {
    return header.error();
  }
  auto digest = sha256_file(path);
  if (!digest) {
    return digest.error();
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return identity_from_header(path, ec ? 0 : size, header.value(), std::move(digest).value());
}

}  // namespace tandem::engine
