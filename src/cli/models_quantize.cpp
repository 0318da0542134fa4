// `tandem models quantize`: derive a quantized edge model from a full-precision GGUF.

#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/terminal_progress.h"
#include "engine/llama_backend.h"
#include "engine/quantize.h"

namespace tandem::cli {
namespace {

struct QuantizeFlags {
  engine::QuantizeOptions options;
  bool json = false;
  bool verbose = false;
  bool no_progress = false;
};

int quantize(const QuantizeFlags& flags) {
  engine::set_llama_log_level(flags.verbose ? engine::LlamaLogLevel::kVerbose
                                            : engine::LlamaLogLevel::kQuiet);
  CommandProgress progress(
      {.json = flags.json, .no_progress = flags.no_progress, .quiet_log = !flags.verbose});
  auto written = engine::quantize_model(flags.options, progress.progress());
  progress.finish();
  if (!written) {
    std::cerr << "tandem models quantize: " << written.error().message << "\n";
    return 1;
  }
  const auto& id = written.value();
  if (flags.json) {
    std::cout << to_json(id).dump(2) << "\n";
    return 0;
  }
  std::printf("wrote %s: %s, %.2f MiB, sha256 %s\n", id.path.c_str(), id.quantization.c_str(),
              static_cast<double>(id.file_size_bytes) / (1 << 20), id.sha256.c_str());
  return 0;
}

}  // namespace

std::function<int()> add_models_quantize_command(CLI::App& models) {
  auto flags = std::make_shared<QuantizeFlags>();
  std::string types;
  for (const auto& name : engine::quantization_type_names()) {
    types += (types.empty() ? "" : ", ") + name;
  }
  CLI::App* cmd = models.add_subcommand(
      "quantize",
      "Derive a quantized model from an F32/F16/BF16 GGUF through llama.cpp; then measure what "
      "it lost with `tandem drift`");
  cmd->add_option("input", flags->options.input_path, "Full-precision GGUF model")->required();
  cmd->add_option("output", flags->options.output_path,
                  "GGUF file to write (replaced atomically if it exists)")
      ->required();
  cmd->add_option("--type", flags->options.type, "Quantization type: " + types)->required();
  cmd->add_option("-t,--threads", flags->options.threads,
                  "CPU threads (0: one per hardware thread)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", flags->json, "Print the written model's identity as one JSON object");
  cmd->add_flag("-v,--verbose", flags->verbose, "Show llama.cpp's own log (instead of progress)");
  add_no_progress_flag(*cmd, flags->no_progress);
  return [flags] { return quantize(*flags); };
}

}  // namespace tandem::cli
