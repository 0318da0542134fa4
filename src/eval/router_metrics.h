#pragma once
// How well a router's scores separate the rows that need the cloud, and what routing with a
// threshold on them gives: AUC, log-loss, the threshold for a cloud share, routing points.
// Internal to tandem_eval (router_training.cpp).
//
// Thread-safety: free functions without shared state.

#include <utility>
#include <vector>

#include "eval/router_fit.h"
#include "eval/router_training.h"

namespace tandem::eval {

// Mann-Whitney AUC with average ranks for ties. NaN when one class is absent.
double auc(const std::vector<double>& scores, const std::vector<int>& labels);

// Mean log-loss, probabilities clamped away from 0 and 1. NaN without rows.
double log_loss(const std::vector<double>& scores, const std::vector<int>& labels);

BinaryMetrics binary_metrics(const std::vector<double>& scores, const std::vector<int>& labels);

// The threshold that sends about `share` of these scores to the cloud (score >= threshold).
double threshold_for_share(std::vector<double> scores, double share);

std::vector<double> scores_of(const routing::ComplexityModel& model, const ExampleRefs& examples);
std::vector<int> labels_of(const ExampleRefs& examples);

// A row and the router's score for it.
struct ScoredExample {
  double score;
  const TrainingExample* example;
};

// The report's metrics, all-edge and all-cloud quality, and one routing point per
// (cloud share, threshold) in `share_thresholds`.
void fill_routing(const std::vector<ScoredExample>& rows,
                  const std::vector<std::pair<double, double>>& share_thresholds,
                  EvaluationReport& report);

}  // namespace tandem::eval
