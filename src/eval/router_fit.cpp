#include "eval/router_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

namespace tandem::eval {
namespace {

using routing::ComplexityModel;
using routing::feature_names;
using routing::kFeatureCount;

constexpr size_t kParams = kFeatureCount + 1;  // the bias first, then one per feature
using Params = std::array<double, kParams>;

// The smallest scale of a feature: ratios live in [0, 1], everything else is a log count or a
// length on a log scale, where 0.5 is about a factor of 1.6.
double scale_floor(std::string_view name) {
  return name.ends_with("_ratio") ? 0.1 : 0.5;
}

// Standardised, clipped rows with a leading 1, the row weights and the prior's logits.
struct Design {
  std::vector<Params> x;
  std::vector<double> y;
  std::vector<double> weight;
  std::vector<double> offset;
};

Design make_design(const ExampleRefs& examples, const std::array<double, kFeatureCount>& means,
                   const std::array<double, kFeatureCount>& scales, const Params& prior,
                   const std::array<bool, kFeatureCount>& fixed) {
  Design design;
  for (const TrainingExample* example : examples) {
    Params row{};
    row[0] = 1.0;
    double offset = prior[0];
    for (size_t i = 0; i < kFeatureCount; ++i) {
      const double z = (static_cast<double>(example->features.values[i]) - means[i]) / scales[i];
      row[i + 1] =
          std::clamp(z, -ComplexityModel::kMaxStandardised, ComplexityModel::kMaxStandardised);
      offset += prior[i + 1] * row[i + 1];
      if (fixed[i]) {
        row[i + 1] = 0.0;  // in the offset only: no correction to fit (the penalty keeps it 0)
      }
    }
    design.x.push_back(row);
    design.y.push_back(example->label);
    design.weight.push_back(example->weight);
    design.offset.push_back(offset);
  }
  return design;
}

double dot(const Params& a, const Params& b) {
  double sum = 0;
  for (size_t i = 0; i < kParams; ++i) {
    sum += a[i] * b[i];
  }
  return sum;
}

// log(1 + exp(s)) - y s, without overflow.
double row_loss(double logit, double label) {
  return std::log1p(std::exp(-std::abs(logit))) + std::max(logit, 0.0) - label * logit;
}

double objective(const Design& design, const Params& delta, double l2, size_t free) {
  double sum = 0;
  for (size_t r = 0; r < design.x.size(); ++r) {
    sum += design.weight[r] * row_loss(design.offset[r] + dot(design.x[r], delta), design.y[r]);
  }
  for (size_t i = 1; i < free; ++i) {
    sum += 0.5 * l2 * delta[i] * delta[i];
  }
  return sum;
}

// Solves H d = g for the leading n x n block of a symmetric positive definite H (Cholesky).
// False if that block is not positive definite.
bool solve_spd(std::array<Params, kParams> h, Params g, size_t n, Params& d) {
  for (size_t j = 0; j < n; ++j) {
    double diagonal = h[j][j];
    for (size_t k = 0; k < j; ++k) {
      diagonal -= h[j][k] * h[j][k];
    }
    if (!(diagonal > 0)) {
      return false;
    }
    h[j][j] = std::sqrt(diagonal);
    for (size_t i = j + 1; i < n; ++i) {
      double value = h[i][j];
      for (size_t k = 0; k < j; ++k) {
        value -= h[i][k] * h[j][k];
      }
      h[i][j] = value / h[j][j];
    }
  }
  for (size_t i = 0; i < n; ++i) {  // L z = g
    for (size_t k = 0; k < i; ++k) {
      g[i] -= h[i][k] * g[k];
    }
    g[i] /= h[i][i];
  }
  for (size_t i = n; i-- > 0;) {  // L^T d = z
    for (size_t k = i + 1; k < n; ++k) {
      g[i] -= h[k][i] * g[k];
    }
    g[i] /= h[i][i];
  }
  d = Params{};
  std::copy_n(g.begin(), n, d.begin());
  return true;
}

// Newton's method with step halving on the penalised, weighted log-likelihood; only the first
// `free` parameters move (1: the bias alone).
Params fit_delta(const Design& design, double l2, size_t free) {
  Params delta{};
  double current = objective(design, delta, l2, free);
  for (int iteration = 0; iteration < 100; ++iteration) {
    Params gradient{};
    std::array<Params, kParams> hessian{};
    for (size_t r = 0; r < design.x.size(); ++r) {
      const Params& x = design.x[r];
      const double p = 1.0 / (1.0 + std::exp(-(design.offset[r] + dot(x, delta))));
      const double residual = design.weight[r] * (p - design.y[r]);
      const double curvature = design.weight[r] * p * (1 - p);
      for (size_t i = 0; i < free; ++i) {
        gradient[i] += residual * x[i];
        const double cx = curvature * x[i];
        for (size_t j = 0; j <= i; ++j) {
          hessian[i][j] += cx * x[j];
        }
      }
    }
    for (size_t i = 0; i < free; ++i) {
      for (size_t j = 0; j < i; ++j) {
        hessian[j][i] = hessian[i][j];
      }
    }
    hessian[0][0] += 1e-9;  // keeps the bias direction invertible when p(1-p) underflows
    for (size_t i = 1; i < free; ++i) {
      gradient[i] += l2 * delta[i];
      hessian[i][i] += l2;
    }
    Params step{};
    if (!solve_spd(hessian, gradient, free, step)) {
      break;
    }
    double scale = 1.0;
    Params next{};
    double next_value = current;
    for (int halving = 0; halving < 40; ++halving) {
      for (size_t i = 0; i < kParams; ++i) {
        next[i] = delta[i] - scale * step[i];
      }
      next_value = objective(design, next, l2, free);
      if (next_value <= current) {
        break;
      }
      scale /= 2;
    }
    if (next_value > current) {
      break;  // no descent left: converged to rounding
    }
    double largest = 0;
    for (size_t i = 0; i < kParams; ++i) {
      largest = std::max(largest, std::abs(next[i] - delta[i]));
    }
    delta = next;
    current = next_value;
    if (largest < 1e-10) {
      break;
    }
  }
  return delta;
}

}  // namespace

FittedModel fit_complexity_model(const ExampleRefs& examples, const RouterPrior& prior, double l2) {
  std::array<double, kFeatureCount> means{};
  std::array<double, kFeatureCount> scales{};
  std::vector<std::string> constant;
  double total_weight = 0;
  for (const TrainingExample* example : examples) {
    total_weight += example->weight;
  }
  for (size_t i = 0; i < kFeatureCount; ++i) {
    double sum = 0;
    for (const TrainingExample* example : examples) {
      sum += example->weight * example->features.values[i];
    }
    means[i] = total_weight > 0 ? sum / total_weight : 0.0;
    double squares = 0;
    for (const TrainingExample* example : examples) {
      const double d = example->features.values[i] - means[i];
      squares += example->weight * d * d;
    }
    const double spread = total_weight > 0 ? std::sqrt(squares / total_weight) : 0.0;
    if (spread < 1e-9) {
      constant.emplace_back(feature_names()[i]);
    }
    scales[i] = std::max(spread, scale_floor(feature_names()[i]));
  }
  // The prior in the standardised coordinates the model scores in.
  Params prior_params{};
  prior_params[0] = prior.bias();
  for (size_t i = 0; i < kFeatureCount; ++i) {
    prior_params[0] += prior.weights()[i] * means[i];
    prior_params[i + 1] = prior.weights()[i] * scales[i];
  }
  const Design design = make_design(examples, means, scales, prior_params, prior.fixed());
  const size_t free = std::isinf(l2) ? 1 : kParams;
  const Params delta = fit_delta(design, std::isinf(l2) ? 0.0 : l2, free);
  std::array<double, kFeatureCount> weights{};
  for (size_t i = 0; i < kFeatureCount; ++i) {
    weights[i] = prior_params[i + 1] + delta[i + 1];
  }
  return {ComplexityModel::from_parameters(means, scales, weights, prior_params[0] + delta[0],
                                           nlohmann::json::object()),
          std::move(constant)};
}

}  // namespace tandem::eval
