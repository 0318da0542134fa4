// `tandem router train-task`: fit the task model (routing/task_model.h) on prompt pairs, report
// it with each pair file left out in turn, and write its weights. `tandem router pairs`: how
// a classifier orders such pairs and where the default threshold puts each side. The work is
// in eval/task_training.h and eval/pair_ordering.h; this file parses flags and prints.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/number_flag.h"
#include "cli/terminal_progress.h"
#include "eval/pair_ordering.h"
#include "eval/task_training.h"
#include "routing/router.h"

namespace tandem::cli {
namespace {

struct TaskFlags {
  std::vector<std::string> pairs;
  std::string out;
  std::string l2 = "auto";
  int iterations = 300;
  int request_weight = routing::kDefaultRequestWeight;
  bool json = false;
  bool no_progress = false;
};

double percent(size_t part, size_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

nlohmann::json report_json(const eval::TaskTrainingReport& report, const std::string& out) {
  nlohmann::json penalties = nlohmann::json::array();
  for (const auto& penalty : report.penalties) {
    penalties.push_back({{"l2", penalty.l2}, {"left_out_mean_ordered", penalty.left_out_mean}});
  }
  return {{"pairs", report.pairs},
          {"files", report.files},
          {"penalties", std::move(penalties)},
          {"l2", report.l2},
          {"request_weight", report.model.request_weight()},
          {"left_out", report.model.metadata().at("left_out")},
          {"train_ordered", report.train_ordered},
          {"version", report.model.version()},
          {"out", out}};
}

void print_report(const eval::TaskTrainingReport& report, const std::string& out) {
  std::printf("pairs: %zu from %zu files\n", report.pairs, report.files);
  std::printf("request weight: %u\n", static_cast<unsigned>(report.model.request_weight()));
  std::printf("l2 (chosen by the mean share ordered with each file left out): %g\n", report.l2);
  for (const auto& penalty : report.penalties) {
    std::printf("  l2 %-5g left-out mean ordered %.1f%%\n", penalty.l2,
                100.0 * penalty.left_out_mean);
  }
  std::printf("left out one file at a time (pairs, task model, length):\n");
  for (const auto& row : report.left_out) {
    std::printf("  %-44s %-3s %4zu  %5.1f%%  %5.1f%%\n", row.file.c_str(), row.lang.c_str(),
                row.pairs, percent(row.model_ordered, row.pairs),
                percent(row.length_ordered, row.pairs));
  }
  std::printf("ordered on all pairs by the final fit: %.1f%% (in distribution)\n",
              100.0 * report.train_ordered);
  std::printf("wrote %s (version %s)\n", out.c_str(), std::string(report.model.version()).c_str());
}

int train_task(const TaskFlags& flags) {
  eval::TaskTrainingOptions options;
  options.files = flags.pairs;
  options.iterations = flags.iterations;
  options.request_weight = static_cast<uint16_t>(flags.request_weight);
  if (flags.l2 != "auto") {
    options.l2 = parse_number(flags.l2);
    if (!options.l2) {
      std::cerr << "tandem router train-task: --l2: expected a number or 'auto', got '" << flags.l2
                << "'\n";
      return 1;
    }
  }
  CommandProgress progress({.json = flags.json, .no_progress = flags.no_progress});
  auto report = eval::train_task_model(options, progress.progress());
  progress.finish();
  if (!report) {
    std::cerr << "tandem router train-task: " << report.error().message << "\n";
    return 1;
  }
  std::ofstream file(flags.out, std::ios::binary | std::ios::trunc);
  file << report.value().model.to_json().dump() << "\n";
  if (!file.flush()) {
    std::cerr << "tandem router train-task: cannot write " << flags.out << "\n";
    return 1;
  }
  if (flags.json) {
    std::cout << report_json(report.value(), flags.out).dump(2) << "\n";
  } else {
    print_report(report.value(), flags.out);
  }
  return 0;
}

struct PairsFlags {
  std::vector<std::string> pairs;
  std::string model;
  std::string task_model;
  double cloud_share = config::IngressConfig{}.cloud_share;  // the default configuration's
  bool list = false;
  bool json = false;
};

nlohmann::json pairs_json(const std::vector<eval::PairOrdering>& rows, double threshold) {
  nlohmann::json out = {{"threshold", threshold}, {"rows", nlohmann::json::array()}};
  for (const auto& row : rows) {
    out["rows"].push_back({{"file", row.file},
                           {"lang", row.lang},
                           {"pairs", row.pairs},
                           {"ordered", row.ordered},
                           {"easy_on_edge", row.easy_on_edge},
                           {"hard_on_cloud", row.hard_on_cloud},
                           {"misordered", row.misordered}});
  }
  return out;
}

// Loads the weights file at `path` into `out` (left empty for an empty path: the built-in
// weights); false after printing why it could not.
template <typename Model>
bool load_into(const std::string& path, std::optional<Model>& out) {
  if (path.empty()) {
    return true;
  }
  auto model = Model::load(path);
  if (!model) {
    std::cerr << "tandem router pairs: " << model.error().message << "\n";
    return false;
  }
  out = std::move(model).value();
  return true;
}

int order_pairs(const PairsFlags& flags) {
  auto pairs = eval::load_prompt_pairs(flags.pairs);
  if (!pairs) {
    std::cerr << "tandem router pairs: " << pairs.error().message << "\n";
    return 1;
  }
  std::optional<routing::ComplexityModel> loaded;
  std::optional<routing::TaskModel> task_loaded;
  if (!load_into(flags.model, loaded) || !load_into(flags.task_model, task_loaded)) {
    return 1;
  }
  const auto& model = loaded ? *loaded : routing::ComplexityModel::builtin();
  const auto& task = task_loaded ? *task_loaded : routing::TaskModel::builtin();
  auto threshold = routing::threshold_for_share(model, flags.cloud_share);
  if (!threshold) {
    std::cerr << "tandem router pairs: " << threshold.error().message << "\n";
    return 1;
  }
  const auto rows = eval::order_pairs(pairs.value(), model, task, threshold.value());
  if (flags.json) {
    std::cout << pairs_json(rows, threshold.value()).dump(2) << "\n";
    return 0;
  }
  std::printf("threshold %.3f (cloud share %.2f of the classifier's training data)\n",
              threshold.value(), flags.cloud_share);
  std::printf("%-44s %-4s %5s  %-15s %-15s %-15s\n", "file", "lang", "pairs", "ordered",
              "easy on edge", "hard on cloud");
  for (const auto& row : rows) {
    std::printf("%-44s %-4s %5zu  %4zu (%5.1f%%)  %4zu (%5.1f%%)  %4zu (%5.1f%%)\n",
                row.file.c_str(), row.lang.c_str(), row.pairs, row.ordered,
                percent(row.ordered, row.pairs), row.easy_on_edge,
                percent(row.easy_on_edge, row.pairs), row.hard_on_cloud,
                percent(row.hard_on_cloud, row.pairs));
    if (flags.list && !row.misordered.empty()) {
      std::string ids;
      for (const auto& id : row.misordered) {
        ids += (ids.empty() ? "" : " ") + id;
      }
      std::printf("  misordered: %s\n", ids.c_str());
    }
  }
  return 0;
}

CLI::App* add_pairs_command(CLI::App& router, PairsFlags& flags) {
  CLI::App* command = router.add_subcommand(
      "pairs",
      "Order prompt pairs (one plainly harder) with a classifier: the share ordered right and "
      "where the default threshold puts each side, per file and language");
  command->add_option("--pairs", flags.pairs, "Pair file (JSONL; repeat for several)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--model", flags.model, "Classifier weights (default: the built-in ones)");
  command->add_option("--task-model", flags.task_model,
                      "Task model weights for the task_ngrams feature (default: the built-in "
                      "ones); measure a task model on pairs it was not trained on");
  command
      ->add_option("--cloud-share", flags.cloud_share,
                   "The threshold: this share of the classifier's training data goes to the "
                   "cloud (routing.ingress.cloud_share)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  command->add_flag("--list", flags.list, "List the ids of misordered pairs");
  command->add_flag("--json", flags.json, "Print one JSON object");
  return command;
}

}  // namespace

std::function<int()> add_router_task_commands(CLI::App& router) {
  auto pairs_flags = std::make_shared<PairsFlags>();
  CLI::App* pairs_command = add_pairs_command(router, *pairs_flags);
  auto flags = std::make_shared<TaskFlags>();
  CLI::App* command = router.add_subcommand(
      "train-task",
      "Fit the task model (hashed n-grams, a feature of the classifier) on prompt pairs where "
      "one is plainly harder, report it with each file left out, and write its weights");
  command->add_option("--pairs", flags->pairs, "Pair file (JSONL; repeat: at least two)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--out", flags->out, "Where to write the weights (JSON)")->required();
  command
      ->add_option("--l2", flags->l2,
                   "L2 penalty, or 'auto': chosen by the mean share ordered on left-out files")
      ->capture_default_str();
  command->add_option("--iterations", flags->iterations, "Gradient steps per fit")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      ->add_option("--request-weight", flags->request_weight,
                   "How many times an n-gram of the request counts against one of the material "
                   "it is about (1: every n-gram alike)")
      ->check(CLI::Range(1, int{routing::kMaxRequestWeight}))
      ->capture_default_str();
  command->add_flag("--json", flags->json, "Print the report as one JSON object");
  add_no_progress_flag(*command, flags->no_progress);
  return [flags, command, pairs_flags, pairs_command]() -> int {
    if (pairs_command->parsed()) {
      return order_pairs(*pairs_flags);
    }
    return command->parsed() ? train_task(*flags) : -1;
  };
}

}  // namespace tandem::cli
