// `tandem eval`: replays labelled routing traces through the server's routing code and prints
// each policy's cost-quality curve (RouteLLM's APGR and CPT), beside the random and oracle
// routers. The work is in eval/evaluate.h; this file parses flags and prints.

#include <iostream>

#include "cli/commands.h"
#include "cli/terminal_progress.h"
#include "eval/evaluate.h"
#include "eval/router_training.h"
#include "eval/svg_plot.h"

namespace tandem::cli {
namespace {

struct EvalFlags {
  std::vector<std::string> data;
  std::string edge;
  std::string mid;
  std::string cloud;
  std::string policy;
  std::string config;
  std::string plot;
  std::string title;
  bool edge_cost_zero = false;
  bool by_task = false;
  bool left_out_tasks = false;
  bool json = false;
  bool no_progress = false;
};

int run_eval(const EvalFlags& flags) {
  eval::EvalOptions options;
  options.data = flags.data;
  options.edge = flags.edge;
  options.mid = flags.mid;
  options.cloud = flags.cloud;
  options.policy = flags.policy;
  options.edge_cost_zero = flags.edge_cost_zero;
  options.by_task = flags.by_task;
  options.left_out_tasks = flags.left_out_tasks;
  if (!flags.config.empty()) {
    auto config = config::load_config(flags.config);
    if (!config) {
      std::cerr << "tandem eval: " << config.error().message << "\n";
      return 1;
    }
    options.config = std::move(config).value();
  }
  CommandProgress progress({.json = flags.json, .no_progress = flags.no_progress});
  auto report = eval::evaluate(options, progress.progress());
  progress.finish();
  if (!report) {
    std::cerr << "tandem eval: " << report.error().message << "\n";
    return 1;
  }
  if (!flags.plot.empty()) {
    const std::string title = flags.title.empty()
                                  ? flags.edge + " -> " + flags.cloud + " (" +
                                        std::to_string(report.value().rows_used) + " queries)"
                                  : flags.title;
    if (auto written =
            eval::write_file_atomically(flags.plot, eval::curves_svg(report.value(), title));
        !written) {
      std::cerr << "tandem eval: --plot: " << written.error().message << "\n";
      return 1;
    }
  }
  if (flags.json) {
    std::cout << eval::to_json(report.value()).dump(2) << "\n";
  } else {
    std::cout << eval::to_text(report.value());
    if (!flags.plot.empty()) {
      std::cout << "plot written to " << flags.plot << "\n";
    }
  }
  return 0;
}

}  // namespace

std::function<int()> add_eval_command(CLI::App& app) {
  auto flags = std::make_shared<EvalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "Replay labelled routing traces through the routing policies; print each policy's "
      "cost-quality curve (APGR, CPT) beside the random and oracle routers");
  cmd->add_option("--data", flags->data,
                  "routing trace files (JSONL, routing trace v1) or directories of them")
      ->required();
  cmd->add_option("--edge", flags->edge, "the edge model's name in the traces")->required();
  cmd->add_option("--cloud", flags->cloud, "the cloud model's name in the traces")->required();
  cmd->add_option("--mid", flags->mid, "a middle tier: also evaluate the three-tier cascade");
  cmd->add_option(
      "--policy", flags->policy,
      "one policy: confidence, learned, classifier, combined, gated, length, random or oracle "
      "(default: all)");
  cmd->add_option("--config", flags->config,
                  "a gateway configuration: its classifier is used and its thresholds' operating "
                  "point reported");
  cmd->add_option("--plot", flags->plot, "write the curves as an SVG file");
  cmd->add_option("--title", flags->title, "the plot's title");
  cmd->add_flag("--edge-cost-zero", flags->edge_cost_zero,
                "count the edge's answers as free (on-device) instead of the traces' prices");
  cmd->add_flag("--by-task", flags->by_task, "also report each task of the traces on its own");
  cmd->add_flag("--left-out-tasks", flags->left_out_tasks,
                "cross-fit the learned policies leaving one task out, instead of 5 folds by row "
                "id: their figures on tasks they have not seen");
  cmd->add_flag("--json", flags->json, "print one JSON object");
  add_no_progress_flag(*cmd, flags->no_progress);
  return [flags] { return run_eval(*flags); };
}

}  // namespace tandem::cli
