#pragma once
// The router trainer's JSON: the metadata a trained model's weights file carries (what it was
// trained on, how, and how well it did). The reports' to_json functions are declared in
// router_training.h. Internal to tandem_eval.
//
// Thread-safety: free functions without shared state.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "eval/router_training.h"

namespace tandem::eval {

// The metadata known before the shipped model is fitted: trainer, time, data, split, penalty
// and the measured metrics of `report`.
nlohmann::ordered_json weights_metadata(const TrainingReport& report, size_t train_rows,
                                        size_t holdout_rows);

// Appends what the shipped model adds: its suggested (cloud share, threshold) pairs, the
// holdout's all-edge and all-cloud quality, and the feature names.
void add_shipped_metadata(nlohmann::ordered_json& metadata, const TrainingReport& report,
                          const std::vector<std::pair<double, double>>& thresholds);

}  // namespace tandem::eval
