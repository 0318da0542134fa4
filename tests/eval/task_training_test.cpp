// Training the task model on prompt pairs with each file left out (task_training.h), and
// measuring a classifier on pairs (pair_ordering.h).

#include "eval/task_training.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "../support/recording_progress.h"
#include "eval/pair_ordering.h"
#include "routing/router.h"

namespace tandem::eval {
namespace {

class PairFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tandem_task_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // Pairs in the shape of the real sets: easy asks to label, translate or convert something
  // (filler varies per file); hard asks to prove, design or analyse.
  std::string synthetic(const std::string& name, int seed) {
    const char* easy_asks[] = {"Translate this sentence", "Label the sentiment of",
                               "Convert the units in", "Extract the date from"};
    const char* hard_asks[] = {"Prove rigorously the claim in", "Design a scalable system for",
                               "Analyse the trade-offs and risks of", "Derive step by step"};
    const char* topics[] = {"the invoice",     "our weather data",     "the rental contract",
                            "a chess opening", "the school timetable", "the sales report"};
    std::string text;
    for (int i = 0; i < 24; ++i) {
      const std::string topic = topics[(i + seed) % 6];
      text +=
          nlohmann::json{{"id", name + "-" + std::to_string(i)},
                         {"lang", i % 2 == 0 ? "en" : "zh"},
                         {"family", "synthetic"},
                         {"easy", std::string(easy_asks[(i + seed) % 4]) + " " + topic + "."},
                         {"hard", std::string(hard_asks[(i * 3 + seed) % 4]) + " " + topic + "."}}
              .dump() +
          "\n";
    }
    return write(name, text);
  }

  std::filesystem::path dir_;
};

TEST_F(PairFiles, LeavesEachFileOutAndLearnsWhatTransfers) {
  TaskTrainingOptions options;
  options.files = {synthetic("a.jsonl", 0), synthetic("b.jsonl", 1), synthetic("c.jsonl", 2)};
  auto report = train_task_model(options);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->pairs, 72u);
  EXPECT_EQ(report->files, 3u);
  EXPECT_EQ(report->penalties.size(), task_penalty_candidates().size());
  ASSERT_EQ(report->left_out.size(), 6u);  // 3 files x 2 languages
  for (const auto& row : report->left_out) {
    EXPECT_EQ(row.pairs, 12u);
    EXPECT_EQ(row.model_ordered, 12u) << row.file << " " << row.lang;
  }
  EXPECT_EQ(report->train_ordered, 1.0);
  EXPECT_GT(report->model.logit("Prove rigorously the claim in the memo."),
            report->model.logit("Translate this sentence in the memo."));
  EXPECT_EQ(report->model.metadata().at("pairs"), 72);
  EXPECT_EQ(report->model.metadata().at("left_out").size(), 6u);
  // The stand-in for text the model cannot read: fitted from the cues ("prove", "design",
  // "analyse" are hard-task cues), read shares between chance and what held-out prompts reach.
  ASSERT_TRUE(report->model.stand_in());
  const auto& stand_in = *report->model.stand_in();
  EXPECT_GT(stand_in.chance, 0.0);
  EXPECT_LT(stand_in.chance, stand_in.full);
  EXPECT_LE(stand_in.full, 1.0);
  const auto hard_cue = std::find_if(
      stand_in.weights.begin(), stand_in.weights.end(),
      [](const auto& w) { return routing::feature_names()[w.first] == "hard_task_cues"; });
  ASSERT_NE(hard_cue, stand_in.weights.end());
  EXPECT_GT(hard_cue->second, 0.0);
  // Deterministic: the same files give the same weights.
  auto again = train_task_model(options);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->model.version(), report->model.version());
}

