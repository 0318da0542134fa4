// `tandem calibrate`: fits the cascade's confidence weights and thresholds (per query kind
// where that helps) for a target quality or cloud share, on labelled trace files or on the
// gateway's own labelled traces, and writes them into a configuration. The work is in
// eval/calibrate.h; this file reads the inputs, prints and writes.

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/terminal_progress.h"
#include "common/read_file.h"
#include "config/config_editor.h"
#include "eval/calibrate.h"
#include "eval/router_training.h"
#include "eval/server_traces.h"

namespace tandem::cli {
namespace {

struct CalibrateFlags {
  std::vector<std::string> data;
  std::string traces;
  std::string edge;
  std::string cloud;
  std::optional<double> target_quality;
  std::optional<double> target_cloud_share;
  std::string policy = "learned";
  std::string per_kind = "auto";
  double fit_share = 0.7;
  uint64_t seed = 0;
  std::string config;
  std::string write;
  bool edge_cost_zero = false;
  bool left_out_tasks = false;
  bool json = false;
  bool no_progress = false;
};

int fail(const std::string& message) {
  std::cerr << "tandem calibrate: " << message << "\n";
  return 1;
}

// Samples from trace files (the router computes kinds and classifier scores as the server
// would) or from the gateway's labelled traces.
Result<std::vector<eval::Sample>> load_samples(const CalibrateFlags& flags,
                                               const config::RoutingConfig& routing,
                                               eval::CalibrateOptions& options,
                                               std::vector<std::string>& notes,
                                               Progress& progress) {
  if (!flags.traces.empty()) {
    auto db = store::open_trace_database(flags.traces);
    if (!db) {
      return db.error();
    }
    store::TraceLog log(std::move(db).value());
    store::TraceQuery query;
    query.labelled_only = true;
    auto records = log.read(query);
    if (!records) {
      return records.error();
    }
    auto server = eval::samples_from_traces(records.value(), flags.seed);
    notes.push_back(std::to_string(server.samples.size()) +
                    " labelled traces with token signals (" +
                    std::to_string(server.without_signals) + " labelled without signals skipped)");
    options.signals = {true, true, true, options.signals.complexity};
    return std::move(server.samples);
  }
  auto router = routing::Router::create(routing);
  if (!router) {
    return router.error();
  }
  auto rows = eval::load_trace_paths(flags.data, progress);
  if (!rows) {
    return rows.error();
  }
  eval::SampleOptions sample_options;
  sample_options.edge = flags.edge;
  sample_options.cloud = flags.cloud;
  sample_options.edge_cost_zero = flags.edge_cost_zero;
  sample_options.seed = flags.seed;
  auto set = eval::make_samples(rows.value(), sample_options, *router.value(), progress);
  if (!set) {
    return set.error();
  }
  if (!set.value().has_confidence) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the data carries no confidence for the edge model ('" + flags.edge +
                          "'): a cascade cannot be calibrated on it");
  }
  return std::move(set.value().samples);
}

// Loads the samples and calibrates on them: the part that takes time, under the progress bar.
Result<eval::CalibrateResult> calibrate_samples(const CalibrateFlags& flags,
                                                const config::RoutingConfig& routing,
                                                eval::CalibrateOptions& options,
                                                std::vector<std::string>& notes,
                                                Progress& progress) {
  auto samples = load_samples(flags, routing, options, notes, progress);
  if (!samples) {
    return samples.error();
  }
  auto result = eval::calibrate(samples.value(), options, progress);
  if (!result) {
    return result.error();
  }
  if (flags.left_out_tasks) {
    auto checks = eval::check_left_out_tasks(samples.value(), options, progress);
    if (!checks) {
      return checks.error();
    }
    result.value().left_out_tasks = std::move(checks).value();
  }
  return result;
}

int run_calibrate(const CalibrateFlags& flags) {
  if (flags.data.empty() == flags.traces.empty()) {
    return fail("give the labelled data: --data FILES... (with --edge and --cloud) or --traces DB");
  }
  if (!flags.data.empty() && (flags.edge.empty() || flags.cloud.empty())) {
    return fail("--data needs --edge and --cloud (model names in the traces)");
  }
  if (flags.policy != "learned" && flags.policy != "combined") {
    return fail("--policy: must be learned or combined, not '" + flags.policy + "'");
  }
  // The configuration calibrated from: --config, else the file --write will edit.
  std::string base_path = flags.config;
  if (base_path.empty() && !flags.write.empty() && std::filesystem::exists(flags.write)) {
    base_path = flags.write;
  }
  config::GatewayConfig base;
  if (!base_path.empty()) {
    auto loaded = config::load_config(base_path);
    if (!loaded) {
      return fail(loaded.error().message);
    }
    base = std::move(loaded).value();
  }
  eval::CalibrateOptions options;
  options.target_quality = flags.target_quality;
  options.target_cloud_share = flags.target_cloud_share;
  options.combined = flags.policy == "combined";
  options.per_kind = flags.per_kind;
  options.fit_share = flags.fit_share;
  options.seed = flags.seed;
  options.base = base.routing.cascade;
  std::vector<std::string> notes;
  CommandProgress progress({.json = flags.json, .no_progress = flags.no_progress});
  auto result = calibrate_samples(flags, base.routing, options, notes, progress.progress());
  progress.finish();
  if (!result) {
    return fail(result.error().message);
  }
  result.value().notes.insert(result.value().notes.begin(), notes.begin(), notes.end());
  if (base.routing.pattern != "cascade" &&
      !(base.routing.pattern == "ingress" && base.routing.ingress.below == "cascade")) {
    result.value().notes.push_back("routing.pattern is '" + base.routing.pattern +
                                   "': the cascade thresholds take effect only with pattern "
                                   "cascade, or ingress with below: cascade");
  }
  if (!flags.write.empty()) {
    std::string text;
    if (std::filesystem::exists(flags.write)) {
      auto read = read_file(flags.write);
      if (!read) {
        return fail(read.error().message);
      }
      text = std::move(read).value();
    }
    auto edited = config::apply_edits(text, eval::config_edits(result.value()), flags.write);
    if (!edited) {
      return fail(edited.error().message);
    }
    // Never write a file the server would refuse.
    if (auto check = config::parse_config(edited.value(), flags.write); !check) {
      return fail("the edited configuration does not parse (nothing written): " +
                  check.error().message);
    }
    if (auto written = eval::write_file_atomically(flags.write, edited.value()); !written) {
      return fail(written.error().message);
    }
    result.value().notes.push_back("written to " + flags.write);
  }
  if (flags.json) {
    std::cout << eval::to_json(result.value()).dump(2) << "\n";
  } else {
    std::cout << eval::to_text(result.value());
  }
  return 0;
}

}  // namespace

