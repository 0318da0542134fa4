// `tandem drift`: how far a derived model (a quantization) strays from its reference on the
// operator's own prompts, with a verdict against limits (docs/DRIFT.md).

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/terminal_progress.h"
#include "engine/drift.h"
#include "engine/llama_backend.h"
#include "engine/text_stream.h"

namespace tandem::cli {
namespace {

using json = nlohmann::ordered_json;

// Distinct from 1 (the measurement failed) and 2 (usage): the measurement worked and the
// candidate is beyond a limit, which a release script wants to tell apart.
constexpr int kExitDrifted = 3;

struct DriftFlags {
  std::string prompts_path;
  engine::DriftOptions options;
  bool json = false;
  bool verbose = false;
  bool no_progress = false;
};

json limits_json(const engine::DriftLimits& limits) {
  return json{{"max_mean_kl", limits.max_mean_kl},
              {"min_top1_agreement", limits.min_top1_agreement},
              {"max_perplexity_ratio", limits.max_perplexity_ratio},
              {"min_greedy_prefix_agreement", limits.min_greedy_prefix_agreement}};
}

json summary_json(const engine::DriftSummary& s) {
  return json{
      {"prompts", s.prompts},
      {"prompt_tokens", s.prompt_tokens},
      {"continuation_tokens", s.continuation_tokens},
      {"scored_tokens", s.scored_tokens},
      {"kl", {{"mean", s.mean_kl}, {"p50", s.p50_kl}, {"p95", s.p95_kl}, {"max", s.max_kl}}},
      {"top1_agreement", s.top1_agreement},
      {"reference_perplexity", s.reference_perplexity},
      {"candidate_perplexity", s.candidate_perplexity},
      {"perplexity_ratio", s.perplexity_ratio},
      {"greedy_exact_match", s.greedy_exact_match},
      {"greedy_prefix_agreement", s.greedy_prefix_agreement}};
}

json prompt_json(const engine::PromptDrift& p) {
  return json{{"source", p.source},
              {"prompt", engine::utf8_sanitize(p.prompt)},
              {"prompt_tokens", p.prompt_tokens},
              {"continuation_tokens", p.continuation_tokens},
              {"scored_tokens", p.scored_tokens()},
              {"mean_kl", p.mean_kl()},
              {"max_kl", p.max_kl()},
              {"top1_agreement", p.top1_agreement()},
              {"reference_perplexity", p.reference_perplexity()},
              {"candidate_perplexity", p.candidate_perplexity()},
              {"perplexity_ratio", p.perplexity_ratio()},
              {"greedy_exact_match", p.greedy_exact_match()},
              {"greedy_prefix_agreement", p.greedy_prefix_agreement()},
              {"reference_text", engine::utf8_sanitize(p.reference_text)},
              {"candidate_text", engine::utf8_sanitize(p.candidate_text)}};
}

json report_json(const engine::DriftReport& report, const std::string& prompts_path) {
  json violations = json::array();
  for (const auto& v : report.violations) {
    violations.push_back(
        {{"limit", v.limit}, {"value", v.value}, {"bound", v.bound}, {"message", v.message}});
  }
  json prompts = json::array();
  for (const auto& p : report.prompts) {
    prompts.push_back(prompt_json(p));
  }
  return json{{"reference", to_json(report.reference)},
              {"candidate", to_json(report.candidate)},
              {"prompts_file", prompts_path},
              {"continuation_tokens", report.continuation_tokens},
              {"limits", limits_json(report.limits)},
              {"summary", summary_json(report.summary)},
              {"verdict", report.drifted() ? "drifted" : "within_limits"},
              {"violations", std::move(violations)},
              {"prompts", std::move(prompts)}};
}

void print_model(const char* role, const engine::ModelIdentity& id) {
  std::printf("%-10s %s (%s, %.2f MiB, sha256 %.12s)\n  %s\n", role, id.name.c_str(),
              id.quantization.c_str(), static_cast<double>(id.file_size_bytes) / (1 << 20),
              id.sha256.c_str(), id.path.c_str());
}

void print_limit_row(const char* metric, double value, const char* relation, double bound,
                     bool ok) {
  std::printf("  %-32s %8.4f   %s %-6.4g %s\n", metric, value, relation, bound,
              ok ? "ok" : "DRIFTED");
}

void print_report(const engine::DriftReport& report, const std::string& prompts_path) {
  const auto& s = report.summary;
  const auto& limits = report.limits;
  print_model("reference", report.reference);
  print_model("candidate", report.candidate);
  std::printf("prompts    %zu from %s; %zu prompt + %zu continuation tokens, %zu scored\n\n",
              s.prompts, prompts_path.c_str(), s.prompt_tokens, s.continuation_tokens,
              s.scored_tokens);

  std::printf("  %-32s %8s   %s\n", "metric", "value", "limit");
  print_limit_row("mean KL(ref||cand), nats/token", s.mean_kl, "<=", limits.max_mean_kl,
                  s.mean_kl <= limits.max_mean_kl);
  std::printf("  %-32s %8.4f / %.4f / %.4f\n", "  KL p50 / p95 / max", s.p50_kl, s.p95_kl,
              s.max_kl);
  print_limit_row("top-1 agreement", s.top1_agreement, ">=", limits.min_top1_agreement,
                  s.top1_agreement >= limits.min_top1_agreement);
  print_limit_row("perplexity ratio (cand/ref)", s.perplexity_ratio,
                  "<=", limits.max_perplexity_ratio,
                  s.perplexity_ratio <= limits.max_perplexity_ratio);
  std::printf("  %-32s %8.4f / %.4f\n", "  perplexity ref / cand", s.reference_perplexity,
              s.candidate_perplexity);
  print_limit_row("greedy prefix agreement", s.greedy_prefix_agreement,
                  ">=", limits.min_greedy_prefix_agreement,
                  s.greedy_prefix_agreement >= limits.min_greedy_prefix_agreement);
  std::printf("  %-32s %8.4f\n\n", "greedy exact match", s.greedy_exact_match);

  int source_width = 6;
  for (const auto& p : report.prompts) {
    source_width = std::max(source_width, static_cast<int>(p.source.size()));
  }
  std::printf("  %-*s %7s %9s %7s %9s %7s\n", source_width, "prompt", "tokens", "mean KL", "top-1",
              "PPL ratio", "greedy");
  for (const auto& p : report.prompts) {
    const std::string tokens =
        std::to_string(p.prompt_tokens) + "+" + std::to_string(p.continuation_tokens);
    std::printf("  %-*s %7s %9.4f %7.3f %9.4f %7.3f\n", source_width, p.source.c_str(),
                tokens.c_str(), p.mean_kl(), p.top1_agreement(), p.perplexity_ratio(),
                p.greedy_prefix_agreement());
  }
  if (!report.drifted()) {
    std::printf("\nverdict: within limits\n");
    return;
  }
  std::printf("\nverdict: DRIFTED\n");
  for (const auto& v : report.violations) {
    std::printf("  - %s\n", v.message.c_str());
  }
}

int drift(const DriftFlags& flags) {
  engine::set_llama_log_level(flags.verbose ? engine::LlamaLogLevel::kVerbose
                                            : engine::LlamaLogLevel::kQuiet);
  auto prompts = engine::read_drift_prompts(flags.prompts_path);
  if (!prompts) {
    std::cerr << "tandem drift: " << prompts.error().message << "\n";
    return 1;
  }
  CommandProgress progress(
      {.json = flags.json, .no_progress = flags.no_progress, .quiet_log = !flags.verbose});
  auto report = engine::measure_drift(flags.options, prompts.value(), progress.progress());
  progress.finish();
  if (!report) {
    std::cerr << "tandem drift: " << report.error().message << "\n";
    return 1;
  }
  if (flags.json) {
    std::cout << report_json(report.value(), flags.prompts_path)
                     .dump(2, ' ', false, json::error_handler_t::replace)
              << "\n";
  } else {
    print_report(report.value(), flags.prompts_path);
  }
  return report->drifted() ? kExitDrifted : 0;
}

}  // namespace

std::function<int()> add_drift_command(CLI::App& app) {
  auto flags = std::make_shared<DriftFlags>();
  auto& options = flags->options;
  CLI::App* cmd = app.add_subcommand(
      "drift",
      "Measure how far a candidate model (e.g. a quantization) drifts from its reference on "
      "your prompts: KL divergence, top-1 agreement, perplexity ratio, greedy agreement. Exit "
      "status 0 within limits, 3 drifted, 1 failed (docs/DRIFT.md)");
  cmd->add_option("--reference", options.reference_path, "Reference GGUF (e.g. the F16 original)")
      ->required();
  cmd->add_option("--candidate", options.candidate_path, "Candidate GGUF (e.g. its Q4_K_M)")
      ->required();
  cmd->add_option("--prompts", flags->prompts_path,
                  "Prompts file: one prompt per line, or JSONL with a \"prompt\" field")
      ->required();
  cmd->add_option("-n,--tokens", options.continuation_tokens,
                  "Greedy continuation tokens scored and compared after each prompt")
      ->capture_default_str()
      ->check(CLI::Range(1, engine::kMaxDriftContinuationTokens));
  cmd->add_option("--max-kl", options.limits.max_mean_kl,
                  "Limit: mean KL(reference || candidate), nats per token")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-top1", options.limits.min_top1_agreement,
                  "Limit: share of positions where both models' first choice agrees")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--max-ppl-ratio", options.limits.max_perplexity_ratio,
                  "Limit: candidate perplexity / reference perplexity")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-greedy-agreement", options.limits.min_greedy_prefix_agreement,
                  "Limit: mean share of the greedy outputs' common prefix")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("-t,--threads", options.threads, "CPU threads (0: one per hardware thread)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", flags->json,
                "Print one JSON object: models, limits, summary, verdict, violations, prompts");
  cmd->add_flag("-v,--verbose", flags->verbose, "Show llama.cpp's own log (instead of progress)");
  add_no_progress_flag(*cmd, flags->no_progress);
  return [flags] { return drift(*flags); };
}

}  // namespace tandem::cli