TEST_F(PairFiles, AFileInANewLanguageDoesNotSetHowMuchCountsAsRead) {
  // Left out, a file in a language no other file has is read no better than chance: its prompts
  // say nothing about what a trained language's unseen prompts reach, so `full` ignores them.
  std::string german;
  const char* easy[] = {"Übersetze diesen Satz ins Englische", "Wie spät ist es in Berlin",
                        "Rechne zwölf Meilen in Kilometer um", "Finde das Datum in der Mail"};
  const char* hard[] = {"Beweisen Sie lückenlos den Satz über", "Entwerfen Sie ein System für",
                        "Analysieren Sie die Risiken von", "Leiten Sie Schritt für Schritt her"};
  const char* topics[] = {"die Rechnung", "den Mietvertrag", "den Stundenplan", "die Bilanz"};
  for (int i = 0; i < 24; ++i) {
    german += nlohmann::json{{"id", "de-" + std::to_string(i)},
                             {"lang", "de"},
                             {"family", "synthetic"},
                             {"easy", std::string(easy[i % 4]) + " " + topics[(i / 4) % 4] + "."},
                             {"hard", std::string(hard[(i + 1) % 4]) + " " + topics[i % 4] + "."}}
                  .dump() +
              "\n";
  }
  TaskTrainingOptions options;
  options.files = {synthetic("a.jsonl", 0), synthetic("b.jsonl", 1), synthetic("c.jsonl", 2)};
  options.l2 = 0.1;
  auto without = train_task_model(options);
  options.files.push_back(write("de.jsonl", german));
  auto with = train_task_model(options);
  ASSERT_TRUE(without && with);
  ASSERT_TRUE(without->model.stand_in());
  ASSERT_TRUE(with->model.stand_in());
  EXPECT_NEAR(with->model.stand_in()->full, without->model.stand_in()->full, 0.1);
}

TEST_F(PairFiles, AGivenPenaltySkipsTheSearch) {
  TaskTrainingOptions options;
  options.files = {synthetic("a.jsonl", 0), synthetic("b.jsonl", 1)};
  options.l2 = 2.0;
  testing_support::RecordingProgress progress;
  auto report = train_task_model(options, progress);
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->penalties.size(), 1u);
  EXPECT_EQ(report->l2, 2.0);
  // Each file left out, then the final fit.
  ASSERT_EQ(progress.labels(), std::vector<std::string>{"fitting without each file"});
  EXPECT_EQ(progress.phases()[0].total, 3u);
  EXPECT_TRUE(progress.every_phase_completes());
}

TEST_F(PairFiles, BadInputIsRefusedNamingFileLineAndField) {
  const auto good = synthetic("good.jsonl", 0);
  TaskTrainingOptions one;
  one.files = {good};
  auto single = train_task_model(one);
  ASSERT_FALSE(single);
  EXPECT_NE(single.error().message.find("at least two"), std::string::npos);

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"id\": \"x\", \"lang\": \"en\", \"easy\": \"a\"}\n", "bad.jsonl:1: hard: missing"},
      {"\n{\"id\": \"x\", \"lang\": \"en\", \"easy\": \"\", \"hard\": \"b\"}\n",
       "bad.jsonl:2: easy: must be a non-empty string or a list of messages"},
      {"not json\n", "bad.jsonl:1: not JSON"},
      {"[1]\n", "bad.jsonl:1: must be a JSON object"},
      {"{\"id\": \"x\", \"lang\": \"en\", \"family\": 3, \"easy\": \"a\", \"hard\": \"b\"}\n",
       "bad.jsonl:1: family: must be a non-empty string"},
  };
  for (const auto& [text, expected] : cases) {
    TaskTrainingOptions options;
    options.files = {good, write("bad.jsonl", text)};
    auto report = train_task_model(options);
    ASSERT_FALSE(report) << text;
    EXPECT_NE(report.error().message.find(expected), std::string::npos) << report.error().message;
  }
  TaskTrainingOptions negative;
  negative.files = {good, synthetic("other.jsonl", 1)};
  negative.l2 = -1.0;
  EXPECT_FALSE(train_task_model(negative));
  EXPECT_FALSE(load_prompt_pairs({(dir_ / "missing.jsonl").string()}));
}

TEST_F(PairFiles, OrderingCountsEachSideAgainstTheThreshold) {
  auto pairs = load_prompt_pairs({synthetic("a.jsonl", 0)});
  ASSERT_TRUE(pairs);
  const auto& model = routing::ComplexityModel::builtin();
  const auto rows = order_pairs(pairs.value(), model, routing::TaskModel::builtin(), 2.0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].lang, "en");
  EXPECT_EQ(rows[0].pairs + rows[1].pairs, 24u);
  // A threshold above every score keeps everything on the edge.
  EXPECT_EQ(rows[0].easy_on_edge, rows[0].pairs);
  EXPECT_EQ(rows[0].hard_on_cloud, 0u);
  EXPECT_EQ(rows[0].ordered + rows[0].misordered.size(), rows[0].pairs);
  // A zero task model changes the feature, so the ordering is measured with the model given.
  const auto zero = routing::TaskModel::from_weights({}, 0.0, 1, {});
  const auto without = order_pairs(pairs.value(), model, zero, -1.0);
  EXPECT_EQ(without[0].hard_on_cloud, without[0].pairs);
}

}  // namespace
}  // namespace tandem::eval
