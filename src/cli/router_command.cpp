// `tandem router train | eval | explain`: fit the ingress complexity classifier on labelled
// routing traces, measure it, and show why it scores a prompt as it does. The work is in
// eval/router_training.h; this file parses flags and prints.

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "eval/router_training.h"

namespace tandem::cli {
namespace {

struct TrainFlags {
  std::vector<std::string> data;
  std::string edge;
  std::string cloud;
  std::string out;
  std::string l2 = "auto";
  double holdout = 0.2;
  uint64_t seed = 0;
  bool json = false;
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
  bool json = false;
};

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

void print_training(const eval::TrainingReport& report, const std::string& out) {
  std::printf("edge %s, cloud %s; label: the cloud's score is higher than the edge's\n",
              report.options.edge.c_str(), report.options.cloud.c_str());
  std::printf("rows: %zu read, %zu used, %zu skipped (missing a model); %zu train, %zu holdout\n",
              report.rows_read, report.rows_used, report.rows_skipped, report.train.rows,
              report.holdout.rows);
  std::printf("base rate (cloud needed): train %s, holdout %s\n",
              fixed(report.train.base_rate).c_str(), fixed(report.holdout.base_rate).c_str());
  if (report.l2_search.empty()) {
    std::printf("l2: %g (given)\n", report.l2);
  } else {
    std::printf("l2: %g, chosen by 5-fold cross-validation on the training split:\n", report.l2);
    for (const auto& candidate : report.l2_search) {
      std::printf("  l2 %-7g cv log-loss %s  cv AUC %s\n", candidate.l2,
                  fixed(candidate.cv_log_loss, 4).c_str(), fixed(candidate.cv_auc).c_str());
    }
  }
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
    std::printf("constant in the training data (weight 0):");
    for (const auto& name : report.constant_features) {
      std::printf(" %s", name.c_str());
    }
    std::printf("\n");
  }
  std::printf("wrote %s (version %s)\n", out.c_str(), std::string(report.model->version()).c_str());
}

int train(const TrainFlags& flags) {
  eval::TrainingOptions options;
  options.data_files = flags.data;
  options.edge = flags.edge;
  options.cloud = flags.cloud;
  options.holdout = flags.holdout;
  options.seed = flags.seed;
  if (flags.l2 != "auto") {
    try {
      size_t used = 0;
      options.l2 = std::stod(flags.l2, &used);
      if (used != flags.l2.size()) {
        throw std::invalid_argument(flags.l2);
      }
    } catch (const std::exception&) {
      std::cerr << "tandem router train: --l2: expected a number or 'auto', got '" << flags.l2
                << "'\n";
      return 2;
    }
  }
  auto report = eval::train_router(options);
  if (!report) {
    std::cerr << "tandem router train: " << report.error().message << "\n";
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
  auto report = eval::evaluate_router(model, flags.data, flags.edge, flags.cloud);
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
  std::printf("model %s (version %s); edge %s, cloud %s\n",
              flags.model.empty() ? "builtin" : flags.model.c_str(),
              std::string(model.version()).c_str(), flags.edge.c_str(), flags.cloud.c_str());
  std::printf("rows: %zu read, %zu used, %zu skipped (missing a model)\n", report->rows_read,
              report->metrics.rows, report->rows_skipped);
  std::printf("base rate (cloud needed) %s, AUC %s, log-loss %s\n",
              fixed(report->metrics.base_rate).c_str(), fixed(report->metrics.auc).c_str(),
              fixed(report->metrics.log_loss, 4).c_str());
  std::printf("routing at the model's suggested thresholds:\n");
  print_routing(report.value());
  return 0;
}

}  // namespace

std::function<int()> add_router_command(CLI::App& app) {
  auto train_flags = std::make_shared<TrainFlags>();
  auto eval_flags = std::make_shared<EvalFlags>();
  auto explain_flags = std::make_shared<ExplainFlags>();
  CLI::App* router = app.add_subcommand(
      "router", "Train and measure the ingress complexity classifier (docs/ROUTER_TRAINING.md)");
  router->require_subcommand(1);

  CLI::App* train_cmd = router->add_subcommand(
      "train",
      "Fit the complexity classifier on routing traces (JSONL, 'routing trace v1') for one "
      "edge/cloud model pair and write its weights");
  train_cmd->add_option("--data", train_flags->data, "Trace file (repeat for several)")
      ->required()
      ->check(CLI::ExistingFile);
  train_cmd->add_option("--edge", train_flags->edge, "The edge model's name in the traces")
      ->required();
  train_cmd->add_option("--cloud", train_flags->cloud, "The cloud model's name in the traces")
      ->required();
  train_cmd->add_option("--out", train_flags->out, "Where to write the weights (JSON)")->required();
  train_cmd
      ->add_option("--l2", train_flags->l2,
                   "L2 penalty on the weights, or 'auto': chosen by 5-fold cross-validation")
      ->capture_default_str();
  train_cmd
      ->add_option("--holdout", train_flags->holdout,
                   "Fraction of rows held out for evaluation (split by a hash of the row id)")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  train_cmd->add_option("--seed", train_flags->seed, "Salts the train/holdout split")
      ->capture_default_str();
  train_cmd->add_flag("--json", train_flags->json, "Print the report as one JSON object");

  CLI::App* eval_cmd = router->add_subcommand(
      "eval", "Score routing traces with a complexity model: AUC, cloud share and quality");
  eval_cmd->add_option("--model", eval_flags->model,
                       "Weights file (default: the built-in weights)");
  eval_cmd->add_option("--data", eval_flags->data, "Trace file (repeat for several)")
      ->required()
      ->check(CLI::ExistingFile);
  eval_cmd->add_option("--edge", eval_flags->edge, "The edge model's name in the traces")
      ->required();
  eval_cmd->add_option("--cloud", eval_flags->cloud, "The cloud model's name in the traces")
      ->required();
  eval_cmd->add_flag("--json", eval_flags->json, "Print the report as one JSON object");

  CLI::App* explain_cmd = router->add_subcommand(
      "explain", "Score one prompt and show which features moved the score, largest first");
  explain_cmd->add_option("prompt", explain_flags->prompt, "The (last) user message")->required();
  explain_cmd->add_option("--system", explain_flags->system, "A system prompt");
  explain_cmd->add_option("--model", explain_flags->model,
                          "Weights file (default: the built-in weights)");
  explain_cmd->add_option("--top", explain_flags->top, "How many features to show")
      ->capture_default_str();
  explain_cmd->add_flag("--json", explain_flags->json, "Print one JSON object");

  return [train_flags, eval_flags, explain_flags, train_cmd, explain_cmd] {
    if (train_cmd->parsed()) {
      return train(*train_flags);
    }
    return explain_cmd->parsed() ? explain(*explain_flags) : eval(*eval_flags);
  };
}

}  // namespace tandem::cli
