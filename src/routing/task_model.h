#pragma once
// The task model: the seeds' decision framework learned from examples. A logistic regression
// over hashed n-grams (task_ngrams.h), trained on pairs of prompts where one is plainly harder
// than the other (`tandem router train-task`, bench/data/router_dev_pairs*.jsonl), says how far
// a prompt's task is from "classify, extract, translate, look up" toward "prove, design,
// analyse, write". Its logit is one feature of the ingress classifier (prompt_features.h,
// `task_ngrams`), so the classifier's prior and training weigh it beside length and structure.
//
// Weights live in a JSON file ("tandem-task-model/1"); the shipped one,
// models/router/task-model.json, is compiled into the binary and is the one the features use.
//
// Thread-safety: immutable after construction; logit() is safe from any thread.

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "routing/task_ngrams.h"
#include "routing/task_stand_in.h"

namespace tandem::routing {

// The most a task logit counts as a feature of the classifier (task_ngrams, thread_task), so
// that no prompt's n-grams can outweigh every other feature (the training data's logits stay
// within about ±6).
inline constexpr double kTaskLogitLimit = 12.0;

class TaskModel {
 public:
  static constexpr std::string_view kFormat = "tandem-task-model/1";

  // Parses a weights file; errors say what is wrong and where ("t.json: weights[12]: bucket
  // 70000 is outside 0..65535"). The bucket count and window must match this build's.
  static Result<TaskModel> parse(std::string_view json_text, std::string_view source);
  static Result<TaskModel> load(const std::string& path);

  // The shipped model (models/router/task-model.json, embedded at build time). If it ever
  // failed to parse, a zero model (logit 0 for every prompt) is used and the error logged.
  static const TaskModel& builtin();

  // A model from dense weights (kNgramBuckets of them), for n-grams counted with
  // `request_weight` (task_ngrams.h), with the stand-in for text it cannot read if any. The
  // trainer builds one per fit.
  static TaskModel from_weights(std::vector<float> weights, double bias, uint16_t request_weight,
                                nlohmann::json metadata,
                                std::optional<TaskStandIn> stand_in = std::nullopt);

  // bias + weights · ngrams(text): above 0 leans hard, below 0 easy.
  double logit(std::string_view text) const;
  double logit(const PromptRequest& request) const;  // the prompt's request already found
  double logit(const NgramVector& ngrams) const;

  // The logit of a request and how much of it the model reads, from one walk over its n-grams:
  // `reading` 1 where the n-grams decide, 0 where the stand-in does (task_stand_in.h); always 1
  // for a model without a stand-in.
  struct Reading {
    double logit = 0;
    double reading = 1;
  };
  Reading read(const PromptRequest& request) const;

  // What the classifier's task_ngrams feature reads: the logit where the model reads the
  // prompt, its stand-in from the prompt's other feature `values` where it does not, a mix
  // between. The logit alone when the model has no stand-in.
  double judgement(const PromptRequest& request,
                   const std::array<float, kFeatureCount>& values) const;
  // The same for a request already read: `values` matter only when `read.reading` < 1, so a
  // caller that must compute them for the purpose (an earlier turn, thread_task.h) may skip it.
  double judgement(const Reading& read, const std::array<float, kFeatureCount>& values) const;
  // The share of `ngrams` (unit length) in buckets weighed at kReadWeight or more.
  double read_share(const NgramVector& ngrams) const;

  const std::optional<TaskStandIn>& stand_in() const { return stand_in_; }

  double bias() const { return bias_; }
  uint16_t request_weight() const { return request_weight_; }
  const std::vector<float>& weights() const { return weights_; }
  const nlohmann::json& metadata() const { return metadata_; }
  // "sha256:" + 16 hex digits over the bias, the weights, a request weight other than 1 and the
  // stand-in if any (not the metadata).
  std::string_view version() const { return version_; }

  // {format, buckets, window_bytes, request_weight, bias, weights: [[bucket, weight], ...]
  // (non-zero only, ascending), stand_in (when there is one), metadata}. A file without
  // request_weight counts every n-gram once (1), as the files written before it did; one
  // without stand_in has the logit alone as its judgement.
  nlohmann::ordered_json to_json() const;

 private:
  TaskModel() = default;
  void compute_version();
  // The logit and the read share of `ngrams`, from one walk over them.
  struct Sums {
    double logit = 0;
    double read_share = 0;
  };
  Sums sums(const NgramVector& ngrams) const;

  std::vector<float> weights_ = std::vector<float>(kNgramBuckets, 0.0f);
  double bias_ = 0;
  uint16_t request_weight_ = 1;
  std::optional<TaskStandIn> stand_in_;
  nlohmann::json metadata_ = nlohmann::json::object();
  std::string version_;
};

}  // namespace tandem::routing
