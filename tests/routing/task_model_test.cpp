// The task model's n-grams (task_ngrams.h) and weights file (task_model.h).

#include "routing/task_model.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "routing/prompt_features.h"
#include "routing/prompt_scanner.h"
#include "routing/thread_task.h"

namespace tandem::routing {
namespace {

// Every n-gram counted once unless a request weight is given.
NgramVector ngrams_of(std::string_view text, uint16_t request_weight = 1) {
  NgramVector ngrams;
  hashed_ngrams(text, request_weight, ngrams);
  return ngrams;
}

float value_of(const NgramVector& ngrams, const NgramVector& single) {
  for (size_t i = 0; i < ngrams.buckets.size(); ++i) {
    if (ngrams.buckets[i] == single.buckets.at(0)) {
      return ngrams.values[i];
    }
  }
  return 0.0f;
}

double norm(const NgramVector& ngrams) {
  double sum = 0;
  for (float value : ngrams.values) {
    sum += static_cast<double>(value) * value;
  }
  return std::sqrt(sum);
}

TEST(TaskNgramsTest, WordsGiveUnigramsAndBigramsOfUnitNorm) {
  const auto ngrams = ngrams_of("Prove the theorem");
  EXPECT_EQ(ngrams.buckets.size(), 5u);  // 3 words + 2 bigrams (no collision at this size)
  EXPECT_NEAR(norm(ngrams), 1.0, 1e-6);
  for (uint32_t bucket : ngrams.buckets) {
    EXPECT_LT(bucket, kNgramBuckets);
  }
}

TEST(TaskNgramsTest, CaseAndNumbersDoNotChangeTheTask) {
  const auto a = ngrams_of("Convert 12 miles to km");
  const auto b = ngrams_of("convert 7 MILES to KM");
  EXPECT_EQ(std::set<uint32_t>(a.buckets.begin(), a.buckets.end()),
            std::set<uint32_t>(b.buckets.begin(), b.buckets.end()));
}

TEST(TaskNgramsTest, PunctuationBreaksBigramsAndSpaceDoesNot) {
  EXPECT_EQ(ngrams_of("design system").buckets.size(), 3u);
  EXPECT_EQ(ngrams_of("design. system").buckets.size(), 2u);
  EXPECT_EQ(ngrams_of("design，system").buckets.size(), 2u);  // a full-width comma
  EXPECT_EQ(ngrams_of("كلمة أخرى").buckets.size(), 3u);
  EXPECT_EQ(ngrams_of("كلمة، أخرى").buckets.size(), 2u);  // the Arabic comma
  EXPECT_EQ(ngrams_of("एक। दो").buckets.size(), 2u);      // the danda
}

TEST(TaskNgramsTest, ChineseGivesCharacterUnigramsAndBigrams) {
  EXPECT_EQ(ngrams_of("证明定理").buckets.size(), 7u);  // 4 characters + 3 bigrams
  EXPECT_EQ(ngrams_of("证明。定理").buckets.size(), 6u);
}

TEST(TaskNgramsTest, RepeatsCountLogarithmically) {
  const auto once = ngrams_of("yes");
  const auto thrice = ngrams_of("yes yes yes");
  ASSERT_EQ(once.buckets.size(), 1u);
  ASSERT_EQ(thrice.buckets.size(), 2u);  // "yes" and "yes yes"
  EXPECT_NEAR(norm(thrice), 1.0, 1e-6);
}

TEST(TaskNgramsTest, OnlyTheHeadAndTailOfALongPromptCount) {
  const std::string head = "Classify the sentiment of this review. ";
  const std::string tail = " Answer with one word.";
  std::string middle_a(5000, 'x');
  std::string middle_b;
  for (int i = 0; i < 1000; ++i) {
    middle_b += "prove design analyse ";
  }
  auto a = ngrams_of(head + middle_a + tail);
  auto b = ngrams_of(head + std::string(kNgramWindowBytes, 'x') + middle_b +
                     std::string(kNgramWindowBytes, 'x') + tail);
  // Both windows read the same bytes except the run of x's, which is one token either way.
  EXPECT_EQ(std::set<uint32_t>(a.buckets.begin(), a.buckets.end()),
            std::set<uint32_t>(b.buckets.begin(), b.buckets.end()));
}

TEST(TaskNgramsTest, AnyBytesAreAcceptedAndTheBufferIsReused) {
  NgramVector ngrams;
  hashed_ngrams(std::string("\xff\xfe\xc3 ok \xe4\xb8", 9), kDefaultRequestWeight, ngrams);
  EXPECT_FALSE(ngrams.buckets.empty());
  hashed_ngrams("", kDefaultRequestWeight, ngrams);
  EXPECT_TRUE(ngrams.buckets.empty());
  EXPECT_TRUE(ngrams.values.empty());
  // A window cut inside a multi-byte character moves to its boundary.
  std::string chinese;
  for (int i = 0; i < 1000; ++i) {
    chinese += "证";
  }
  hashed_ngrams(chinese, kDefaultRequestWeight, ngrams);
  EXPECT_EQ(ngrams.buckets.size(), 2u);  // 证 and 证证
}

TEST(TaskNgramsTest, TheRequestOutweighsTheMaterialItIsAbout) {
  const std::string text =
      "Which vendor does this paragraph name? \"Acme Cloud will design and analyse a failover "
      "architecture for the outage.\"";
  const auto plain = ngrams_of(text, 1);
  const auto weighted = ngrams_of(text, 3);
  // The same n-grams either way; only their values move.
  EXPECT_EQ(std::set<uint32_t>(plain.buckets.begin(), plain.buckets.end()),
            std::set<uint32_t>(weighted.buckets.begin(), weighted.buckets.end()));
  EXPECT_NEAR(norm(weighted), 1.0, 1e-6);
  const auto vendor = ngrams_of("vendor");
  const auto design = ngrams_of("design");
  EXPECT_FLOAT_EQ(value_of(plain, vendor), value_of(plain, design));
  EXPECT_GT(value_of(weighted, vendor), 1.5f * value_of(weighted, design));
}

TEST(TaskNgramsTest, WeightOneCountsAsBeforeRequestSpans) {
  // A line break is a space to the tokenizer, so at weight 1 (one run, as the models trained
  // before request spans read it) bigrams cross the lines; a higher weight reads the request
  // and the material apart, and the chain breaks where they meet.
  const std::string text = "Translate this email into French\nDear Anna\nBest Tom";
  EXPECT_EQ(ngrams_of(text, 1).buckets.size(), 17u);  // 9 words + 8 bigrams
  EXPECT_EQ(ngrams_of(text, 2).buckets.size(), 15u);  // 9 words + 4 + 1 + 1 bigrams
  NgramVector clamped;
  hashed_ngrams(text, 0, clamped);  // out of range: counted as 1
  EXPECT_TRUE(clamped.buckets == ngrams_of(text, 1).buckets);
}

TEST(TaskModelTest, TheShippedModelParsesAndSeparatesThePlainCases) {
  const TaskModel& model = TaskModel::builtin();
  EXPECT_FALSE(model.metadata().contains("error")) << model.metadata().dump();
  EXPECT_LT(model.logit("Translate 'good morning' into French."), 0.0);
  EXPECT_GT(model.logit("Prove that there are infinitely many primes, then design a research plan "
                        "for the twin prime conjecture."),
            0.0);
  EXPECT_LT(model.logit("把这句话翻译成英文：今天天气很好。"), 0.0);
  EXPECT_GT(model.logit("设计一个支持千万用户的分布式消息系统，分析一致性与可用性的取舍。"), 0.0);
}

TEST(TaskModelTest, AFileRoundTripsWithItsVersion) {
  std::vector<float> weights(kNgramBuckets, 0.0f);
  weights[3] = 0.25f;
  weights[70] = -1.123456789f;
  const TaskModel model = TaskModel::from_weights(weights, 0.5, 3, {{"note", "test"}});
  auto parsed = TaskModel::parse(model.to_json().dump(), "t.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value().version(), model.version());
  EXPECT_EQ(parsed.value().request_weight(), 3);
  EXPECT_EQ(parsed.value().weights()[70], model.weights()[70]);
  EXPECT_EQ(parsed.value().metadata().at("note"), "test");
  EXPECT_EQ(model.to_json().at("weights").size(), 2u);
}

TEST(TaskModelTest, TheRequestWeightIsPartOfTheModel) {
  std::vector<float> weights(kNgramBuckets, 0.0f);
  weights[3] = 0.25f;
  const TaskModel plain = TaskModel::from_weights(weights, 0.5, 1, {});
  const TaskModel weighted = TaskModel::from_weights(weights, 0.5, 3, {});
  EXPECT_NE(plain.version(), weighted.version());
  // A file written before the field existed counted every n-gram once.
  auto json = plain.to_json();
  json.erase("request_weight");
  auto parsed = TaskModel::parse(json.dump(), "old.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value().request_weight(), 1);
  EXPECT_EQ(parsed.value().version(), plain.version());
}

TEST(TaskModelTest, BadFilesAreRefusedNamingTheField) {
  const std::string head =
      R"({"format": "tandem-task-model/1", "buckets": 65536, "window_bytes": 1024, )";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not JSON"},
      {R"({"format": "other"})", "format"},
      {R"({"format": "tandem-task-model/1", "buckets": 1024, "window_bytes": 1024})", "buckets"},
      {R"({"format": "tandem-task-model/1", "buckets": 65536, "window_bytes": 8})", "window_bytes"},
      {head + R"("weights": []})", "bias: missing"},
      {head + R"("bias": "x", "weights": []})", "bias: must be a number"},
      {head + R"("bias": 0, "weights": {}})", "weights: must be an array"},
      {head + R"("bias": 0, "weights": [[70000, 1]]})", "weights[0]: bucket 70000"},
      {head + R"("bias": 0, "weights": [[-1, 1]]})", "weights[0]: bucket -1"},
      {head + R"("bias": 0, "weights": [[1, 1], [1, 2]]})", "weights[1]: bucket 1 appears twice"},
      {head + R"("bias": 0, "weights": [[1]]})", "weights[0]: must be [bucket, weight]"},
      {head + R"("bias": 0, "weights": [[1, "w"]]})", "weights[0]: must be a number"},
      {head + R"("bias": 0, "request_weight": 0, "weights": []})", "request_weight: must be"},
      {head + R"("bias": 0, "request_weight": 17, "weights": []})", "request_weight: must be"},
      {head + R"("bias": 0, "request_weight": 2.5, "weights": []})", "request_weight: must be"},
  };
  for (const auto& [text, expected] : cases) {
    auto parsed = TaskModel::parse(text, "t.json");
    ASSERT_FALSE(parsed) << text;
    EXPECT_NE(parsed.error().message.find("t.json: "), std::string::npos);
    EXPECT_NE(parsed.error().message.find(expected), std::string::npos)
        << text << " -> " << parsed.error().message;
  }
  EXPECT_FALSE(TaskModel::load("/nonexistent/task.json"));
}

TEST(TaskModelTest, TheFeatureIsTheTaskModelsLogitClipped) {
  PromptView view;
  view.last_user = "Summarise this in one line.";
  const size_t index = feature_index("task_ngrams");
  ASSERT_LT(index, kFeatureCount);
  const auto features = extract_features(view);
  EXPECT_NEAR(features.values[index], TaskModel::builtin().logit(view.last_user), 1e-5);
  std::vector<float> weights(kNgramBuckets, 0.0f);
  const TaskModel huge = TaskModel::from_weights(weights, 1000.0, 1, {});
  EXPECT_EQ(extract_features(view, huge).values[index], 12.0f);
}

// A model that weighs only the n-grams of one English request, with a stand-in that reads the
// hard-task cue: text it cannot read is judged by the stand-in, text it reads by its logit.
TaskModel reading_model() {
  std::vector<float> weights(kNgramBuckets, 0.0f);
  const NgramVector known = ngrams_of("translate this short sentence into english");
  for (const uint32_t bucket : known.buckets) {
    weights[bucket] = -1.0f;
  }
  TaskStandIn stand_in;
  stand_in.chance = 0.2;
  stand_in.full = 0.6;
  stand_in.bias = -0.5;
  stand_in.weights = {{static_cast<uint8_t>(feature_index("hard_task_cues")), 3.0}};
  return TaskModel::from_weights(weights, 0.25, 1, {}, stand_in);
}

double feature_of(const TaskModel& model, std::string_view text) {
  PromptView view;
  view.last_user = text;
  return extract_features(view, model).values[feature_index("task_ngrams")];
}

TEST(TaskStandInTest, TextTheModelCannotReadIsJudgedByTheStandIn) {
  const TaskModel model = reading_model();
  const std::string read = "translate this short sentence into english";
  EXPECT_NEAR(model.read_share(ngrams_of(read)), 1.0, 1e-5);
  EXPECT_NEAR(feature_of(model, read), model.logit(read), 1e-5);
  // German, none of whose n-grams the model weighed: the stand-in, from the cue "Beweisen".
  const std::string unread = "Beweisen Sie den Satz von Pythagoras.";
  EXPECT_LT(model.read_share(ngrams_of(unread)), 0.2);
  PromptFeatures cues;
  scan_prompt_text(unread, cues);
  ASSERT_GT(cues.values[feature_index("hard_task_cues")], 0.0f);
  EXPECT_NEAR(feature_of(model, unread), model.stand_in()->predict(cues.values), 1e-5);
  EXPECT_GT(feature_of(model, unread), 0.0);
}

TEST(TaskStandInTest, OneReadGivesTheLogitAndHowMuchIsRead) {
  const TaskModel model = reading_model();
  for (const std::string_view text :
       {"translate this short sentence into english", "Beweisen Sie den Satz von Pythagoras.",
        "translate diesen Satz"}) {
    const PromptRequest request = find_prompt_request(text);
    NgramVector ngrams;
    hashed_ngrams(request, model.request_weight(), ngrams);
    const TaskModel::Reading read = model.read(request);
    EXPECT_NEAR(read.logit, model.logit(request), 1e-9) << text;
    EXPECT_NEAR(read.reading, model.stand_in()->reading(model.read_share(ngrams)), 1e-9) << text;
  }
  // Without a stand-in the n-grams always decide.
  const TaskModel bare = TaskModel::from_weights(model.weights(), model.bias(), 1, {});
  EXPECT_EQ(bare.read(find_prompt_request("Beweisen Sie den Satz.")).reading, 1.0);
}

TEST(TaskStandInTest, AFollowUpInheritsTheStandInsJudgementOfAThreadItCannotRead) {
  const TaskModel model = reading_model();
  // The same German follow-up after a hard request (the cue "Beweisen") and an easy one: the
  // model reads neither, its stand-in tells them apart.
  const std::vector<std::string_view> hard = {"Beweisen Sie den Satz von Pythagoras."};
  const std::vector<std::string_view> easy = {"Wie spät ist es in Berlin?"};
  EXPECT_GT(thread_task_value(hard, "Weiter", model), 0.0);
  EXPECT_EQ(thread_task_value(easy, "Weiter", model), 0.0);
  // A model without a stand-in reads both at its bias alone, which is not hard.
  const TaskModel bare = TaskModel::from_weights(model.weights(), model.bias() - 1, 1, {});
  EXPECT_EQ(thread_task_value(hard, "Weiter", bare), 0.0);
}

TEST(TaskStandInTest, ReadingRisesFromChanceToFull) {
  TaskStandIn stand_in;
  stand_in.chance = 0.2;
  stand_in.full = 0.6;
  EXPECT_EQ(stand_in.reading(0.1), 0.0);
  EXPECT_NEAR(stand_in.reading(0.4), 0.5, 1e-12);
  EXPECT_EQ(stand_in.reading(0.9), 1.0);
}

TEST(TaskStandInTest, AFileRoundTripsAndTheStandInIsPartOfTheVersion) {
  const TaskModel model = reading_model();
  const TaskModel bare = TaskModel::from_weights(model.weights(), model.bias(), 1, {});
  EXPECT_NE(model.version(), bare.version());
  auto parsed = TaskModel::parse(model.to_json().dump(), "t.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value().version(), model.version());
  ASSERT_TRUE(parsed.value().stand_in());
  EXPECT_EQ(parsed.value().stand_in()->weights, model.stand_in()->weights);
  EXPECT_FALSE(bare.stand_in());
  EXPECT_FALSE(bare.to_json().contains("stand_in"));
}

TEST(TaskStandInTest, BadStandInsAreRefusedNamingTheField) {
  const std::string head =
      R"({"format": "tandem-task-model/1", "buckets": 65536, "window_bytes": 1024, "bias": 0,)"
      R"( "weights": [], "stand_in": )";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "t.json: stand_in: must be an object"},
      {R"({"chance": 0.5, "full": 0.4, "bias": 0, "weights": {}})", "0 <= chance < full <= 1"},
      {R"({"chance": 0.1, "full": 1.5, "bias": 0, "weights": {}})", "0 <= chance < full <= 1"},
      {R"({"chance": 0.1, "full": 0.5, "weights": {}})", "stand_in.bias: must be a finite"},
      {R"({"chance": 0.1, "full": 0.5, "bias": 0, "weights": []})", "stand_in.weights: must be"},
      {R"({"chance": 0.1, "full": 0.5, "bias": 0, "weights": {"nope": 1}})",
       "stand_in.weights.nope: no such feature"},
      {R"({"chance": 0.1, "full": 0.5, "bias": 0, "weights": {"hard_task_cues": "x"}})",
       "stand_in.weights.hard_task_cues: must be a finite number"},
  };
  for (const auto& [stand_in, expected] : cases) {
    auto parsed = TaskModel::parse(head + stand_in + "}", "t.json");
    ASSERT_FALSE(parsed) << stand_in;
    EXPECT_NE(parsed.error().message.find(expected), std::string::npos)
        << stand_in << " -> " << parsed.error().message;
  }
}

// The shipped model's stand-in: a plainly hard German request now reads as hard, its easy twin
// as easy, where both used to get the model's bias.
TEST(TaskStandInTest, TheShippedModelJudgesOtherLanguagesByTheirCues) {
  const TaskModel& model = TaskModel::builtin();
  ASSERT_TRUE(model.stand_in());
  EXPECT_GT(feature_of(model,
                       "Beweisen Sie, dass es unendlich viele Primzahlen gibt, und "
                       "erklären Sie jeden Schritt."),
            0.0);
  EXPECT_LT(feature_of(model, "Übersetze bitte „Guten Morgen“ ins Englische."), 0.0);
}

}  // namespace
}  // namespace tandem::routing
