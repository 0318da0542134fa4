#include "engine/quantize.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

#include <ggml.h>
#include <llama.h>

#include "engine/gguf_file.h"
#include "engine/llama_backend.h"

namespace tandem::engine {
namespace {

struct QuantizationType {
  const char* name;
  llama_ftype ftype;
};

// The file types people deploy; llama.cpp's rarer ones (IQ*, TQ*, MXFP4) need an importance
// matrix or a particular architecture to be worth anything, so they are left out.
constexpr std::array<QuantizationType, 12> kTypes = {{
    {"F16", LLAMA_FTYPE_MOSTLY_F16},
    {"BF16", LLAMA_FTYPE_MOSTLY_BF16},
    {"Q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},
    {"Q6_K", LLAMA_FTYPE_MOSTLY_Q6_K},
    {"Q5_K_M", LLAMA_FTYPE_MOSTLY_Q5_K_M},
    {"Q5_K_S", LLAMA_FTYPE_MOSTLY_Q5_K_S},
    {"Q5_0", LLAMA_FTYPE_MOSTLY_Q5_0},
    {"Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M},
    {"Q4_K_S", LLAMA_FTYPE_MOSTLY_Q4_K_S},
    {"Q4_0", LLAMA_FTYPE_MOSTLY_Q4_0},
    {"Q3_K_M", LLAMA_FTYPE_MOSTLY_Q3_K_M},
    {"Q2_K", LLAMA_FTYPE_MOSTLY_Q2_K},
}};

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

Result<llama_ftype> parse_type(const std::string& name) {
  const std::string wanted = upper(name);
  for (const auto& type : kTypes) {
    if (wanted == type.name) {
      return type.ftype;
    }
  }
  std::string known;
  for (const auto& type : kTypes) {
    known += (known.empty() ? "" : ", ") + std::string(type.name);
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "unknown quantization type '" + name + "'; expected one of " + known);
}

// llama.cpp refuses to requantize by default, with a log line nobody sees; say why up front.
Status check_full_precision(const std::string& path, const GgufHeader& header) {
  for (const auto& tensor : header.tensors) {
    const auto type = static_cast<ggml_type>(tensor.ggml_type);
    if (type != GGML_TYPE_F32 && type != GGML_TYPE_F16 && type != GGML_TYPE_BF16) {
      return make_error(ErrorCode::kInvalidArgument,
                        "'" + path + "' is already quantized (tensor '" + tensor.name + "' is " +
                            ggml_type_name(type) +
                            "); derive quantized models from the F32, F16 or BF16 original, "
                            "since quantizing twice compounds the error");
    }
  }
  return {};
}

// llama.cpp's quantizer logs "[  12/ 291]  blk.0.attn_q.weight - [...], type = f32, " as it
// starts each tensor, and reports its progress nowhere else. The tensor's number, or nullopt for
// any other text: a log that changes shape leaves the bar where it is, the work unharmed.
std::optional<size_t> tensor_started(std::string_view text) {
  if (text.empty() || text.front() != '[') {
    return std::nullopt;
  }
  int index = 0;
  int total = 0;
  const std::string head(text.substr(0, 32));
  if (std::sscanf(head.c_str(), "[%d/%d]", &index, &total) != 2 || index < 1 || total < index) {
    return std::nullopt;
  }
  return static_cast<size_t>(index);
}

// A file beside the output that is removed unless it was renamed into place.
class TemporaryOutput {
 public:
  explicit TemporaryOutput(std::string final_path)
      : final_path_(std::move(final_path)),
        path_(final_path_ + ".tmp." + std::to_string(::getpid())) {}
  ~TemporaryOutput() {
    if (!committed_) {
      std::remove(path_.c_str());
    }
  }
  TemporaryOutput(const TemporaryOutput&) = delete;
  TemporaryOutput& operator=(const TemporaryOutput&) = delete;

  const std::string& path() const { return path_; }

  // Creates the file now, so that an unwritable destination is reported before the work.
  Status create() {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
      return make_error(ErrorCode::kNotFound, "cannot write '" + final_path_ + "': cannot create " +
                                                  path_ + ": " + errno_message(errno));
    }
    ::close(fd);
    return {};
  }

  // Flushes the data to disk before the rename, so a crash cannot leave a renamed empty file.
  Status commit() {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      const std::string reason = errno_message(errno);
      if (fd >= 0) {
        ::close(fd);
      }
      return make_error(ErrorCode::kInternal, "cannot flush " + path_ + ": " + reason);
    }
    ::close(fd);
    if (std::rename(path_.c_str(), final_path_.c_str()) != 0) {
      return make_error(ErrorCode::kInternal,
                        "cannot replace '" + final_path_ + "': " + errno_message(errno));
    }
    committed_ = true;
    return {};
  }

 private:
  std::string final_path_;
  std::string path_;
  bool committed_ = false;
};

}  // namespace

std::vector<std::string> quantization_type_names() {
  std::vector<std::string> names;
  names.reserve(kTypes.size());
  for (const auto& type : kTypes) {
    names.emplace_back(type.name);
  }
  return names;
}

Result<ModelIdentity> quantize_model(const QuantizeOptions& options, Progress& progress) {
  auto ftype = parse_type(options.type);
  if (!ftype) {
    return ftype.error();
  }
  if (options.threads < 0) {
    return make_error(ErrorCode::kInvalidArgument, "threads must be >= 0 (0: automatic)");
  }
  auto header = read_gguf_header(options.input_path);
  if (!header) {
    return header.error();
  }
  if (auto full = check_full_precision(options.input_path, header.value()); !full) {
    return full.error();
  }
  std::error_code ec;
  if (std::filesystem::is_directory(options.output_path, ec)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "output '" + options.output_path + "' is a directory; name a file");
  }

  TemporaryOutput output(options.output_path);
  if (auto created = output.create(); !created) {
    return created.error();
  }
  ensure_llama_backend();
  llama_model_quantize_params params = llama_model_quantize_default_params();
  params.ftype = ftype.value();
  params.nthread = options.threads;
  const size_t tensors = header->tensors.size();
  progress.phase("quantizing tensors", tensors);
  int status = 0;
  {
    LlamaLogObserver observer([&progress](std::string_view text) {
      if (const auto started = tensor_started(text)) {
        progress.update(*started - 1);
      }
    });
    status = llama_model_quantize(options.input_path.c_str(), output.path().c_str(), &params);
  }
  if (status != 0) {
    return make_error(ErrorCode::kInvalidModel,
                      "llama.cpp could not quantize '" + options.input_path + "' to " +
                          upper(options.type) +
                          " (unsupported architecture, corrupt tensors or a failed write; run "
                          "with --verbose for llama.cpp's own message)");
  }
  progress.update(tensors);
  progress.phase("writing and hashing the output", 0);
  if (auto committed = output.commit(); !committed) {
    return committed.error();
  }
  return inspect_model(options.output_path);
}

}  // namespace tandem::engine
