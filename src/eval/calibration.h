#pragma once
// The learned cascade: per query kind, a logistic model of P(the edge's answer is good) from
// the edge's confidence signals (and, for the `combined` policy, the ingress classifier's
// score), in exactly the form the server evaluates (config::ConfidenceWeights through
// routing::combined_confidence), plus the cloud's expected quality per kind. The cascade
// escalates where the expected gain, cloud quality minus P(edge good), exceeds a margin: in
// configuration terms a threshold per kind, threshold_k = cloud_quality_k - margin.
//
// Thread-safety: free functions without shared state.

#include <array>
#include <map>
#include <optional>
#include <vector>

#include "config/config.h"
#include "eval/samples.h"
#include "routing/query_kind.h"

namespace tandem::eval {

// The signals a fit may use beyond the mean logprob. Trace files carry one confidence number
// per answer; the server's own traces carry all four token signals.
struct SignalSet {
  bool min_logprob = false;
  bool mean_entropy = false;
  bool mean_margin = false;
  bool complexity = false;  // the `combined` policy
  bool tokens = true;       // the answer's length (log_tokens)
};

struct FitOptions {
  SignalSet signals;
  size_t min_kind_rows = 40;  // a kind with fewer rows (or one outcome only) uses the pooled fit
  double l2 = 1.0;
  bool per_kind = true;  // false: one model and one cloud quality for every kind
};

struct Calibration {
  config::ConfidenceWeights pooled;
  std::array<std::optional<config::ConfidenceWeights>, routing::kQueryKindCount> by_kind;
  double pooled_cloud_quality = 0;
  std::array<std::optional<double>, routing::kQueryKindCount> cloud_quality_by_kind;
  std::array<size_t, routing::kQueryKindCount> rows_by_kind{};

  const config::ConfidenceWeights& weights(routing::QueryKind kind) const;
  double cloud_quality(routing::QueryKind kind) const;
};

// Fits on `samples` for the answers of `tier` (edge or mid; its score is the label).
// Samples without that tier's confidence are skipped.
Calibration fit_calibration(const std::vector<const Sample*>& samples, TierIndex tier,
                            const FitOptions& options);

// P(good) of `tier`'s answer to `sample` under the calibration, as the server computes it.
double p_good(const Calibration& calibration, const Sample& sample, TierIndex tier);

// The expected gain of escalating: cloud quality of the kind minus P(edge good).
double escalation_gain(const Calibration& calibration, const Sample& sample);

// How cross-fitting folds the samples: 5 folds by row hash (in distribution), or one fold per
// task (leave one task out: what a calibration does on a task it has not seen).
enum class FoldBy { kRow, kTask };

// Out-of-fold gains (or P(good) for `tier` when `gain` is false) for every sample: each
// sample is scored by a calibration fitted without its fold.
std::vector<double> cross_fitted(const std::vector<Sample>& samples, TierIndex tier,
                                 const FitOptions& options, bool gain,
                                 FoldBy fold_by = FoldBy::kRow);

// The fold of each sample under `fold_by`, and how many folds there are.
std::vector<size_t> fold_ids(const std::vector<Sample>& samples, FoldBy fold_by, size_t& folds);

// The configuration a calibration and a margin stand for: global threshold and weights from
// the pooled fit, per-kind thresholds and weights where the kind has its own.
config::CascadeConfig to_cascade_config(const Calibration& calibration, double margin,
                                        const config::CascadeConfig& base);

}  // namespace tandem::eval
