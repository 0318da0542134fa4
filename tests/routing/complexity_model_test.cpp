#include "routing/complexity_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <gtest/gtest.h>

namespace tandem::routing {
namespace {

// The sample lives in the repository (how it was drawn: docs/ROUTER_TRAINING.md, "Test data"), so
// the tests do not depend on ../shared.
constexpr const char* kSampleTraces = TANDEM_SOURCE_DIR "/tests/data/routing/sample-traces.jsonl";
constexpr const char* kShippedWeights = TANDEM_SOURCE_DIR "/models/router/complexity-default.json";

PromptFeatures of(std::string_view user) {
  PromptView view;
  view.last_user = user;
  view.total_chars = user.size();
  return extract_features(view);
}

// A valid weights file with every feature, as a JSON value the tests can break.
nlohmann::json valid_weights() {
  nlohmann::json root;
  root["format"] = ComplexityModel::kFormat;
  root["bias"] = -1.0;
  root["features"] = nlohmann::json::array();
  for (size_t i = 0; i < kFeatureCount; ++i) {
    root["features"].push_back({{"name", feature_names()[i]},
                                {"mean", 0.5},
                                {"std", 2.0},
                                {"weight", 0.1 * static_cast<double>(i % 5) - 0.2}});
  }
  root["metadata"] = {{"edge", "small"}, {"cloud", "large"}};
  return root;
}

std::string parse_error(const std::string& text) {
  auto parsed = ComplexityModel::parse(text, "w.json");
  EXPECT_FALSE(parsed.ok());
  return parsed.ok() ? std::string() : parsed.error().message;
}

// ---- ComplexityModel ---------------------------------------------------------------------

TEST(ComplexityModel, ParsesAValidFile) {
  auto model = ComplexityModel::parse(valid_weights().dump(), "w.json");
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->bias(), -1.0);
  EXPECT_EQ(model->metadata().value("edge", ""), "small");
  EXPECT_EQ(model->version().substr(0, 7), "sha256:");
  EXPECT_EQ(model->version().size(), 7u + 16u);
}

TEST(ComplexityModel, FeaturesMayComeInAnyOrder) {
  auto weights = valid_weights();
  auto reversed = weights;
  std::reverse(reversed["features"].begin(), reversed["features"].end());
  auto a = ComplexityModel::parse(weights.dump(), "a.json");
  auto b = ComplexityModel::parse(reversed.dump(), "b.json");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->version(), b->version());
  const auto f = of("Prove that 2 + 2 = 4.");
  EXPECT_EQ(a->score(f), b->score(f));
}

TEST(ComplexityModel, VersionIgnoresMetadataButNotWeights) {
  auto weights = valid_weights();
  const auto base = ComplexityModel::parse(weights.dump(), "w.json");
  weights["metadata"]["created_at"] = "tomorrow";
  const auto same = ComplexityModel::parse(weights.dump(), "w.json");
  weights["features"][0]["weight"] = 0.123;
  const auto other = ComplexityModel::parse(weights.dump(), "w.json");
  ASSERT_TRUE(base.ok() && same.ok() && other.ok());
  EXPECT_EQ(base->version(), same->version());
  EXPECT_NE(base->version(), other->version());
}

TEST(ComplexityModel, RejectsWrongFeatureCount) {
  auto weights = valid_weights();
  weights["features"].erase(weights["features"].size() - 1);
  const auto message = parse_error(weights.dump());
  EXPECT_NE(message.find("w.json"), std::string::npos) << message;
  EXPECT_NE(message.find("features: expected " + std::to_string(kFeatureCount)), std::string::npos)
      << message;
  EXPECT_NE(message.find("got " + std::to_string(kFeatureCount - 1)), std::string::npos) << message;
}

TEST(ComplexityModel, RejectsNaNAndInfinity) {
  auto text = valid_weights().dump();
  const auto at = text.find("\"weight\":");
  auto nan_text = text;
  nan_text.replace(at, std::string("\"weight\":").size(), "\"weight\":NaN,\"x\":");
  const auto message = parse_error(nan_text);
  EXPECT_NE(message.find("w.json"), std::string::npos) << message;
  EXPECT_NE(message.find("NaN"), std::string::npos) << message;

  auto weights = valid_weights();
  weights["bias"] = "nan";
  EXPECT_NE(parse_error(weights.dump()).find("bias: must be a number"), std::string::npos);
  weights = valid_weights();
  weights["features"][2]["mean"] = 12345.5;
  auto infinite_text = weights.dump();
  infinite_text.replace(infinite_text.find("12345.5"), 7, "1e400");  // parses as infinity
  const auto infinite = parse_error(infinite_text);
  EXPECT_NE(infinite.find("1e400"), std::string::npos) << infinite;
}

