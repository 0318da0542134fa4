// `tandem shadow report`: shadow mode's verdict per query kind — which kinds the edge already
// answers as the cloud does — read from the gateway's SQLite database (WAL: while it serves).

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "common/time_text.h"
#include "config/config.h"
#include "server/shadow_api.h"
#include "store/shadow_log.h"

namespace tandem::cli {
namespace {

struct ShadowFlags {
  std::string database;
  std::string config_path;
  std::string since;
  bool json = false;
  std::optional<double> target_quality;
  std::optional<uint32_t> min_samples;
};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", share * 100.0);
  return text;
}

std::string fixed2(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", value);
  return text;
}

void print_line(const routing::ShadowKindReport& k) {
  std::string verdict = routing::shadow_verdict_name(k.verdict);
  if (k.verdict == routing::ShadowVerdict::kNeedMoreSamples) {
    verdict +=
        k.more_samples ? " (~" + std::to_string(*k.more_samples) + " more)" : " (rate = target)";
  }
  const bool any = k.samples > 0;
  std::printf("%-16s %7lld %7s %7s %7s %6s %6s %7s  %s\n", k.kind.c_str(),
              static_cast<long long>(k.samples), any ? percent(k.agreement).c_str() : "-",
              any ? percent(k.bounds.lower).c_str() : "-",
              any ? percent(k.bounds.upper).c_str() : "-", any ? fixed2(k.mean_f1).c_str() : "-",
              any ? fixed2(k.mean_edge_confidence).c_str() : "-", percent(k.traffic_share).c_str(),
              verdict.c_str());
}

void print_report(const routing::ShadowReport& r, int64_t since) {
  std::printf(
      "Shadow report: %lld routed requests%s, %lld answered by the cloud for shadow mode.\n",
      static_cast<long long>(r.requests), since > 0 ? (" since " + utc_iso8601(since)).c_str() : "",
      static_cast<long long>(r.shadowed));
  std::printf(
      "A kind moves to the edge at %u+ samples with a Wilson 95%% lower bound >= %s agreement.\n\n",
      r.min_samples, percent(r.target_quality).c_str());
  std::printf("%-16s %7s %7s %7s %7s %6s %6s %7s  %s\n", "KIND", "SAMPLES", "AGREE", "LOWER",
              "UPPER", "F1", "CONF", "TRAFFIC", "VERDICT");
  for (const auto& k : r.kinds) {
    print_line(k);
  }
  print_line(r.overall);
  const int64_t busy = r.overall.edge_busy;
  const int64_t failed = r.overall.edge_failed;
  if (busy + failed > 0) {
    std::printf(
        "\nNot compared: %lld samples skipped (edge busy), %lld the edge could not answer.\n",
        static_cast<long long>(busy), static_cast<long long>(failed));
  }
  if (r.requests > r.shadowed) {
    std::printf(
        "\n%lld routed requests (%s) stayed where a rule put them (private data, review, "
        "cloud-only fields, latency budget, offline cloud, a pattern the client chose).\n",
        static_cast<long long>(r.requests - r.shadowed),
        percent(static_cast<double>(r.requests - r.shadowed) / static_cast<double>(r.requests))
            .c_str());
  }
  if (r.move_to_edge.empty()) {
    std::printf("\nNo kind is ready to move to the edge yet.\n");
    return;
  }
  std::string kinds;
  for (const auto& k : r.move_to_edge) {
    kinds += (kinds.empty() ? "" : ", ") + k;
  }
  std::printf("\nMoving %s to the edge puts %s of routed traffic on the edge.\n", kinds.c_str(),
              percent(r.edge_share_if_moved).c_str());
}

int run(const ShadowFlags& flags) {
  config::ShadowConfig shadow;
  std::string path = flags.database;
  if (!flags.config_path.empty()) {
    auto config = config::load_config(flags.config_path);
    if (!config) {
      std::cerr << "tandem shadow report: " << config.error().message << "\n";
      return 1;
    }
    shadow = config->routing.shadow;
    if (path.empty()) {
      path = config->routing.database;
    }
  }
  if (path.empty()) {
    std::cerr << "tandem shadow report: name the database with --db, or a config whose "
                 "routing.database is set\n";
    return 1;
  }
  if (flags.target_quality) {
    shadow.target_quality = *flags.target_quality;
  }
  if (flags.min_samples) {
    shadow.min_samples = *flags.min_samples;
  }
  int64_t since = 0;
  if (!flags.since.empty()) {
    auto parsed = routing::parse_since(flags.since, now_ms());
    if (!parsed) {
      std::cerr << "tandem shadow report: --" << parsed.error().message << "\n";
      return 2;
    }
    since = parsed.value();
  }
  // A report reads what a gateway wrote: a missing file is a wrong path, not an empty log.
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored)) {
    std::cerr << "tandem shadow report: no database at " << path
              << " (routing.database of a gateway that ran with routing.shadow.enabled)\n";
    return 1;
  }
  auto db = store::Database::open(path);
  if (!db) {
    std::cerr << "tandem shadow report: " << db.error().message << "\n";
    return 1;
  }
  store::ShadowLog log(std::move(db).value());
  auto report = server::load_shadow_report(log, shadow, since);
  if (!report) {
    std::cerr << "tandem shadow report: " << report.error().message << "\n";
    return 1;
  }
  if (flags.json) {
    std::cout << server::shadow_report_json(report.value(), since, shadow.enabled).dump(2) << "\n";
  } else {
    print_report(report.value(), since);
  }
  return 0;
}

}  // namespace

std::function<int()> add_shadow_command(CLI::App& app) {
  auto flags = std::make_shared<ShadowFlags>();
  CLI::App* cmd = app.add_subcommand(
      "shadow", "Shadow mode: which query kinds the edge already answers as the cloud does");
  cmd->require_subcommand(1);
  CLI::App* report = cmd->add_subcommand("report", "Agreement and verdict per query kind");
  report->add_option("--db", flags->database, "The gateway's SQLite database (routing.database)");
  report->add_option("-c,--config", flags->config_path,
                     "Or: the gateway's YAML config (its database and routing.shadow targets)");
  report->add_flag("--json", flags->json, "Print JSON (as GET /v1/tandem/shadow)");
  report->add_option("--since", flags->since,
                     "Only samples since: 24h, 7d, 2025-06-01, 2025-06-01T12:00:00Z, unix ms");
  report
      ->add_option("--target-quality", flags->target_quality,
                   "Agreement a kind needs (default: routing.shadow.target_quality, 0.95)")
      ->check(CLI::Range(0.0, 1.0));
  report
      ->add_option("--min-samples", flags->min_samples,
                   "Samples a kind needs (default: routing.shadow.min_samples, 30)")
      ->check(CLI::Range(1u, 1u << 30));
  return [flags] { return run(*flags); };
}

}  // namespace tandem::cli
