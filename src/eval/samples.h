#pragma once
// Trace rows as the evaluator sees them: per tier (edge, optional mid, cloud) the score, the
// cost and the confidence signals the server would have, plus what the router computes from
// the prompt (query kind, classifier score, the full signals for the configured policy).
//
// Thread-safety: free functions without shared state.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "common/progress.h"
#include "common/result.h"
#include "eval/curve.h"
#include "eval/trace_data.h"
#include "routing/router.h"

namespace tandem::eval {

// The edge confidence signals the cascade combines (config::ConfidenceWeights). A trace row
// has one number per model (e.g. the answer token's logprob): it stands for a one-token
// answer, so mean and minimum logprob are that number and entropy and margin are unknown (0).
struct ConfidenceSignals {
  double mean_logprob = 0;
  double min_logprob = 0;
  double mean_entropy = 0;
  double mean_margin = 0;
  double tokens = 1;  // the answer's length
};

enum TierIndex : size_t { kEdgeTier = 0, kMidTier = 1, kCloudTier = 2 };

struct Sample {
  std::string id;
  std::string task;
  uint64_t hash = 0;  // eval::row_hash(id, seed): splits and folds
  routing::QueryKind kind = routing::QueryKind::kOpen;
  double complexity = 0.5;
  double prompt_chars = 0;        // the user message's bytes: the length baseline's score
  routing::RouteSignals signals;  // for the configured policy (privacy, review rules...)
  std::array<double, 3> score{};
  std::array<double, 3> cost{};
  std::array<std::optional<ConfidenceSignals>, 3> confidence;

  Outcome outcome() const {  // edge vs cloud
    return {score[kEdgeTier], score[kCloudTier], cost[kEdgeTier], cost[kCloudTier]};
  }
};

struct SampleOptions {
  std::string edge;
  std::string mid;  // empty: two tiers
  std::string cloud;
  bool edge_cost_zero = false;  // the edge runs on the device: its marginal cost is 0
  uint64_t seed = 0;
};

struct SampleSet {
  std::vector<Sample> samples;
  size_t rows_read = 0;
  size_t rows_skipped = 0;          // a tier's score is missing
  size_t rows_without_cost = 0;     // costed as 0
  bool has_confidence = true;       // every sample has the edge's (and mid's) confidence
  std::vector<std::string> models;  // present in the data
};

// Builds the samples with the router `router` (its classifier, privacy scanner, rules).
// Reports one step per row: routing every prompt is what takes time on large trace sets.
// Errors: a model absent from the data (listing those present), no usable row.
Result<SampleSet> make_samples(const std::vector<eval::TraceRow>& rows,
                               const SampleOptions& options, const routing::Router& router,
                               Progress& progress = no_progress());

std::vector<Outcome> outcomes(const std::vector<Sample>& samples);
double all_cloud_cost(const std::vector<Sample>& samples);

}  // namespace tandem::eval
