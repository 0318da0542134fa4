#include "eval/calibration.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "eval/logistic.h"
#include "routing/confidence.h"

namespace tandem::eval {
namespace {

constexpr size_t kFolds = 5;

std::vector<double> features(const ConfidenceSignals& c, double complexity,
                             const SignalSet& signals) {
  std::vector<double> x = {std::clamp(c.mean_logprob, routing::kMinLogprob, 0.0),
                           routing::log_doubt(c.mean_logprob)};
  if (signals.tokens) {
    x.push_back(std::log1p(std::max(c.tokens, 0.0)));
  }
  if (signals.min_logprob) {
    x.push_back(std::clamp(c.min_logprob, routing::kMinLogprob, 0.0));
  }
  if (signals.mean_entropy) {
    x.push_back(std::clamp(c.mean_entropy, 0.0, routing::kMaxEntropy));
  }
  if (signals.mean_margin) {
    x.push_back(std::clamp(c.mean_margin, 0.0, routing::kMaxMargin));
  }
  if (signals.complexity) {
    x.push_back(routing::logit(complexity));
  }
  return x;
}

// The direction each signal may push P(good), in features() order: more confident tokens
// (higher logprobs and margins, lower doubt and entropy) and a simpler prompt may only raise
// it; length may go either way. A fit that gives a signal the wrong sign is overfitting noise
// (and would make the cascade trust an answer more as its tokens get less likely), so the
// signal is dropped and the rest refitted.
std::vector<int> allowed_signs(const SignalSet& signals) {
  std::vector<int> signs = {+1, -1};
  if (signals.tokens) {
    signs.push_back(0);
  }
  if (signals.min_logprob) {
    signs.push_back(+1);
  }
  if (signals.mean_entropy) {
    signs.push_back(-1);
  }
  if (signals.mean_margin) {
    signs.push_back(+1);
  }
  if (signals.complexity) {
    signs.push_back(-1);
  }
  return signs;
}

LogisticModel fit_signed(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                         double l2, const std::vector<int>& signs) {
  std::vector<bool> active(signs.size(), true);
  for (size_t round = 0; round <= signs.size(); ++round) {
    std::vector<std::vector<double>> reduced;
    reduced.reserve(x.size());
    for (const auto& row : x) {
      std::vector<double> r;
      for (size_t f = 0; f < signs.size(); ++f) {
        if (active[f]) {
          r.push_back(row[f]);
        }
      }
      reduced.push_back(std::move(r));
    }
    const LogisticModel fitted = fit_logistic(reduced, y, l2);
    LogisticModel full;
    full.bias = fitted.bias;
    full.weights.assign(signs.size(), 0.0);
    bool violated = false;
    for (size_t f = 0, i = 0; f < signs.size(); ++f) {
      if (!active[f]) {
        continue;
      }
      full.weights[f] = fitted.weights[i++];
      if (full.weights[f] * signs[f] < 0) {
        active[f] = false;
        violated = true;
      }
    }
    if (!violated) {
      return full;
    }
  }
  LogisticModel base;  // unreachable: each round drops a signal, and none left cannot violate
  base.weights.assign(signs.size(), 0.0);
  return base;
}

config::ConfidenceWeights to_weights(const LogisticModel& model, const SignalSet& signals) {
  config::ConfidenceWeights w;
  w.bias = model.bias;
  size_t i = 0;
  w.mean_logprob = model.weights[i++];
  w.log_doubt = model.weights[i++];
  w.log_tokens = signals.tokens ? model.weights[i++] : 0.0;
  w.min_logprob = signals.min_logprob ? model.weights[i++] : 0.0;
  w.mean_entropy = signals.mean_entropy ? model.weights[i++] : 0.0;
  w.mean_margin = signals.mean_margin ? model.weights[i++] : 0.0;
  w.complexity = signals.complexity ? model.weights[i++] : 0.0;
  return w;
}

struct Design {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  double cloud_sum = 0;
};

}  // namespace

const config::ConfidenceWeights& Calibration::weights(routing::QueryKind kind) const {
  const auto& own = by_kind[static_cast<size_t>(kind)];
  return own ? *own : pooled;
}

double Calibration::cloud_quality(routing::QueryKind kind) const {
  return cloud_quality_by_kind[static_cast<size_t>(kind)].value_or(pooled_cloud_quality);
}

Calibration fit_calibration(const std::vector<const Sample*>& samples, TierIndex tier,
                            const FitOptions& options) {
  Design all;
  std::array<Design, routing::kQueryKindCount> kinds;
  for (const Sample* s : samples) {
    const auto& conf = s->confidence[tier];
    if (!conf) {
      continue;
    }
    auto x = features(*conf, s->complexity, options.signals);
    Design& kind = kinds[static_cast<size_t>(s->kind)];
    kind.x.push_back(x);
    kind.y.push_back(s->score[tier]);
    kind.cloud_sum += s->score[kCloudTier];
    all.x.push_back(std::move(x));
    all.y.push_back(s->score[tier]);
    all.cloud_sum += s->score[kCloudTier];
  }
  Calibration c;
  const std::vector<int> signs = allowed_signs(options.signals);
  c.pooled = to_weights(fit_signed(all.x, all.y, options.l2, signs), options.signals);
  c.pooled_cloud_quality = all.y.empty() ? 0.0 : all.cloud_sum / static_cast<double>(all.y.size());
  for (size_t k = 0; k < routing::kQueryKindCount; ++k) {
    const Design& d = kinds[k];
    c.rows_by_kind[k] = d.y.size();
    if (!options.per_kind || d.y.size() < options.min_kind_rows) {
      continue;
    }
    double good = 0;
    for (double y : d.y) {
      good += y;
    }
    c.cloud_quality_by_kind[k] = d.cloud_sum / static_cast<double>(d.y.size());
    // One outcome only: the logistic model would be all bias; the pooled slope is better.
    if (good < 5 || good > static_cast<double>(d.y.size()) - 5) {
      continue;
    }
    c.by_kind[k] = to_weights(fit_signed(d.x, d.y, options.l2, signs), options.signals);
  }
  return c;
}

double p_good(const Calibration& calibration, const Sample& sample, TierIndex tier) {
  const auto& conf = sample.confidence[tier];
  if (!conf) {
    return 0.0;  // nothing to trust: escalate first
  }
  return routing::combined_confidence(calibration.weights(sample.kind), conf->mean_logprob,
                                      conf->min_logprob, conf->mean_entropy, conf->mean_margin,
                                      sample.complexity, conf->tokens);
}

double escalation_gain(const Calibration& calibration, const Sample& sample) {
  return calibration.cloud_quality(sample.kind) - p_good(calibration, sample, kEdgeTier);
}

std::vector<size_t> fold_ids(const std::vector<Sample>& samples, FoldBy fold_by, size_t& folds) {
  std::vector<size_t> ids;
  ids.reserve(samples.size());
  if (fold_by == FoldBy::kRow) {
    folds = kFolds;
    for (const auto& s : samples) {
      ids.push_back(eval::fold_of(s.hash, kFolds));
    }
    return ids;
  }
  std::map<std::string, size_t> tasks;
  for (const auto& s : samples) {
    tasks.emplace(s.task, tasks.size());
  }
  folds = tasks.size();
  for (const auto& s : samples) {
    ids.push_back(tasks[s.task]);
  }
  return ids;
}

std::vector<double> cross_fitted(const std::vector<Sample>& samples, TierIndex tier,
                                 const FitOptions& options, bool gain, FoldBy fold_by) {
  std::vector<double> out(samples.size(), 0.0);
  size_t folds = 0;
  const std::vector<size_t> ids = fold_ids(samples, fold_by, folds);
  for (size_t fold = 0; fold < folds; ++fold) {
    std::vector<const Sample*> train;
    for (size_t i = 0; i < samples.size(); ++i) {
      if (ids[i] != fold) {
        train.push_back(&samples[i]);
      }
    }
    const Calibration c = fit_calibration(train, tier, options);
    for (size_t i = 0; i < samples.size(); ++i) {
      if (ids[i] == fold) {
        out[i] = gain ? escalation_gain(c, samples[i]) : p_good(c, samples[i], tier);
      }
    }
  }
  return out;
}

config::CascadeConfig to_cascade_config(const Calibration& calibration, double margin,
                                        const config::CascadeConfig& base) {
  config::CascadeConfig out = base;
  out.kinds.clear();
  out.weights = calibration.pooled;
  out.threshold = std::clamp(calibration.pooled_cloud_quality - margin, 0.0, 1.0);
  for (size_t k = 0; k < routing::kQueryKindCount; ++k) {
    if (!calibration.by_kind[k] && !calibration.cloud_quality_by_kind[k]) {
      continue;
    }
    const auto kind = static_cast<routing::QueryKind>(k);
    config::KindCascade settings;
    settings.weights = calibration.weights(kind);
    settings.threshold = std::clamp(calibration.cloud_quality(kind) - margin, 0.0, 1.0);
    out.kinds[std::string(routing::query_kind_name(kind))] = settings;
  }
  return out;
}

}  // namespace tandem::eval
