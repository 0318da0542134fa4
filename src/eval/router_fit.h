#pragma once
// Fitting the ingress classifier (routing/complexity_model.h): a logistic regression over the
// standardised, clipped prompt features, exactly as ComplexityModel::score computes them,
// starting from a prior (router_prior.h) and fitting only the data's correction to it:
//
//   logit = prior(x) + delta . z(x),   minimising  sum_r w_r * logloss_r + l2/2 * |delta|^2
//
// The bias is free. l2 = kPriorOnly keeps the prior's weights and fits the bias alone; with
// RouterPrior::none() this is the classic ridge fit toward 0. Newton's method with step
// halving: deterministic, about ten steps.
//
// Thread-safety: free functions without shared state.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "eval/router_prior.h"
#include "routing/complexity_model.h"
#include "routing/prompt_features.h"

namespace tandem::eval {

// One labelled query of the training data.
struct TrainingExample {
  routing::PromptFeatures features;
  double edge = 0;    // the edge's score
  double cloud = 0;   // the cloud's score
  int label = 0;      // 1: the cloud is needed (its score is higher)
  double weight = 1;  // rows of a large slice weigh less, so no task or source dominates
  uint64_t hash = 0;  // of the row id: splits and folds
  bool holdout = false;
  std::string source;  // where the row comes from (the trace's "source", else its file)
  std::string task;    // the benchmark or traffic class ("mmlu", "gsm8k"...)
  double chars = 0;    // the prompt's length: the length baseline's score
  double turns = 1;    // the conversation's turns: the turn-count baseline's score
};

using ExampleRefs = std::vector<const TrainingExample*>;

// The penalty that keeps the prior's weights unchanged (only the bias is fitted).
inline constexpr double kPriorOnly = std::numeric_limits<double>::infinity();

struct FittedModel {
  routing::ComplexityModel model;
  std::vector<std::string> constant_features;  // no variation in the rows
};

// Fits on `examples` (at least one of each label for a meaningful fit). Means and scales come
// from the rows; a scale never falls below a floor per feature kind, so a cue that the
// training data rarely shows keeps the prior's effect instead of being clipped away.
FittedModel fit_complexity_model(const ExampleRefs& examples, const RouterPrior& prior, double l2);

}  // namespace tandem::eval
