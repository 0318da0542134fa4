#include "eval/router_training.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "../support/recording_progress.h"
#include "eval/server_traces.h"

namespace tandem::eval {
namespace {

using routing::ComplexityModel;
using routing::feature_index;
using routing::kFeatureCount;
using routing::PromptFeatures;
using routing::PromptView;

PromptFeatures of(std::string_view user) {
  PromptView view;
  view.last_user = user;
  view.total_chars = user.size();
  return routing::extract_features(view);
}

// The sample lives in the repository (how it was drawn: docs/ROUTER_TRAINING.md, "Test data"), so
// the tests do not depend on ../shared.
constexpr const char* kSampleTraces = TANDEM_SOURCE_DIR "/tests/data/routing/sample-traces.jsonl";

class TempDir {
 public:
  TempDir() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("tandem-routing-") + info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name, const std::string& content) const {
    auto path = (path_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// ---- RouterTraining ----------------------------------------------------------------------

TrainingOptions sample_options() {
  TrainingOptions options;
  options.data_files = {kSampleTraces};
  options.pairs = {{"llama3.1-8b", "llama3.1-405b"}};
  return options;
}

TEST(RouterTraining, ReportsEachFitUpToThePhasesTotal) {
  testing_support::RecordingProgress progress;
  auto report = train_router(sample_options(), progress);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(progress.labels(),
            (std::vector<std::string>{"reading traces", "extracting prompt features",
                                      "choosing the L2 penalty", "leaving each source out",
                                      "fitting the model"}));
  EXPECT_TRUE(progress.every_phase_completes());
  EXPECT_EQ(progress.phases()[1].total, 555u);
  // Per penalty: 5 folds, and one fit per task left out (the traces have five).
  EXPECT_EQ(progress.phases()[2].total, std::size(kL2Grid) * (5 + 5));
  // A given penalty: each task left out for it and for the prior instead of the search.
  TrainingOptions given = sample_options();
  given.l2 = 10;
  testing_support::RecordingProgress fixed;
  ASSERT_TRUE(train_router(given, fixed).ok());
  EXPECT_EQ(fixed.phases()[2].label, "leaving each task out");
  EXPECT_EQ(fixed.phases()[2].total, 10u);
  EXPECT_TRUE(fixed.every_phase_completes());
}

TEST(RouterTraining, LoadsTraceRows) {
  auto rows = load_traces(kSampleTraces);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 555u);
  const auto& first = rows->front();
  EXPECT_EQ(first.id, "gsm8k/llama/train/0");
  EXPECT_FALSE(first.system.empty());
  EXPECT_EQ(first.score("llama3.1-8b"), 1.0);
  EXPECT_FALSE(first.score("gpt-4o").has_value());
  EXPECT_NE(first.location.find("sample-traces.jsonl:1"), std::string::npos);
  const auto& last = rows->back();  // RouteLLM rows have "system": null
  EXPECT_TRUE(last.system.empty());
  EXPECT_TRUE(last.score("gpt-4-1106-preview").has_value());
}

TEST(RouterTraining, TrainsOnTheSampleWithExpectedCounts) {
  auto report = train_router(sample_options());
  ASSERT_TRUE(report.ok()) << report.error().message;
  // 495 cascade-llama rows have both models; the 60 RouteLLM rows have neither.
  EXPECT_EQ(report->rows_read, 555u);
  EXPECT_EQ(report->rows_used, 495u);
  EXPECT_EQ(report->rows_skipped, 60u);
  EXPECT_EQ(report->train.rows + report->holdout.rows, 495u);
  EXPECT_GT(report->holdout.rows, 60u);
  EXPECT_LT(report->holdout.rows, 140u);
  const double positives = report->train.base_rate * static_cast<double>(report->train.rows) +
                           report->holdout.base_rate * static_cast<double>(report->holdout.rows);
  EXPECT_NEAR(positives, 96.0, 1e-6);  // rows where the 405B scores higher than the 8B
  EXPECT_TRUE(std::isfinite(report->train.auc));
  EXPECT_TRUE(std::isfinite(report->holdout.auc));
  EXPECT_TRUE(std::isfinite(report->holdout.log_loss));
  EXPECT_FALSE(report->l2_search.empty());
  EXPECT_EQ(report->holdout_routing.points.size(), default_cloud_shares().size());
  for (const auto& point : report->holdout_routing.points) {
    EXPECT_GE(point.cloud_share, 0.0);
    EXPECT_LE(point.cloud_share, 1.0);
    EXPECT_GE(point.quality, 0.0);
    EXPECT_LE(point.quality, 1.0);
  }
  EXPECT_EQ(report->top_features.size(), 10u);
  // log_turns and log_history_chars never vary in single-turn traces.
  EXPECT_NE(
      std::find(report->constant_features.begin(), report->constant_features.end(), "log_turns"),
      report->constant_features.end());

  // The weights file is what ComplexityModel reads, with the training's metadata.
  auto model = ComplexityModel::parse(report->weights_file.dump(), "trained.json");
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->version(), report->model->version());
  nlohmann::json metadata = model->metadata();  // a copy: [] on a missing key gives null
  EXPECT_EQ(metadata["pairs"][0]["edge"], "llama3.1-8b");
  EXPECT_EQ(metadata["pairs"][0]["cloud"], "llama3.1-405b");
  EXPECT_EQ(metadata["prior"], "models/router/prior.json");
  EXPECT_EQ(metadata["rows"]["used"], 495);
  EXPECT_EQ(metadata["rows"]["skipped"], 60);
  EXPECT_EQ(metadata["thresholds"].size(), default_cloud_shares().size());
  EXPECT_EQ(metadata["feature_names"].size(), kFeatureCount);
  EXPECT_TRUE(metadata.contains("created_at"));
  EXPECT_EQ(metadata["version"], std::string(model->version()));

  const auto json = to_json(report.value());
  EXPECT_EQ(json["rows"]["skipped"], 60);
  EXPECT_EQ(json["holdout_routing"]["thresholds"].size(), default_cloud_shares().size());
}

TEST(RouterTraining, IsDeterministic) {
  auto a = train_router(sample_options());
  auto b = train_router(sample_options());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->model->weights(), b->model->weights());
  EXPECT_EQ(a->model->bias(), b->model->bias());
  EXPECT_EQ(a->model->means(), b->model->means());
  EXPECT_EQ(a->model->version(), b->model->version());
  EXPECT_EQ(a->l2, b->l2);
  EXPECT_EQ(a->holdout.rows, b->holdout.rows);

