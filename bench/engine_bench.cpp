// Measures the edge engine the way llama-bench measures llama.cpp, so the two can be compared
// in one run (bench/run_engine_bench.sh):
//   - decode: tokens/s generating `--gen` tokens after a short prompt (llama-bench's tg),
//     including everything Tandem adds per token: sampling, logprob/entropy/top-k signals,
//     UTF-8 and stop-string handling, the hop to the callback thread;
//   - time to first token for a `--prompt-tokens` prompt (llama-bench's pp, turned into ms);
//   - throughput of 4 concurrent generations against the same 4 run one after another.
// Prints one JSON object with the median of `--repetitions` runs of each.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <future>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/generate.h"

using namespace tandem::engine;
using tandem::Result;

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

GenerationRequest request_for(std::string prompt, int max_tokens) {
  GenerationRequest request;
  request.prompt = std::move(prompt);
  request.sampling.temperature = 0.0F;
  request.sampling.max_tokens = max_tokens;
  request.sampling.ignore_eos = true;
  return request;
}

Completion must(Result<Completion> result) {
  if (!result) {
    std::cerr << "engine_bench: " << result.error().message << "\n";
    std::exit(1);
  }
  return std::move(result).value();
}

// A prompt of exactly `tokens` tokens (BOS included), built from a repeated story phrase.
std::string prompt_of(Engine& engine, int tokens) {
  std::string prompt;
  const std::vector<std::string> words = {"Once", " upon",   " a",   " time",  " there", " was",
                                          " a",   " little", " dog", " named", " Max",   "."};
  size_t i = 0;
  while (true) {
    std::string next = prompt + words[i++ % words.size()];
    auto n = engine.count_tokens(next, true, false);
    if (!n || n.value() > tokens) {
      return prompt;
    }
    prompt = std::move(next);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Edge engine benchmark (compare with llama-bench)", "engine_bench"};
  std::string model;
  int threads = 2;
  int gen = 128;
  int prompt_tokens = 512;
  int repetitions = 5;
  int concurrent = 4;
  uint32_t context = 0;
  app.add_option("-m,--model", model, "GGUF model")->required();
  app.add_option("-t,--threads", threads, "CPU threads")->capture_default_str();
  app.add_option("-n,--gen", gen, "Tokens generated per decode run")->capture_default_str();
  app.add_option("-p,--prompt-tokens", prompt_tokens, "Prompt length for time to first token")
      ->capture_default_str();
  app.add_option("-r,--repetitions", repetitions, "Runs per measurement")->capture_default_str();
  app.add_option("--concurrent", concurrent, "Generations in the concurrency test")
      ->capture_default_str();
  app.add_option("-c,--ctx", context, "Context per sequence (0: prompt + gen + 16)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  EngineOptions options;
  options.model_path = model;
  options.threads = threads;
  options.max_sequences = static_cast<uint32_t>(concurrent);
  options.context_per_sequence =
      context > 0 ? context : static_cast<uint32_t>(prompt_tokens + gen + 16);
  auto opened = Engine::open(options);
  if (!opened) {
    std::cerr << "engine_bench: " << opened.error().message << "\n";
    return 1;
  }
  Engine& engine = *opened.value();
  const std::string short_prompt = "Once upon a time";
  const std::string long_prompt = prompt_of(engine, prompt_tokens);

  must(generate(engine, request_for(short_prompt, 16)));  // warm-up

  std::vector<double> decode_tps;
  std::vector<double> ttft_ms;
  std::vector<double> prefill_ms;
  for (int r = 0; r < repetitions; ++r) {
    decode_tps.push_back(
        must(generate(engine, request_for(short_prompt, gen))).summary.decode_tokens_per_second);
    const auto first = must(generate(engine, request_for(long_prompt, 1))).summary;
    ttft_ms.push_back(first.time_to_first_token_ms);
    prefill_ms.push_back(first.prefill_ms);
  }

  using Clock = std::chrono::steady_clock;
  std::vector<double> sequential_tps;
  std::vector<double> concurrent_tps;
  const std::vector<std::string> prompts = {"Once upon a time", "The cat sat", "Tom had a ball",
                                            "One day, a bird"};
  for (int r = 0; r < repetitions; ++r) {
    auto start = Clock::now();
    for (int i = 0; i < concurrent; ++i) {
      must(generate(engine, request_for(prompts[static_cast<size_t>(i) % prompts.size()], gen)));
    }
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    sequential_tps.push_back(concurrent * gen / seconds);

    start = Clock::now();
    std::vector<std::future<Result<Completion>>> futures;
    for (int i = 0; i < concurrent; ++i) {
      futures.push_back(std::async(std::launch::async, [&, i] {
        return generate(engine, request_for(prompts[static_cast<size_t>(i) % prompts.size()], gen));
      }));
    }
    for (auto& f : futures) {
      must(f.get());
    }
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
    concurrent_tps.push_back(concurrent * gen / seconds);
  }

  const auto prompt_count = engine.count_tokens(long_prompt, true, false);
  nlohmann::json out{
      {"model", engine.model().name},
      {"model_sha256", engine.model().sha256},
      {"threads", threads},
      {"gen_tokens", gen},
      {"prompt_tokens", prompt_count ? prompt_count.value() : 0},
      {"repetitions", repetitions},
      {"decode_tokens_per_second", median(decode_tps)},
      {"time_to_first_token_ms", median(ttft_ms)},
      {"prefill_ms", median(prefill_ms)},
      {"concurrent", concurrent},
      {"sequential_throughput_tokens_per_second", median(sequential_tps)},
      {"concurrent_throughput_tokens_per_second", median(concurrent_tps)},
  };
  std::cout << out.dump(2) << "\n";
  return 0;
}
