#pragma once
// The prior of the ingress classifier: the seeds' decision framework written as logistic
// weights over the prompt features (models/router/prior.json, "tandem-router-prior/1").
// Training (router_training.h) fits only the data's correction to these weights, under an L2
// penalty toward them, so what a few benchmark tasks teach cannot overturn the framework on
// traffic they do not cover.
//
// Thread-safety: immutable after construction.

#include <array>
#include <string>
#include <string_view>

#include "common/result.h"
#include "routing/prompt_features.h"

namespace tandem::eval {

class RouterPrior {
 public:
  static constexpr std::string_view kFormat = "tandem-router-prior/1";

  // Parses a prior file. Errors name the file and the field ("p.json: weights.foo: unknown
  // feature"). Features the file does not list have weight 0.
  static Result<RouterPrior> parse(std::string_view json_text, std::string_view source);
  static Result<RouterPrior> load(const std::string& path);

  // The shipped prior (models/router/prior.json, embedded at build time).
  static const RouterPrior& builtin();

  // A prior of zero weights: plain regularisation toward 0, the classic fit.
  static RouterPrior none();

  // Logit per unit of the raw feature value.
  double bias() const { return bias_; }
  const std::array<double, routing::kFeatureCount>& weights() const { return weights_; }
  const std::string& source() const { return source_; }
  // Features whose weight training keeps at the prior's ("fixed" in the file): judgements the
  // benchmark data cannot speak to, such as the task model's (every row of a benchmark task
  // asks the same kind of thing, so its labels only measure that model pair's quirks there).
  const std::array<bool, routing::kFeatureCount>& fixed() const { return fixed_; }

 private:
  double bias_ = 0;
  std::array<double, routing::kFeatureCount> weights_{};
  std::array<bool, routing::kFeatureCount> fixed_{};
  std::string source_;
};

}  // namespace tandem::eval
