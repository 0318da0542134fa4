// `tandem router train | eval | explain` (train-task, pairs: router_task_command.cpp): fit the
// ingress complexity classifier on labelled routing traces, measure it, and show why it scores a
// prompt as it does. The work is in eval/router_training.h; this file parses flags and prints.

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/number_flag.h"
#include "cli/terminal_progress.h"
#include "eval/router_training.h"
#include "eval/server_traces.h"
#include "store/trace_log.h"

namespace tandem::cli {
namespace {

struct TrainFlags {
  std::vector<std::string> data;
  std::string traces;
  std::vector<std::string> common_sense;
  bool force = false;
  std::string edge;
  std::string cloud;
  std::vector<std::string> pairs;
  std::string out;
  std::string prior;
  std::string l2 = "auto";
  size_t max_slice_rows = 2000;
  size_t slice_weight_rows = 500;
  double holdout = 0.2;
  uint64_t seed = 0;
  bool json = false;
  bool no_progress = false;
};

struct ExplainFlags {
  std::string model;
  std::string prompt;
  std::string system;
  size_t top = 8;
  bool json = false;
};

struct EvalFlags {
  std::string model;
  std::vector<std::string> data;
  std::string edge;
  std::string cloud;
  std::vector<std::string> pairs;
  bool json = false;
  bool no_progress = false;
};

// --edge/--cloud, then each --pair EDGE,CLOUD, in that order: a row is labelled by the first
// pair it has both models of. Empty (after printing why) when none is usable.
std::vector<eval::ModelPair> model_pairs(const std::string& edge, const std::string& cloud,
                                         const std::vector<std::string>& pairs,
                                         const char* command) {
  std::vector<eval::ModelPair> out;
  if (!edge.empty() || !cloud.empty()) {
    if (edge.empty() || cloud.empty()) {
      std::cerr << "tandem router " << command << ": --edge and --cloud go together\n";
      return {};
    }
    out.push_back({edge, cloud});
  }
  for (const auto& pair : pairs) {
    const size_t comma = pair.find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 == pair.size() ||
        pair.find(',', comma + 1) != std::string::npos) {
      std::cerr << "tandem router " << command << ": --pair: expected EDGE,CLOUD, got '" << pair
                << "'\n";
      return {};
    }
    out.push_back({pair.substr(0, comma), pair.substr(comma + 1)});
  }
  if (out.empty()) {
    std::cerr << "tandem router " << command
              << ": no model pair: give --edge and --cloud, or --pair EDGE,CLOUD\n";
  }
  return out;
}

std::string fixed(double value, int digits = 3) {
  if (!std::isfinite(value)) {
    return "n/a";
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

void print_routing(const eval::EvaluationReport& report) {
  std::printf("  %-22s share %s  quality %s\n", "all edge", fixed(0.0, 2).c_str(),
              fixed(report.all_edge_quality).c_str());
  std::printf("  %-22s share %s  quality %s\n", "all cloud", fixed(1.0, 2).c_str(),
              fixed(report.all_cloud_quality).c_str());
  std::printf("  %-9s %-6s %-6s %-8s %-6s %-6s %s\n", "threshold", "target", "share", "quality",
              "kept", "gap", "random router");
  for (const auto& point : report.points) {
    std::printf("  %-9s %-6s %-6s %-8s %-6s %-6s %s\n", fixed(point.threshold).c_str(),
                fixed(point.target_share, 2).c_str(), fixed(point.cloud_share, 2).c_str(),
                fixed(point.quality).c_str(), fixed(point.quality_kept).c_str(),
                fixed(point.gap_recovered, 2).c_str(), fixed(point.random_quality).c_str());
  }
}

std::string l2_text(double l2) {
  return std::isinf(l2) ? std::string("prior-only") : fixed(l2, 0);
}

// " -0.046 [-0.069, -0.024]" (with a sign); blank when not measured.
std::string interval_text(const std::optional<eval::Interval>& interval) {
  if (!interval) {
    return std::string(26, ' ');
  }
  auto signed_text = [](double value) { return (value >= 0 ? "+" : "") + fixed(value); };
  return " " + signed_text(interval->estimate) + " [" + signed_text(interval->low) + ", " +
         signed_text(interval->high) + "]";
}

void print_left_out(const eval::LeftOutReport& report, const eval::LeftOutReport* prior) {
  if (report.slices.empty()) {
    return;
  }
  std::printf(
      "left out one %s at a time (fitted on the rest; APGR on the left-out rows; random 0.500;"
      " '*' = below the best baseline; slices under %zu rows not counted):\n",
      report.by.c_str(), eval::kMinSliceRows);
  std::printf(
      "  %-44s %6s %5s %7s %7s %7s %7s  %s\n", "source / task", "rows", "net", "router",
      prior != nullptr ? "prior" : "", "length", "best",
      report.noise_draws > 0 ? "router - length [95% interval]  router - best [95% interval]" : "");
  // One row per slice; `prior_slices` are the prior's figures for the same slices, if any.
  auto print_rows = [](const std::vector<eval::SliceResult>& slices,
                       const std::vector<eval::SliceResult>* prior_slices, bool mixed) {
    auto text = [](const std::optional<double>& value) {
      return value ? fixed(*value) : std::string("n/a");
    };
    for (size_t i = 0; i < slices.size(); ++i) {
      const auto& slice = slices[i];
      const std::string prior_text =
          prior_slices != nullptr && i < prior_slices->size() ? text((*prior_slices)[i].model) : "";
      const bool below = !mixed && slice.counted() && *slice.model < *slice.best_baseline();
      const std::string note = mixed              ? "  (mixed traffic)"
                               : !slice.counted() ? " (not counted)"
                                                  : "";
      std::printf("  %-44s %6zu %5ld %7s %7s %7s %7s%s%s%s\n",
                  (slice.source + " / " + (mixed ? "all tasks" : slice.task)).substr(0, 44).c_str(),
                  slice.rows, slice.net_gap_rows, text(slice.model).c_str(), prior_text.c_str(),
                  text(slice.length).c_str(), text(slice.best_baseline()).c_str(),
                  below ? " *" : "  ",
                  (interval_text(slice.versus_length) + interval_text(slice.versus_best)).c_str(),
                  note.c_str());
    }
  };
  print_rows(report.slices, prior != nullptr ? &prior->slices : nullptr, false);
  print_rows(report.mixed, prior != nullptr ? &prior->mixed : nullptr, true);
  std::printf(
      "  mean over %zu slices: router %s, length %s, best baseline %s; router >= best baseline "
      "on %zu of %zu\n",
      report.counted, fixed(report.mean_model).c_str(), fixed(report.mean_length).c_str(),
      fixed(report.mean_best_baseline).c_str(), report.at_least_baseline, report.counted);
  if (report.noise_draws > 0) {
    std::printf("  beyond chance (%zu paired resamples of each slice's rows, 95%%):\n",
                report.noise_draws);
    for (const auto& [name, summary] :
         {std::pair{"length", &report.versus_length}, {"the best baseline", &report.versus_best}}) {
      std::printf("    router - %s: below on %zu of %zu slices, above on %zu; mean%s\n", name,
                  summary->below, report.counted, summary->above,
                  interval_text(summary->mean).c_str());
    }
  }
  if (report.mean_incumbent) {
    std::printf("  the shipped weights on the same slices: mean %s\n",
                fixed(*report.mean_incumbent).c_str());
  }
}

// Per file and language, the pairs the new weights order right, beside the weights in service.
void print_common_sense(const eval::TrainingReport& report) {
  if (!report.common_sense) {
    return;
  }
  const eval::CommonSense& check = *report.common_sense;
  std::printf(
      "common sense (prompt pairs ordered; floor %.0f%% or the shipped weights' count): %s\n",
      100.0 * eval::kCommonSenseFloor, check.kept ? "kept" : "LOST");
  for (size_t i = 0; i < check.model.size(); ++i) {
    const eval::PairOrdering& row = check.model[i];
    std::printf("  %-44s %-4s %zu of %zu", row.file.c_str(), row.lang.c_str(), row.ordered,
                row.pairs);
    if (i < check.incumbent.size()) {
      std::printf(" (shipped weights: %zu)", check.incumbent[i].ordered);
    }
    std::printf("\n");
  }
}

void print_training(const eval::TrainingReport& report, const std::string& out) {
  std::printf("pairs %s; label: the cloud's score is higher than the edge's; prior %s\n",
              eval::describe(report.options.pairs).c_str(), report.prior_source.c_str());
  std::printf("rows: %zu read, %zu used, %zu skipped (missing a model); %zu train, %zu holdout\n",
              report.rows_read, report.rows_used, report.rows_skipped, report.train.rows,
              report.holdout.rows);
  std::printf("base rate (cloud needed): train %s, holdout %s\n",
              fixed(report.train.base_rate).c_str(), fixed(report.holdout.base_rate).c_str());
  std::printf("l2 (toward the prior): %s, %s\n", l2_text(report.l2).c_str(),
              report.l2_selection.c_str());
  for (const auto& candidate : report.l2_search) {
    std::printf("  l2 %-10s left-out tasks mean APGR %s  cv log-loss %s  cv AUC %s\n",
                l2_text(candidate.l2).c_str(), fixed(candidate.left_out_apgr).c_str(),
                fixed(candidate.cv_log_loss, 4).c_str(), fixed(candidate.cv_auc).c_str());
  }
  print_left_out(report.left_out_task, &report.left_out_task_prior);
  print_left_out(report.left_out_source, nullptr);
  std::printf("in distribution (fitted on the training split, measured on the holdout):\n");
  std::printf("%-9s %-6s %s\n", "", "AUC", "log-loss");
  std::printf("%-9s %-6s %s\n", "train", fixed(report.train.auc).c_str(),
              fixed(report.train.log_loss, 4).c_str());
  std::printf("%-9s %-6s %s\n", "holdout", fixed(report.holdout.auc).c_str(),
              fixed(report.holdout.log_loss, 4).c_str());
  std::printf(
      "holdout routing at thresholds chosen on the training split (quality: mean score "
      "of the routed answer; kept: / all cloud; gap: share of the edge-cloud gap "
      "recovered):\n");
  print_routing(report.holdout_routing);
  std::printf("most important features (weight per standard deviation):\n");
  for (const auto& [name, weight] : report.top_features) {
    std::printf("  %-20s %+.3f\n", name.c_str(), weight);
  }
  if (!report.constant_features.empty()) {
    std::printf("constant in the training data (the prior's weight kept):");
    for (const auto& name : report.constant_features) {
      std::printf(" %s", name.c_str());
    }
    std::printf("\n");
  }
  print_common_sense(report);
  if (!out.empty()) {
    std::printf("wrote %s (version %s)\n", out.c_str(),
                std::string(report.model->version()).c_str());
  }
}

// Why new weights were not accepted.
std::string refusal(const eval::TrainingReport& report) {
  if (report.common_sense && !report.common_sense->kept) {
    return "the new weights lose common sense on the prompt pairs (fewer ordered than the floor "
           "and than the shipped weights in some file and language)";
  }
  return "the new weights are worse than the shipped ones on the left-out tasks (mean APGR " +
         fixed(report.left_out_task.mean_model) + " < " +
         fixed(report.left_out_task.mean_incumbent.value_or(0.0)) + ")";
}

// The gateway's labelled traces as training rows; nullopt after printing why.
std::optional<std::vector<eval::TrainingExample>> trace_examples(const std::string& path,
                                                                 uint64_t seed) {
  auto db = store::open_trace_database(path);
  if (!db) {
    std::cerr << "tandem router train: " << db.error().message << "\n";
    return std::nullopt;
  }
  store::TraceLog log(std::move(db).value());
  store::TraceQuery query;
  query.labelled_only = true;
  auto records = log.read(query);
  if (!records) {
    std::cerr << "tandem router train: " << records.error().message << "\n";
    return std::nullopt;
  }
  auto server = eval::examples_from_traces(records.value(), seed);
  std::printf("%s: %zu labelled traces (%zu without the current prompt features skipped)\n",
              path.c_str(), server.examples.size(), server.without_features);
  return std::move(server.examples);
}

int train(const TrainFlags& flags) {
  eval::TrainingOptions options;
  options.data_files = flags.data;
  if (flags.data.empty() && flags.traces.empty()) {
    std::cerr << "tandem router train: give --data FILES (with model pairs) or --traces DB\n";
    return 2;
  }
  if (!flags.data.empty()) {
    options.pairs = model_pairs(flags.edge, flags.cloud, flags.pairs, "train");
    if (options.pairs.empty()) {
      return 2;
    }
  }
  if (!flags.traces.empty()) {
    auto examples = trace_examples(flags.traces, flags.seed);
    if (!examples) {
      return 1;
    }
    options.examples = std::move(examples).value();
    // A deployment's new weights must beat the ones it runs on the kinds left out.
    options.incumbent = &routing::ComplexityModel::builtin();
  }
  if (!flags.common_sense.empty()) {
    auto pairs = eval::load_prompt_pairs(flags.common_sense);
    if (!pairs) {
      std::cerr << "tandem router train: --common-sense: " << pairs.error().message << "\n";
      return 2;
    }
    if (pairs->empty()) {  // asked for a check that would check nothing
      std::cerr << "tandem router train: --common-sense: no prompt pairs in the files given\n";
      return 2;
    }
    options.common_sense = std::move(pairs).value();
  }
  options.prior = flags.prior;
  options.holdout = flags.holdout;
  options.seed = flags.seed;
  options.max_slice_rows = flags.max_slice_rows;
  options.slice_weight_rows = flags.slice_weight_rows;
  if (flags.l2 == "prior-only") {
    options.l2 = eval::kPriorOnly;
  } else if (flags.l2 != "auto") {
    options.l2 = parse_number(flags.l2);
    if (!options.l2) {
      std::cerr << "tandem router train: --l2: expected a number, 'auto' or 'prior-only', got '"
                << flags.l2 << "'\n";
      return 2;
    }
  }
  CommandProgress progress({.json = flags.json, .no_progress = flags.no_progress});
  auto report = eval::train_router(options, progress.progress());
  progress.finish();
  if (!report) {
    std::cerr << "tandem router train: " << report.error().message << "\n";
    return 1;
  }
  if (!report->accepted && !flags.force) {
    print_training(report.value(), "");
    std::cerr << "tandem router train: " << refusal(report.value())
              << ": nothing written (--force writes them anyway)\n";
    return 1;
  }
  const auto written = eval::write_file_atomically(flags.out, report->weights_file.dump(2) + "\n");
  if (!written) {
    std::cerr << "tandem router train: " << written.error().message << "\n";
    return 1;
  }
  if (flags.json) {
    auto out = eval::to_json(report.value());
    out["out"] = flags.out;
    std::cout << out.dump(2) << "\n";
  } else {
    print_training(report.value(), flags.out);
  }
  return 0;
}

// The weights file named by --model, or the built-in weights; nullopt (after printing why)
// when the file does not load.
std::optional<std::optional<routing::ComplexityModel>> load_model(const std::string& path,
                                                                  const char* command) {
  if (path.empty()) {
    return std::optional<routing::ComplexityModel>();
  }
  auto model = routing::ComplexityModel::load(path);
  if (!model) {
    std::cerr << "tandem router " << command << ": " << model.error().message << "\n";
    return std::nullopt;
  }
  return std::optional<routing::ComplexityModel>(std::move(model).value());
}

int explain(const ExplainFlags& flags) {
  const auto loaded = load_model(flags.model, "explain");
  if (!loaded) {
    return 1;
  }
  const routing::ComplexityModel& model = *loaded ? **loaded : routing::ComplexityModel::builtin();
  routing::PromptView view;
  view.system = flags.system;
  view.last_user = flags.prompt;
  view.total_chars = flags.system.size() + flags.prompt.size();
  const auto features = routing::extract_features(view);
  const double score = model.score(features);
  const auto contributions = model.explain(features, flags.top);
  if (flags.json) {
    nlohmann::ordered_json out;
    out["model"] = flags.model.empty() ? "builtin" : flags.model;
    out["version"] = model.version();
    out["score"] = score;
    out["logit"] = model.logit(features);
    out["bias"] = model.bias();
    auto& list = out["contributions"] = nlohmann::ordered_json::array();
    for (const auto& c : contributions) {
      list.push_back(
          {{"feature", c.feature}, {"value", c.value}, {"contribution", c.contribution}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf("P(cloud needed) %.4f  (logit %+.3f = bias %+.3f + contributions; model %s)\n", score,
              model.logit(features), model.bias(), std::string(model.version()).c_str());
  for (const auto& c : contributions) {
    std::printf("  %-20s value %-10.4g %+.3f\n", std::string(c.feature).c_str(),
                static_cast<double>(c.value), c.contribution);
  }
  return 0;
}

int eval(const EvalFlags& flags) {
  const auto loaded = load_model(flags.model, "eval");
  if (!loaded) {
    return 1;
  }
  const routing::ComplexityModel& model = *loaded ? **loaded : routing::ComplexityModel::builtin();
  const auto pairs = model_pairs(flags.edge, flags.cloud, flags.pairs, "eval");
  if (pairs.empty()) {
    return 2;
  }
  CommandProgress progress({.json = flags.json, .no_progress = flags.no_progress});
  auto report = eval::evaluate_router(model, flags.data, pairs, eval::default_cloud_shares(),
                                      progress.progress());
  progress.finish();
  if (!report) {
    std::cerr << "tandem router eval: " << report.error().message << "\n";
    return 1;
  }
  if (flags.json) {
    auto out = eval::to_json(report.value());
    out["model"] = flags.model.empty() ? "builtin" : flags.model;
    out["version"] = model.version();
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf("model %s (version %s); pairs %s\n",
              flags.model.empty() ? "builtin" : flags.model.c_str(),
              std::string(model.version()).c_str(), eval::describe(pairs).c_str());
  std::printf("rows: %zu read, %zu used, %zu skipped (missing a model)\n", report->rows_read,
              report->metrics.rows, report->rows_skipped);
  std::printf("base rate (cloud needed) %s, AUC %s, log-loss %s\n",
              fixed(report->metrics.base_rate).c_str(), fixed(report->metrics.auc).c_str(),
              fixed(report->metrics.log_loss, 4).c_str());
  std::printf("routing at the model's suggested thresholds:\n");
  print_routing(report.value());
  return 0;
}

void add_pair_options(CLI::App& command, std::string& edge, std::string& cloud,
                      std::vector<std::string>& pairs) {
  command.add_option("--edge", edge, "The edge model's name in the traces");
  command.add_option("--cloud", cloud, "The cloud model's name in the traces");
  command.add_option("--pair", pairs,
                     "Another EDGE,CLOUD pair for rows without the first (repeat for several "
                     "sources)");
}

CLI::App* add_train_subcommand(CLI::App& router, TrainFlags& flags) {
  CLI::App* train_cmd = router.add_subcommand(
      "train",
      "Fit the complexity classifier on routing traces (JSONL, 'routing trace v1') from the "
      "framework's prior, report it on left-out tasks and sources, and write its weights");
  train_cmd->add_option("--data", flags.data, "Trace file (repeat for several)")
      ->check(CLI::ExistingFile);
  train_cmd->add_option("--traces", flags.traces,
                        "The gateway's routing database: train on its labelled traffic too "
                        "(query kinds are the tasks left out); the weights are written only "
                        "when they beat the shipped ones on the left-out kinds");
  train_cmd
      ->add_option("--common-sense", flags.common_sense,
                   "Prompt pairs, one plainly harder (JSONL, as `router pairs` reads; repeat for "
                   "several): the weights are written only when they order at least 90% of each "
                   "file's pairs in each language, or as many as the shipped weights")
      ->check(CLI::ExistingFile);
  train_cmd->add_flag("--force", flags.force,
                      "Write the weights even when they lose to the shipped ones or lose "
                      "common sense");
  add_pair_options(*train_cmd, flags.edge, flags.cloud, flags.pairs);
  train_cmd->add_option("--out", flags.out, "Where to write the weights (JSON)")->required();
  train_cmd->add_option("--prior", flags.prior,
                        "Prior file (default: the shipped models/router/prior.json); 'none': "
                        "regularise toward 0");
  train_cmd
      ->add_option("--l2", flags.l2,
                   "L2 penalty toward the prior, 'prior-only', or 'auto': chosen by the mean APGR "
                   "on left-out tasks")
      ->capture_default_str();
  train_cmd
      ->add_option("--max-slice-rows", flags.max_slice_rows,
                   "Rows of one source's task used (chosen by hash); 0: all")
      ->capture_default_str();
  train_cmd
      ->add_option("--slice-weight-rows", flags.slice_weight_rows,
                   "A larger source/task slice weighs as much as this many rows; 0: no balancing")
      ->capture_default_str();
  train_cmd
      ->add_option("--holdout", flags.holdout,
                   "Fraction of rows held out for evaluation (split by a hash of the row id)")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  train_cmd->add_option("--seed", flags.seed, "Salts the train/holdout split")
      ->capture_default_str();
  train_cmd->add_flag("--json", flags.json, "Print the report as one JSON object");
  add_no_progress_flag(*train_cmd, flags.no_progress);
  return train_cmd;
}

CLI::App* add_eval_subcommand(CLI::App& router, EvalFlags& flags) {
  CLI::App* eval_cmd = router.add_subcommand(
      "eval", "Score routing traces with a complexity model: AUC, cloud share and quality");
  eval_cmd->add_option("--model", flags.model, "Weights file (default: the built-in weights)");
  eval_cmd->add_option("--data", flags.data, "Trace file (repeat for several)")
      ->required()
      ->check(CLI::ExistingFile);
  add_pair_options(*eval_cmd, flags.edge, flags.cloud, flags.pairs);
  eval_cmd->add_flag("--json", flags.json, "Print the report as one JSON object");
  add_no_progress_flag(*eval_cmd, flags.no_progress);
  return eval_cmd;
}

CLI::App* add_explain_subcommand(CLI::App& router, ExplainFlags& flags) {
  CLI::App* explain_cmd = router.add_subcommand(
      "explain", "Score one prompt and show which features moved the score, largest first");
  explain_cmd->add_option("prompt", flags.prompt, "The (last) user message")->required();
  explain_cmd->add_option("--system", flags.system, "A system prompt");
  explain_cmd->add_option("--model", flags.model, "Weights file (default: the built-in weights)");
  explain_cmd->add_option("--top", flags.top, "How many features to show")->capture_default_str();
  explain_cmd->add_flag("--json", flags.json, "Print one JSON object");
  return explain_cmd;
}

}  // namespace

std::function<int()> add_router_command(CLI::App& app) {
  auto train_flags = std::make_shared<TrainFlags>();
  auto eval_flags = std::make_shared<EvalFlags>();
  auto explain_flags = std::make_shared<ExplainFlags>();
  CLI::App* router = app.add_subcommand(
      "router", "Train and measure the ingress complexity classifier (docs/ROUTER_TRAINING.md)");
  router->require_subcommand(1);
  CLI::App* train_cmd = add_train_subcommand(*router, *train_flags);
  add_eval_subcommand(*router, *eval_flags);
  CLI::App* explain_cmd = add_explain_subcommand(*router, *explain_flags);
  auto train_task = add_router_task_commands(*router);

  return [train_flags, eval_flags, explain_flags, train_cmd, explain_cmd, train_task] {
    if (const int task_result = train_task(); task_result >= 0) {
      return task_result;
    }
    if (train_cmd->parsed()) {
      return train(*train_flags);
    }
    return explain_cmd->parsed() ? explain(*explain_flags) : eval(*eval_flags);
  };
}

}  // namespace tandem::cli
