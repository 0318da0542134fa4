// `tandem run`: one completion from a local GGUF model, streamed to stdout or as JSON.

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "engine/generate.h"
#include "engine/llama_backend.h"

namespace tandem::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int /*signal*/) {
  g_interrupted.store(true);
}

struct RunFlags {
  std::string model;
  std::string prompt;
  bool chat = false;
  engine::SamplingParams sampling;
  std::optional<uint32_t> seed;
  int threads = 0;
  uint32_t context = 0;
  bool json = false;
  bool stats = false;
  bool verbose = false;
};

int run(const RunFlags& flags) {
  engine::set_llama_log_level(flags.verbose ? engine::LlamaLogLevel::kVerbose
                                            : engine::LlamaLogLevel::kQuiet);
  engine::EngineOptions options;
  options.model_path = flags.model;
  options.threads = flags.threads;
  options.context_per_sequence = flags.context;
  options.max_sequences = 1;
  auto opened = engine::Engine::open(options);
  if (!opened) {
    std::cerr << "tandem run: " << opened.error().message << "\n";
    return 1;
  }
  engine::Engine& eng = *opened.value();

  engine::GenerationRequest request;
  request.sampling = flags.sampling;
  request.sampling.seed = flags.seed;
  if (flags.chat) {
    auto rendered = eng.chat_template().render({{"user", flags.prompt}});
    if (!rendered) {
      std::cerr << "tandem run: " << rendered.error().message << "\n";
      return 1;
    }
    request.prompt = std::move(rendered).value();
    request.parse_special = eng.chat_template().needs_special_parsing();
  } else {
    request.prompt = flags.prompt;
  }

  std::function<void(const engine::TokenEvent&)> stream;
  if (!flags.json) {
    stream = [](const engine::TokenEvent& event) {
      std::fwrite(event.text.data(), 1, event.text.size(), stdout);
      std::fflush(stdout);
    };
  }
  std::signal(SIGINT, on_interrupt);
  auto result = engine::generate(eng, std::move(request), stream, &g_interrupted);
  std::signal(SIGINT, SIG_DFL);
  if (!result) {
    std::cerr << "tandem run: " << result.error().message << "\n";
    return 1;
  }
  const auto& summary = result->summary;
  if (flags.json) {
    std::cout << to_json(result.value(), eng.model())
                     .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << "\n";
  }
  if (flags.stats) {
    std::fprintf(stderr,
                 "[%s] %d prompt + %d completion tokens, finish %s, TTFT %.1f ms, "
                 "%.1f tokens/s, mean logprob %.3f, mean entropy %.3f\n",
                 eng.model().name.c_str(), summary.prompt_tokens, summary.completion_tokens,
                 engine::finish_reason_name(summary.finish_reason), summary.time_to_first_token_ms,
                 summary.decode_tokens_per_second, summary.mean_logprob, summary.mean_entropy);
  }
  return 0;
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app) {
  auto flags = std::make_shared<RunFlags>();
  flags->sampling.top_logprobs = 5;
  CLI::App* cmd = app.add_subcommand("run", "Generate a completion with a local GGUF model");
  cmd->add_option("-m,--model", flags->model, "GGUF model file")->required();
  cmd->add_option("-p,--prompt", flags->prompt, "Prompt text")->required();
  cmd->add_flag("--chat", flags->chat,
                "Send the prompt as a chat user message through the model's chat template "
                "(or Tandem's plain template)");
  cmd->add_option("-n,--max-tokens", flags->sampling.max_tokens, "Tokens to generate at most")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--temp", flags->sampling.temperature, "Sampling temperature; 0 is greedy")
      ->capture_default_str()
      ->check(CLI::Range(0.0F, 100.0F));
  cmd->add_option("--top-p", flags->sampling.top_p, "Nucleus sampling mass (1 disables)")
      ->capture_default_str();
  cmd->add_option("--top-k", flags->sampling.top_k, "Keep the k most likely tokens (0 disables)")
      ->capture_default_str();
  cmd->add_option("--min-p", flags->sampling.min_p,
                  "Drop tokens below this fraction of the best one's probability (0 disables)")
      ->capture_default_str();
  cmd->add_option("--repeat-penalty", flags->sampling.repeat_penalty,
                  "Penalty on recently generated tokens (1 disables)")
      ->capture_default_str();
  cmd->add_option("--repeat-last-n", flags->sampling.repeat_last_n,
                  "How many recent tokens the repeat penalty looks at")
      ->capture_default_str();
  cmd->add_option("--frequency-penalty", flags->sampling.frequency_penalty,
                  "OpenAI's: subtracted once per earlier use of a token in the answer (0 disables)")
      ->capture_default_str()
      ->check(CLI::Range(-2.0F, 2.0F));
  cmd->add_option("--presence-penalty", flags->sampling.presence_penalty,
                  "OpenAI's: subtracted once from a token already in the answer (0 disables)")
      ->capture_default_str()
      ->check(CLI::Range(-2.0F, 2.0F));
  cmd->add_flag("--ignore-eos", flags->sampling.ignore_eos,
                "Never stop at an end-of-text token: generate exactly --max-tokens");
  cmd->add_option("--seed", flags->seed, "Random seed; the same seed reproduces the same sample");
  cmd->add_option("--stop", flags->sampling.stop,
                  "Stop before this string (repeatable); it is not printed");
  cmd->add_option("--top-logprobs", flags->sampling.top_logprobs,
                  "Alternatives listed per token in --json output")
      ->capture_default_str()
      ->check(CLI::Range(0, engine::kMaxTopLogprobs));
  cmd->add_option("-t,--threads", flags->threads, "CPU threads (0: one per hardware thread)")
      ->capture_default_str();
  cmd->add_option("-c,--ctx", flags->context,
                  "Context size in tokens (0: the model's, at most 4096)")
      ->capture_default_str();
  cmd->add_flag("--json", flags->json,
                "Print one JSON object: text, finish_reason, usage, confidence, timings, model, "
                "and tokens with logprob, entropy and top alternatives");
  cmd->add_flag("--stats", flags->stats, "Print timing and confidence to stderr");
  cmd->add_flag("-v,--verbose", flags->verbose, "Show llama.cpp's own log");
  return [flags] { return run(*flags); };
}

}  // namespace tandem::cli
