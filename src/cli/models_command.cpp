// `tandem models inspect`: a model's identity from its GGUF header, without loading weights.

#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "engine/engine.h"

namespace tandem::cli {
namespace {

struct InspectFlags {
  std::string model;
  bool json = false;
};

std::string human_bytes(uint64_t bytes) {
  char text[32];
  if (bytes >= (1ULL << 30)) {
    std::snprintf(text, sizeof(text), "%.2f GiB", static_cast<double>(bytes) / (1ULL << 30));
  } else if (bytes >= (1ULL << 20)) {
    std::snprintf(text, sizeof(text), "%.2f MiB", static_cast<double>(bytes) / (1ULL << 20));
  } else {
    std::snprintf(text, sizeof(text), "%llu bytes", static_cast<unsigned long long>(bytes));
  }
  return text;
}

int inspect(const InspectFlags& flags) {
  auto identity = engine::inspect_model(flags.model);
  if (!identity) {
    std::cerr << "tandem models inspect: " << identity.error().message << "\n";
    return 1;
  }
  const auto& id = identity.value();
  if (flags.json) {
    std::cout << to_json(id).dump(2) << "\n";
    return 0;
  }
  std::printf("name:            %s\n", id.name.c_str());
  std::printf("architecture:    %s\n", id.architecture.c_str());
  std::printf("parameters:      %llu\n", static_cast<unsigned long long>(id.parameter_count));
  std::printf("quantization:    %s\n", id.quantization.c_str());
  std::printf("file size:       %s (%llu bytes)\n", human_bytes(id.file_size_bytes).c_str(),
              static_cast<unsigned long long>(id.file_size_bytes));
  std::printf("sha256:          %s\n", id.sha256.c_str());
  std::printf("context length:  %llu\n", static_cast<unsigned long long>(id.context_length));
  std::printf("layers:          %llu\n", static_cast<unsigned long long>(id.layer_count));
  std::printf("embedding:       %llu\n", static_cast<unsigned long long>(id.embedding_length));
  std::printf("heads (kv):      %llu (%llu)\n", static_cast<unsigned long long>(id.head_count),
              static_cast<unsigned long long>(id.head_count_kv));
  std::printf("vocabulary:      %llu\n", static_cast<unsigned long long>(id.vocab_size));
  std::printf("chat template:   %s\n", id.has_chat_template ? "model" : "none (plain fallback)");
  return 0;
}

}  // namespace

std::function<int()> add_models_command(CLI::App& app) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* models = app.add_subcommand("models", "Work with local GGUF models");
  models->require_subcommand(1);
  CLI::App* cmd = models->add_subcommand(
      "inspect",
      "Print a model's identity: name, architecture, parameters, quantization, size, "
      "sha256 (its version) and context length");
  cmd->add_option("model", flags->model, "GGUF model file")->required();
  cmd->add_flag("--json", flags->json, "Print one JSON object");
  auto quantize = add_models_quantize_command(*models);
  return [flags, cmd, quantize] { return cmd->parsed() ? inspect(*flags) : quantize(); };
}

}  // namespace tandem::cli