  auto options = sample_options();
  options.seed = 7;  // another split: other rows held out, the same shipped model
  auto c = train_router(options);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->holdout.log_loss, c->holdout.log_loss);
  EXPECT_EQ(a->model->version(), c->model->version());  // fitted on all rows either way
}

TEST(RouterTraining, GivenL2SkipsTheSearchAndShrinksWeights) {
  auto options = sample_options();
  options.prior = "none";  // the classic ridge fit: toward 0
  options.l2 = 1.0;
  auto weak = train_router(options);
  options.l2 = 1e6;
  auto strong = train_router(options);
  ASSERT_TRUE(weak.ok() && strong.ok());
  EXPECT_GT(weak->train.auc, 0.5);  // fitted to the data, it ranks its own rows
  EXPECT_TRUE(weak->l2_search.empty());
  EXPECT_EQ(weak->l2, 1.0);
  double weak_norm = 0;
  double strong_norm = 0;
  for (size_t i = 0; i < kFeatureCount; ++i) {
    weak_norm += weak->model->weights()[i] * weak->model->weights()[i];
    strong_norm += strong->model->weights()[i] * strong->model->weights()[i];
  }
  EXPECT_LT(strong_norm, weak_norm / 100);
}

// 400 trace rows where the small model fails exactly the proof requests (every fourth).
std::string planted_proofs(const std::string& id_prefix) {
  std::ostringstream traces;
  for (int i = 0; i < 400; ++i) {
    const bool hard = i % 4 == 0;
    const std::string prompt = hard ? "Prove the lemma number " + std::to_string(i) + "."
                                    : "Tell me about item number " + std::to_string(i) + ".";
    traces << nlohmann::json{{"id", id_prefix + "/" + std::to_string(i)},
                             {"prompt", prompt},
                             {"models",
                              {{"small", {{"score", hard ? 0.0 : 1.0}}},
                               {"big", {{"score", 1.0}}}}}}
                  .dump()
           << "\n";
  }
  return traces.str();
}

