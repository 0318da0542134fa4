// `tandem replay --traces DB --config NEW.yaml`: what-if on recorded traffic. Every request in
// the gateway's routing traces is decided again under the new configuration by the policy code
// the gateway runs (eval/replay.h); the report compares tier shares, cost and expected
// quality, and lists the requests that would change tier.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli/commands.h"
#include "cli/terminal_progress.h"
#include "common/time_text.h"
#include "config/config.h"
#include "eval/replay.h"
#include "routing/router.h"
#include "routing/shadow_report.h"
#include "store/trace_log.h"

namespace tandem::cli {
namespace {

struct ReplayFlags {
  std::string traces;
  std::string config_path;
  std::string since;
  size_t limit = 0;
  size_t changes = 20;
  bool json = false;
  bool no_progress = false;
};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

eval::RecordedRequest recorded(store::TraceRecord&& t) {
  eval::RecordedRequest r;
  r.request_id = std::move(t.request_id);
  r.unix_ms = t.unix_ms;
  r.pattern = std::move(t.pattern);
  r.tier = std::move(t.tier);
  r.escalated = t.escalated;
  r.kind = std::move(t.kind);
  r.reason_codes = std::move(t.reason_codes);
  r.privacy_detectors = std::move(t.privacy_detectors);
  r.review_rules = std::move(t.review_rules);
  r.hints.privacy_header = t.hints.privacy_header;
  r.hints.key_local_only = t.hints.key_local_only;
  r.hints.review_header = t.hints.review_header;
  r.hints.latency_budget_ms = t.hints.latency_budget_ms;
  r.hints.pattern = std::move(t.hints.pattern);
  r.hints.client = std::move(t.client);
  r.hints.cloud_only_fields = std::move(t.hints.cloud_only_fields);
  r.features = std::move(t.features);
  r.complexity = t.complexity;
  if (t.confidence) {
    routing::ConfidenceSnapshot c;
    c.tokens = static_cast<size_t>(std::max<int64_t>(t.confidence->tokens, 0));
    c.mean_logprob = t.confidence->mean_logprob;
    c.min_logprob = t.confidence->min_logprob;
    c.mean_entropy = t.confidence->mean_entropy;
    c.mean_margin = t.confidence->mean_margin;
    c.combined = t.confidence->combined;
    r.confidence = c;
  }
  r.cost_edge = t.cost_edge;
  r.cost_cloud = t.cost_cloud;
  r.cost_all_cloud = t.cost_all_cloud;
  r.edge_good = t.edge_good;
  return r;
}

std::string percent(size_t n, size_t total) {
  char text[16];
  std::snprintf(text, sizeof(text), "%5.1f%%", total == 0 ? 0.0 : 100.0 * n / total);
  return text;
}

std::string signed_fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.*f", digits, value);
  return text;
}

void print_report(const eval::ReplayReport& r, const ReplayFlags& flags, int64_t first_ms,
                  int64_t last_ms) {
  std::printf("replayed %zu request(s) from %s", r.requests, flags.traces.c_str());
  if (r.requests > 0) {
    std::printf(" (%s .. %s)", utc_iso8601(first_ms).c_str(), utc_iso8601(last_ms).c_str());
  }
  std::printf(" under %s\n", flags.config_path.c_str());
  std::printf(
      "decided again: %zu; kept: %zu health/capability rule, %zu named a model, %zu failed\n\n",
      r.redecided, r.kept_health, r.kept_explicit, r.kept_failed);

  std::printf("%-12s %16s %16s\n", "TIER", "BEFORE", "AFTER");
  const std::pair<const char*, std::pair<size_t, size_t>> rows[] = {
      {"edge", {r.before.edge, r.after.edge}},
      {"cloud", {r.before.cloud, r.after.cloud}},
      {"human", {r.before.human, r.after.human}},
      {"none", {r.before.none, r.after.none}},
      {"escalated", {r.before.escalated, r.after.escalated}}};
  for (const auto& [name, counts] : rows) {
    std::printf("%-12s %8zu %s %8zu %s\n", name, counts.first,
                percent(counts.first, r.requests).c_str(), counts.second,
                percent(counts.second, r.requests).c_str());
  }
  std::printf("\ncost:     $%.6f -> $%.6f (%s USD)\n", r.cost_before_usd, r.cost_after_usd,
              signed_fixed(r.cost_after_usd - r.cost_before_usd, 6).c_str());
  if (r.quality_requests > 0) {
    std::printf("quality:  %.3f -> %.3f (%s) expected, over %zu request(s), %zu with a label\n",
                r.quality_before, r.quality_after,
                signed_fixed(r.quality_after - r.quality_before, 3).c_str(), r.quality_requests,
                r.labelled);
  } else {
    std::printf("quality:  no estimate (no request has a label or recorded edge confidence)\n");
  }

  std::printf("\n%zu request(s) change tier", r.changed);
  if (r.changed > r.changes.size()) {
    std::printf(" (first %zu shown)", r.changes.size());
  }
  std::printf("\n");
  if (!r.changes.empty()) {
    std::printf("%-34s %-16s %-18s %-18s %s\n", "REQUEST", "KIND", "FROM", "TO", "REASON");
    for (const auto& c : r.changes) {
      std::printf("%-34s %-16s %-18s %-18s %s\n", c.request_id.c_str(), c.kind.c_str(),
                  c.from_tier.c_str(), c.to_tier.c_str(), c.reason.c_str());
    }
  }
  std::printf("\nnotes:\n");
  for (const auto& note : r.notes) {
    std::printf("  - %s\n", note.c_str());
  }
}

// Feeds the traces `query` selects to `replayer` in the order they happened: the newest
// --limit of them, or all (one row at a time: a million traces need not fit in memory).
// `first_ms` and `last_ms` get the window they span.
Status replay_traces(store::TraceLog& log, store::TraceQuery query, const ReplayFlags& flags,
                     eval::Replayer& replayer, Progress& progress, int64_t& first_ms,
                     int64_t& last_ms) {
  size_t replayed = 0;
  auto visit = [&](store::TraceRecord&& t) {
    first_ms = first_ms == 0 ? t.unix_ms : std::min(first_ms, t.unix_ms);
    last_ms = std::max(last_ms, t.unix_ms);
    replayer.add(recorded(std::move(t)));
    progress.update(++replayed);
    return true;
  };
  Status status;
  if (flags.limit > 0) {
    // The newest N, replayed in the order they happened.
    query.limit = flags.limit;
    query.newest_first = true;
    progress.phase("reading traces", 0);
    auto rows = log.read(query);
    if (rows) {
      progress.phase("replaying requests", rows->size());
      for (auto it = rows->rbegin(); it != rows->rend(); ++it) {
        visit(std::move(*it));
      }
    } else {
      status = rows.error();
    }
  } else {
    // Oldest first, one row at a time: a million traces need not fit in memory. Every row is
    // replayed unless --since leaves some out, whose number only the scan tells (0: unknown).
    const auto rows = query.since_ms == 0 ? log.count() : Result<size_t>(size_t{0});
    progress.phase("replaying requests", rows ? rows.value() : 0);
    status = log.scan(query, visit);
  }
  return status;
}

int run(const ReplayFlags& flags) {
  auto config = config::load_config(flags.config_path);
  if (!config) {
    std::cerr << "tandem replay: " << config.error().message << "\n";
    return 1;
  }
  auto router = routing::Router::create(config->routing);
  if (!router) {
    std::cerr << "tandem replay: " << flags.config_path << ": " << router.error().message << "\n";
    return 1;
  }
  store::TraceQuery query;
  if (!flags.since.empty()) {
    auto since = routing::parse_since(flags.since, now_ms());
    if (!since) {
      std::cerr << "tandem replay: --since: " << since.error().message << "\n";
      return 1;
    }
    query.since_ms = since.value();
  }
  auto db = store::open_trace_database(flags.traces);
  if (!db) {
    std::cerr << "tandem replay: " << db.error().message << "\n";
    return 1;
  }
  store::TraceLog log(std::move(db).value());

  eval::Replayer replayer(router.value(), flags.changes);
  int64_t first_ms = 0;
  int64_t last_ms = 0;
  CommandProgress bar({.json = flags.json, .no_progress = flags.no_progress});
  const Status status =
      replay_traces(log, query, flags, replayer, bar.progress(), first_ms, last_ms);
  bar.finish();
  if (!status) {
    std::cerr << "tandem replay: " << status.error().message << "\n";
    return 1;
  }
  const eval::ReplayReport report = replayer.report();
  if (flags.json) {
    nlohmann::json out = eval::to_json(report);
    out["traces"] = flags.traces;
    out["config"] = flags.config_path;
    out["window"] = {
        {"first", report.requests > 0 ? nlohmann::json(utc_iso8601(first_ms)) : nullptr},
        {"last", report.requests > 0 ? nlohmann::json(utc_iso8601(last_ms)) : nullptr}};
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    print_report(report, flags, first_ms, last_ms);
  }
  return 0;
}

}  // namespace

std::function<int()> add_replay_command(CLI::App& app) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "What-if on recorded traffic: decide the gateway's traced requests again under a new "
      "configuration and compare tiers, cost and expected quality");
  cmd->add_option("--traces", flags->traces,
                  "The gateway's routing database (routing.database) holding its traces")
      ->required();
  cmd->add_option("-c,--config", flags->config_path, "The new YAML configuration")->required();
  cmd->add_option("--since", flags->since,
                  "Only requests since: 24h, 7d, 2026-06-01, 2026-06-01T12:00:00Z, unix ms");
  cmd->add_option("--limit", flags->limit, "Only the newest N requests")
      ->check(CLI::Range(size_t{1}, size_t{100000000}));
  cmd->add_option("--changes", flags->changes, "List at most N requests that change tier")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, size_t{1000000}));
  cmd->add_flag("--json", flags->json, "Print the report as JSON");
  add_no_progress_flag(*cmd, flags->no_progress);
  return [flags] { return run(*flags); };
}

}  // namespace tandem::cli