TEST(ComplexityModel, RejectsMissingFieldsNamingThem) {
  auto weights = valid_weights();
  weights["features"][3].erase("weight");
  auto message = parse_error(weights.dump());
  EXPECT_NE(message.find("features[3] (" + std::string(feature_names()[3]) + ").weight: missing"),
            std::string::npos)
      << message;

  weights = valid_weights();
  weights.erase("bias");
  EXPECT_NE(parse_error(weights.dump()).find("bias: missing"), std::string::npos);

  weights = valid_weights();
  weights.erase("features");
  EXPECT_NE(parse_error(weights.dump()).find("features: missing"), std::string::npos);

  weights = valid_weights();
  weights.erase("format");
  EXPECT_NE(parse_error(weights.dump()).find("format: missing"), std::string::npos);

  weights = valid_weights();
  weights["format"] = "something-else/2";
  EXPECT_NE(parse_error(weights.dump()).find("not supported"), std::string::npos);

  EXPECT_NE(parse_error("{\"format\": ").find("invalid JSON"), std::string::npos);
  EXPECT_NE(parse_error("[1, 2]").find("expected a JSON object"), std::string::npos);
}

TEST(ComplexityModel, RejectsWrongFeatureNames) {
  auto weights = valid_weights();
  weights["features"][4]["name"] = "vibes";
  auto message = parse_error(weights.dump());
  EXPECT_NE(message.find("features[4].name: unknown feature \"vibes\""), std::string::npos)
      << message;

  weights = valid_weights();
  weights["features"][4]["name"] = weights["features"][5]["name"];
  message = parse_error(weights.dump());
  EXPECT_NE(message.find("appears twice"), std::string::npos) << message;

  weights = valid_weights();
  weights["features"][6]["std"] = 0.0;
  message = parse_error(weights.dump());
  EXPECT_NE(message.find("features[6] (" + std::string(feature_names()[6]) + ").std: must be > 0"),
            std::string::npos)
      << message;
}

TEST(ComplexityModel, LoadReportsMissingFile) {
  auto model = ComplexityModel::load("/nonexistent/weights.json");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::kNotFound);
  EXPECT_NE(model.error().message.find("/nonexistent/weights.json"), std::string::npos);
}

TEST(ComplexityModel, BuiltinIsTheShippedFileAndScoresInUnitInterval) {
  const auto& builtin = ComplexityModel::builtin();
  EXPECT_FALSE(builtin.metadata().contains("error")) << builtin.metadata().dump();
  auto shipped = ComplexityModel::load(kShippedWeights);
  ASSERT_TRUE(shipped.ok()) << shipped.error().message;
  EXPECT_EQ(builtin.version(), shipped->version());
  ASSERT_TRUE(builtin.metadata().contains("pairs"));
  EXPECT_EQ(builtin.metadata()["pairs"].size(), 3u);  // one per source of the shared traces
  EXPECT_TRUE(builtin.metadata().contains("left_out"));
  EXPECT_TRUE(builtin.metadata().contains("thresholds"));

  std::string huge(200'000, 'x');
  for (const std::string_view prompt :
       {std::string_view(""), std::string_view("hi"), std::string_view(huge),
        std::string_view("Prove that there are infinitely many primes, step by step."),
        std::string_view("\xe4\xbd\xa0\xe5\xa5\xbd")}) {
    const double score = builtin.score(of(prompt));
    EXPECT_GE(score, 0.0);
    EXPECT_LE(score, 1.0);
    EXPECT_TRUE(std::isfinite(score));
  }
}

TEST(ComplexityModel, ExplainSumsToLogitMinusBias) {
  const auto& model = ComplexityModel::builtin();
  const auto f =
      of("Which of the following is NOT a function of the liver?\nA. Bile\nB. Insulin\nC. Urea\n"
         "D. Glycogen");
  const auto all = model.explain(f, kFeatureCount);
  ASSERT_EQ(all.size(), kFeatureCount);
  double sum = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    sum += all[i].contribution;
    if (i > 0) {
      EXPECT_GE(std::abs(all[i - 1].contribution), std::abs(all[i].contribution));
    }
  }
  EXPECT_NEAR(sum, model.logit(f) - model.bias(), 1e-12);
  EXPECT_NEAR(model.score(f), 1.0 / (1.0 + std::exp(-model.logit(f))), 1e-15);

  const auto top = model.explain(f, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].feature, all[0].feature);
  EXPECT_EQ(top[0].value, f.values[feature_index(top[0].feature)]);
  EXPECT_TRUE(model.explain(f, 0).empty());
}

TEST(ComplexityModel, ExtremeValuesAreClipped) {
  auto weights = valid_weights();
  for (auto& feature : weights["features"]) {
    feature["weight"] = 0.0;
  }
  weights["features"][0]["weight"] = 1.0;  // log_chars, mean 0.5, std 2
  weights["bias"] = 0.0;
  auto model = ComplexityModel::parse(weights.dump(), "w.json");
  ASSERT_TRUE(model.ok());
  std::string huge(1'000'000, 'a');
  EXPECT_DOUBLE_EQ(model->logit(of(huge)), ComplexityModel::kMaxStandardised);
}

TEST(ComplexityModel, RoundTripsThroughJson) {
  const auto& model = ComplexityModel::builtin();
  auto again = ComplexityModel::parse(model.to_json().dump(), "again.json");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->version(), model.version());
  const auto f = of("Summarise this paragraph in one sentence.");
  EXPECT_EQ(again->score(f), model.score(f));
}

}  // namespace
}  // namespace tandem::routing