TEST(RouterTraining, RecoversAPlantedSignal) {
  // The cloud is needed exactly when the prompt asks for a proof: the fit must find it.
  TempDir dir;
  TrainingOptions options;
  options.data_files = {dir.file("planted.jsonl", planted_proofs("planted"))};
  options.pairs = {{"small", "big"}};
  auto report = train_router(options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_GT(report->holdout.auc, 0.99);
  EXPECT_GT(report->model->weights()[feature_index("hard_task_cues")], 0.0);
  EXPECT_GT(report->model->score(of("Prove the lemma number 9999.")), 0.5);
  EXPECT_LT(report->model->score(of("Tell me about item number 9999.")), 0.5);
  // Routing the top quarter to the cloud recovers the whole gap.
  bool found = false;
  for (const auto& point : report->holdout_routing.points) {
    if (point.target_share == 0.3) {
      found = true;
      EXPECT_NEAR(point.quality, 1.0, 1e-12);
      EXPECT_NEAR(point.gap_recovered, 1.0, 1e-12);
    }
  }
  EXPECT_TRUE(found);
}

TEST(RouterTraining, MalformedLinesNameFileAndLine) {
  TempDir dir;
  const std::string good =
      R"({"id": "a", "prompt": "p", "models": {"e": {"score": 1}, "c": {"score": 0}}})";
  const auto check = [&](const std::string& bad, const std::string& expected) {
    const auto path = dir.file("bad.jsonl", good + "\n\n" + bad + "\n");
    auto rows = load_traces(path);
    ASSERT_FALSE(rows.ok()) << bad;
    EXPECT_EQ(rows.error().message.rfind(path + ":3: ", 0), 0u) << rows.error().message;
    EXPECT_NE(rows.error().message.find(expected), std::string::npos) << rows.error().message;
  };
  check("{not json", "invalid JSON");
  check(R"({"prompt": "p", "models": {}})", "id: missing");
  check(R"({"id": "b", "models": {}})", "prompt: missing");
  check(R"({"id": "b", "prompt": "p"})", "models: missing");
  check(R"({"id": "b", "prompt": "p", "system": 3, "models": {}})", "system: must be");
  check(R"({"id": "b", "prompt": "p", "models": {"e": {"correct": 1}}})",
        "models.e.score: missing");
  check(R"({"id": "b", "prompt": "p", "models": {"e": {"score": "high"}}})",
        "models.e.score: must be a number");
  // Found by the routing_traces fuzz target: scores outside [0, 1] were accepted.
  check(R"({"id": "b", "prompt": "p", "models": {"e": {"score": 10}}})",
        "models.e.score: must be a number in [0, 1], got 10");
  check("[1, 2, 3]", "expected a JSON object");

  // Training passes the same message through.
  TrainingOptions options;
  options.data_files = {dir.file("bad2.jsonl", good + "\n{oops\n")};
  options.pairs = {{"e", "c"}};
  auto report = train_router(options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message.find("bad2.jsonl:2: invalid JSON"), std::string::npos)
      << report.error().message;

  options.data_files = {(dir.path() / "missing.jsonl").string()};
  report = train_router(options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, ErrorCode::kNotFound);
}

TEST(RouterTraining, UnknownModelListsTheModelsPresent) {
  auto options = sample_options();
  options.pairs[0].edge = "gpt-5-nano";
  auto report = train_router(options);
  ASSERT_FALSE(report.ok());
  const auto& message = report.error().message;
  EXPECT_NE(message.find("edge model 'gpt-5-nano' is not in the data"), std::string::npos)
      << message;
  for (const char* present :
       {"gpt-4-1106-preview", "llama3.1-405b", "llama3.1-70b", "llama3.1-8b", "llama3.2-1b",
        "llama3.2-3b", "mistralai/Mixtral-8x7B-Instruct-v0.1"}) {
    EXPECT_NE(message.find(present), std::string::npos) << present << " in " << message;
  }

  options = sample_options();
  options.pairs[0].cloud = "llama3.1-8b";
  report = train_router(options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message.find("the same"), std::string::npos);

  options = sample_options();
  options.holdout = 1.5;
  EXPECT_FALSE(train_router(options).ok());
}

TEST(RouterTraining, OneClassLabelsAreAnError) {
  TempDir dir;
  std::ostringstream traces;
  for (int i = 0; i < 50; ++i) {
    traces << R"({"id": ")" << i << R"(", "prompt": "q", "models": {"e": {"score": 1}, )"
           << R"("c": {"score": 1}}})"
           << "\n";
  }
  TrainingOptions options;
  options.data_files = {dir.file("ties.jsonl", traces.str())};
  options.pairs = {{"e", "c"}};
  auto report = train_router(options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message.find("never"), std::string::npos) << report.error().message;
}

TEST(RouterTraining, EvaluatesAModelOnOtherPairs) {
  auto report = evaluate_router(ComplexityModel::builtin(), {kSampleTraces},
                                {{"mistralai/Mixtral-8x7B-Instruct-v0.1", "gpt-4-1106-preview"}});
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->rows_read, 555u);
  EXPECT_EQ(report->metrics.rows, 60u);
  EXPECT_EQ(report->rows_skipped, 495u);
  // The builtin model's suggested thresholds are used as they are.
  EXPECT_EQ(
      report->points.size(),
      ComplexityModel::builtin().metadata().value("thresholds", nlohmann::json::array()).size());
  EXPECT_LE(report->all_edge_quality, 1.0);
  EXPECT_EQ(to_json(report.value())["rows"]["used"], 60);
}