std::function<int()> add_calibrate_command(CLI::App& app) {
  auto flags = std::make_shared<CalibrateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the cascade's confidence weights and thresholds (per query kind where it helps) for a "
      "target quality or cloud share; report the expected result with a confidence interval");
  cmd->add_option("--data", flags->data, "routing trace files (JSONL) or directories of them");
  cmd->add_option("--traces", flags->traces,
                  "the gateway's routing database: calibrate on its labelled traces");
  cmd->add_option("--edge", flags->edge, "the edge model's name in the trace files");
  cmd->add_option("--cloud", flags->cloud, "the cloud model's name in the trace files");
  auto* quality = cmd->add_option("--target-quality", flags->target_quality,
                                  "keep this share of the cloud's quality (e.g. 0.95)");
  auto* share = cmd->add_option("--target-cloud-share", flags->target_cloud_share,
                                "send this share of queries to the cloud (e.g. 0.3)");
  quality->excludes(share);
  cmd->add_option("--policy", flags->policy,
                  "learned (edge confidence) or combined (with the classifier's score)");
  cmd->add_option("--per-kind", flags->per_kind,
                  "thresholds per query kind: auto (where it helps), on, off");
  cmd->add_option("--fit-share", flags->fit_share,
                  "share of rows fitted on; the rest check the result (default 0.7)");
  cmd->add_option("--seed", flags->seed, "salts the split of rows by id");
  cmd->add_option("--config", flags->config,
                  "the configuration to start from (its classifier and cascade settings)");
  cmd->add_option("--write", flags->write,
                  "write the thresholds and weights into this configuration file (edited in "
                  "place, comments kept; created when missing)");
  cmd->add_flag("--edge-cost-zero", flags->edge_cost_zero,
                "count the edge's answers as free (on-device)");
  cmd->add_flag("--left-out-tasks", flags->left_out_tasks,
                "also calibrate without each task in turn and apply the result to it: how the "
                "target holds on traffic of a kind the calibration never saw");
  cmd->add_flag("--json", flags->json, "print one JSON object");
  add_no_progress_flag(*cmd, flags->no_progress);
  return [flags] { return run_calibrate(*flags); };
}

}  // namespace tandem::cli
