#pragma once
// The ingress complexity classifier (pattern P2, "router at ingress"): a logistic regression
// over standardised prompt features that estimates P(the cloud model is needed), i.e. that the
// cloud answers better than the edge. Microseconds, no network, explainable: every score
// decomposes into per-feature contributions.
//
// Weights live in a JSON file ("tandem-complexity-model/1", written by `tandem router train`,
// described in docs/ROUTER_TRAINING.md); the shipped default is
// models/router/complexity-default.json, compiled into the binary.
//
// Thread-safety: immutable after construction; score() and explain() are safe from any thread.

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "routing/prompt_features.h"

namespace tandem::routing {

// One feature's share of a score: weight * standardised value (in logits).
struct FeatureContribution {
  std::string_view feature;
  float value = 0;  // the raw feature value
  double contribution = 0;
};

class ComplexityModel {
 public:
  // The weights file's format tag; parse() rejects any other.
  static constexpr std::string_view kFormat = "tandem-complexity-model/1";

  // Standardised values are clipped to this many standard deviations, so a prompt far outside
  // the training data (a 200,000-character paste) cannot dominate the logit by itself.
  static constexpr double kMaxStandardised = 5.0;

  // Parses a weights file. `source` names it in errors, which say what is wrong and where:
  // "w.json: features[3] (log_system_chars).std: must be > 0". Every feature of feature_names()
  // must appear exactly once (in any order); unknown names are rejected.
  static Result<ComplexityModel> parse(std::string_view json_text, std::string_view source);

  // Reads and parses a file (kNotFound if it cannot be read).
  static Result<ComplexityModel> load(const std::string& path);

  // The shipped default weights (models/router/complexity-default.json, embedded at build time
  // so the binary needs no file). Parsed once, on first use.
  static const ComplexityModel& builtin();

  // P(the cloud is needed) in [0, 1].
  double score(const PromptFeatures& features) const;

  // The logit of score(): bias + the sum of all contributions.
  double logit(const PromptFeatures& features) const;

  // The top_n contributions, largest |contribution| first (ties: feature order).
  std::vector<FeatureContribution> explain(const PromptFeatures& features, size_t top_n) const;

  // Recorded at training: edge/cloud model names, data files, rows, holdout AUC, base rate,
  // suggested thresholds for cloud shares... An object (empty if the file had none).
  const nlohmann::json& metadata() const { return metadata_; }

  // "sha256:" + the first 16 hex digits of the sha256 of the parameters (names, means, stds,
  // weights, bias; not the metadata): what decision records cite as the model's version.
  std::string_view version() const { return version_; }

  double bias() const { return bias_; }
  const std::array<double, kFeatureCount>& weights() const { return weights_; }
  const std::array<double, kFeatureCount>& means() const { return means_; }
  const std::array<double, kFeatureCount>& stds() const { return stds_; }

  // A model from parameters (the trainer builds one to evaluate it). stds must be > 0.
  static ComplexityModel from_parameters(const std::array<double, kFeatureCount>& means,
                                         const std::array<double, kFeatureCount>& stds,
                                         const std::array<double, kFeatureCount>& weights,
                                         double bias, nlohmann::json metadata);

  // The weights file: {format, features: [{name, mean, std, weight}], bias, metadata}.
  nlohmann::ordered_json to_json() const;

 private:
  ComplexityModel() = default;
  double standardised(const PromptFeatures& features, size_t i) const;

  std::array<double, kFeatureCount> means_{};
  std::array<double, kFeatureCount> stds_{};
  std::array<double, kFeatureCount> weights_{};
  double bias_ = 0;
  nlohmann::json metadata_ = nlohmann::json::object();
  std::string version_;
};

}  // namespace tandem::routing