TEST(RouterTraining, EachSourceIsLabelledByItsOwnPair) {
  auto options = sample_options();
  options.pairs.push_back({"mistralai/Mixtral-8x7B-Instruct-v0.1", "gpt-4-1106-preview"});
  auto report = train_router(options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->rows_used, 555u);  // the RouteLLM rows now count, by the second pair
  EXPECT_EQ(report->rows_skipped, 0u);

  // A pair absent from every row is an error naming it, not a silent skip.
  options.pairs.push_back({"nobody", "gpt-4-1106-preview"});
  auto missing = train_router(options);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("'nobody'"), std::string::npos);
}

TEST(RouterTraining, ReportsEachLeftOutTaskAndSourceBesideTheBaselines) {
  auto options = sample_options();
  options.pairs.push_back({"mistralai/Mixtral-8x7B-Instruct-v0.1", "gpt-4-1106-preview"});
  auto report = train_router(options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->l2_selection, "mean APGR on left-out tasks");
  // Five tasks (mmlu from two sources): six slices, each scored by a model that never saw
  // its task, beside the length baseline on the same rows.
  ASSERT_EQ(report->left_out_task.slices.size(), 6u);
  for (const auto& slice : report->left_out_task.slices) {
    EXPECT_FALSE(slice.source.empty());
    ASSERT_TRUE(slice.model.has_value()) << slice.task;
    ASSERT_TRUE(slice.length.has_value()) << slice.task;
    EXPECT_GE(*slice.best_baseline(), 0.5);
    EXPECT_NEAR(*slice.turns, 0.5, 1e-9);  // single-turn rows: the turn count ties everywhere
  }
  EXPECT_EQ(report->left_out_task_prior.slices.size(), 6u);
  EXPECT_EQ(report->left_out_source.by, "source");
  EXPECT_EQ(report->left_out_source.mixed.size(), 2u);  // one mixed-traffic row per source
  EXPECT_EQ(report->left_out_task.mixed.size(), 2u);
  // The chosen penalty is the candidate with the best left-out mean.
  double best = 0;
  for (const auto& candidate : report->l2_search) {
    best = std::max(best, candidate.left_out_apgr);
  }
  EXPECT_DOUBLE_EQ(report->left_out_task.mean_model, best);
  const auto json = to_json(report.value());
  EXPECT_EQ(json["left_out"]["task"]["slices"].size(), 6u);
  EXPECT_TRUE(json["left_out"]["source"].contains("mixed_traffic"));
  // Each left-out slice's difference from the baselines comes with its bootstrap interval.
  for (const auto* left_out : {&report->left_out_task, &report->left_out_source}) {
    EXPECT_GT(left_out->noise_draws, 0u);
    ASSERT_TRUE(left_out->versus_length.mean.has_value());
    for (const auto& slice : left_out->slices) {
      ASSERT_TRUE(slice.versus_best.has_value()) << slice.task;
      EXPECT_LE(slice.versus_best->low, slice.versus_best->high);
    }
  }
  const auto& noise = json["left_out"]["task"]["versus_length"];
  EXPECT_EQ(noise["resamples"], report->left_out_task.noise_draws);
  EXPECT_TRUE(noise["mean"].contains("low"));
  EXPECT_TRUE(json["left_out"]["task"]["slices"][0]["versus_best_baseline"].contains("high"));
}

TEST(RouterTraining, PriorOnlyKeepsThePriorsWeights) {
  auto options = sample_options();
  options.l2 = kPriorOnly;
  auto report = train_router(options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const auto& prior = RouterPrior::builtin();
  for (size_t i = 0; i < kFeatureCount; ++i) {
    // Standardised weight = the prior's weight per raw unit times the feature's scale.
    EXPECT_NEAR(report->model->weights()[i], prior.weights()[i] * report->model->stds()[i], 1e-12)
        << routing::feature_names()[i];
  }
  EXPECT_EQ(to_json(report.value())["l2"], "prior-only");
}

// A deployment's labelled traffic as the gateway records it: prompt features, the query kind
// and whether the edge's answer was judged good. Proof requests are where the edge fails.
std::vector<store::TraceRecord> planted_traces() {
  const char* kinds[] = {"math", "factoid", "open", "code"};
  std::vector<store::TraceRecord> records;
  for (int i = 0; i < 400; ++i) {
    store::TraceRecord r;
    r.id = i;
    r.request_id = "chatcmpl-" + std::to_string(i);
    r.kind = kinds[i % 4];
    const bool hard = i % 3 == 0;
    const std::string prompt = hard ? "Prove the lemma number " + std::to_string(i) + "."
                                    : "Tell me about item number " + std::to_string(i) + ".";
    const auto features = of(prompt);
    r.features.assign(features.values.begin(), features.values.end());
    r.edge_good = !hard;
    records.push_back(std::move(r));
  }
  store::TraceRecord unlabelled;
  unlabelled.features.assign(kFeatureCount, 0.0f);
  records.push_back(unlabelled);
  store::TraceRecord old_features;  // recorded by a version with another feature set
  old_features.edge_good = true;
  old_features.features.assign(3, 0.0f);
  records.push_back(old_features);
  return records;
}

TEST(RouterTraining, LearnsFromTheGatewaysLabelledTraces) {
  const auto server = examples_from_traces(planted_traces(), 0);
  EXPECT_EQ(server.rows_read, 402u);
  EXPECT_EQ(server.unlabelled, 1u);
  EXPECT_EQ(server.without_features, 1u);
  ASSERT_EQ(server.examples.size(), 400u);
  EXPECT_EQ(server.examples[0].label, 1);  // "Prove...": the edge failed, the cloud was needed
  EXPECT_EQ(server.examples[1].label, 0);
  EXPECT_EQ(server.examples[1].task, "factoid");
  EXPECT_EQ(server.examples[1].source, "traces");

  // An incumbent that ranks backwards: the new weights beat it on every kind left out.
  const auto& builtin = ComplexityModel::builtin();
  auto inverted_weights = builtin.weights();
  for (auto& w : inverted_weights) {
    w = -w;
  }
  const auto inverted = ComplexityModel::from_parameters(
      builtin.means(), builtin.stds(), inverted_weights, builtin.bias(), nlohmann::json::object());
  TrainingOptions options;
  options.examples = server.examples;
  options.incumbent = &inverted;
  auto report = train_router(options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->rows_used, 400u);
  EXPECT_EQ(report->left_out_task.slices.size(), 4u);  // one per kind
  ASSERT_TRUE(report->left_out_task.mean_incumbent.has_value());
  EXPECT_GT(report->left_out_task.mean_model, *report->left_out_task.mean_incumbent);
  EXPECT_TRUE(report->accepted);
  EXPECT_TRUE(to_json(report.value())["accepted"].get<bool>());

  // Against itself as the incumbent, a fit can only tie or lose out of sample: accepted means
  // "at least as good", measured, never assumed.
  const ComplexityModel fitted = *report->model;
  options.incumbent = &fitted;
  auto again = train_router(options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->accepted,
            again->left_out_task.mean_model >= *again->left_out_task.mean_incumbent);
}

TEST(RouterTraining, AFixedFeatureKeepsThePriorsWeightWhateverTheData) {
  // The data says proofs need the cloud; a prior that fixes hard_task_cues at -1 keeps it at
  // -1 (per raw unit), while a free feature moves.
  TempDir dir;
  TrainingOptions options;
  options.data_files = {dir.file("fixed.jsonl", planted_proofs("fixed"))};
  options.pairs = {{"small", "big"}};
  options.l2 = 1.0;
  options.prior = dir.file("prior.json", R"({"format": "tandem-router-prior/1", "bias": 0,
      "weights": {"hard_task_cues": -1, "log_chars": 0.5}, "fixed": ["hard_task_cues"]})");
  auto report = train_router(options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const size_t fixed = feature_index("hard_task_cues");
  EXPECT_NEAR(report->model->weights()[fixed], -1.0 * report->model->stds()[fixed], 1e-12);
  const size_t free = feature_index("log_chars");
  EXPECT_GT(std::abs(report->model->weights()[free] - 0.5 * report->model->stds()[free]), 1e-3);
}

TEST(RouterPrior, FixedNamesKnownFeatures) {
  auto parsed = RouterPrior::parse(
      R"({"format": "tandem-router-prior/1", "bias": 0, "weights": {}, "fixed": ["task_ngrams"]})",
      "p.json");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_TRUE(parsed->fixed()[feature_index("task_ngrams")]);
  EXPECT_FALSE(parsed->fixed()[feature_index("log_chars")]);
  EXPECT_TRUE(RouterPrior::builtin().fixed()[feature_index("task_ngrams")]);
  auto bad = RouterPrior::parse(
      R"({"format": "tandem-router-prior/1", "bias": 0, "weights": {}, "fixed": ["nope"]})",
      "p.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "p.json: fixed[0]: unknown feature \"nope\"");
  EXPECT_FALSE(
      RouterPrior::parse(
          R"({"format": "tandem-router-prior/1", "bias": 0, "weights": {}, "fixed": 1})", "p.json")
          .ok());
}

TEST(RouterPrior, ParsesTheShippedPriorAndRejectsBadFilesNamingTheField) {
  const auto& prior = RouterPrior::builtin();
  EXPECT_GT(prior.weights()[feature_index("hard_task_cues")], 0.0);
  EXPECT_LT(prior.weights()[feature_index("easy_task_cues")], 0.0);
  auto error = [](const std::string& text) {
    auto parsed = RouterPrior::parse(text, "p.json");
    EXPECT_FALSE(parsed.ok()) << text;
    return parsed.ok() ? std::string() : parsed.error().message;
  };
  EXPECT_EQ(error("[]"), "p.json: not a JSON object");
  EXPECT_NE(error(R"({"format": "x", "bias": 0, "weights": {}})").find("format"),
            std::string::npos);
  EXPECT_EQ(error(R"({"format": "tandem-router-prior/1", "bias": 0, "weights": {"nope": 1}})"),
            "p.json: weights.nope: unknown feature");
  EXPECT_EQ(
      error(R"({"format": "tandem-router-prior/1", "bias": 0, "weights": {"log_chars": "a"}})"),
      "p.json: weights.log_chars: must be a finite number");
  EXPECT_NE(error(R"({"format": "tandem-router-prior/1", "weights": {}})").find("bias"),
            std::string::npos);
  EXPECT_EQ(RouterPrior::load("/nonexistent/prior.json").error().code, ErrorCode::kNotFound);
}

TEST(RouterTraining, WritesFilesAtomically) {
  TempDir dir;
  const auto path = (dir.path() / "weights.json").string();
  ASSERT_TRUE(write_file_atomically(path, "first").ok());
  ASSERT_TRUE(write_file_atomically(path, "second").ok());
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "second");
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
  }
  EXPECT_EQ(files, 1u);  // no temporary left behind
  EXPECT_FALSE(write_file_atomically((dir.path() / "no/such/dir/w.json").string(), "x").ok());
}

}  // namespace
}  // namespace tandem::eval
