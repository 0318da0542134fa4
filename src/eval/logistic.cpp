#include "eval/logistic.h"

#include <algorithm>
#include <cmath>

namespace tandem::eval {
namespace {

// A light penalty on the bias too: on (nearly) separable data an unpenalised bias runs off to
// infinity and every prediction becomes 0 or 1, which destroys the ordering.
constexpr double kBiasPenalty = 1e-3;

double sigmoid(double z) {
  return 1.0 / (1.0 + std::exp(-z));
}

// The penalised negative log-likelihood: the quantity each Newton step must decrease.
double objective(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                 const std::vector<double>& theta, double l2) {
  double loss = 0;
  for (size_t r = 0; r < x.size(); ++r) {
    double z = theta[0];
    for (size_t f = 0; f + 1 < theta.size(); ++f) {
      z += theta[f + 1] * x[r][f];
    }
    // log(1 + e^z) - y z, computed without overflow.
    loss += std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z))) - y[r] * z;
  }
  for (size_t i = 0; i < theta.size(); ++i) {
    loss += 0.5 * (i == 0 ? kBiasPenalty * l2 : l2) * theta[i] * theta[i];
  }
  return loss;
}

// The gradient and the (symmetric) Hessian of the penalised log-loss at `theta` (bias first).
void newton_system(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                   const std::vector<double>& theta, double l2, std::vector<double>& gradient,
                   std::vector<std::vector<double>>& hessian) {
  const size_t n = theta.size();
  const size_t features = n - 1;
  gradient.assign(n, 0.0);
  hessian.assign(n, std::vector<double>(n, 0.0));
  for (size_t r = 0; r < x.size(); ++r) {
    double z = theta[0];
    for (size_t f = 0; f < features; ++f) {
      z += theta[f + 1] * x[r][f];
    }
    const double p = sigmoid(z);
    const double residual = p - y[r];
    const double w = std::max(p * (1 - p), 1e-9);
    for (size_t i = 0; i < n; ++i) {
      const double xi = i == 0 ? 1.0 : x[r][i - 1];
      gradient[i] += residual * xi;
      for (size_t j = i; j < n; ++j) {
        const double xj = j == 0 ? 1.0 : x[r][j - 1];
        hessian[i][j] += w * xi * xj;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const double penalty = i == 0 ? kBiasPenalty * l2 : l2;
    gradient[i] += penalty * theta[i];
    hessian[i][i] += penalty + 1e-9;
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < i; ++j) {
      hessian[i][j] = hessian[j][i];
    }
  }
}

// Damped Newton: `theta - scale * step`, the scale halved until the objective decreases.
std::vector<double> damped_step(const std::vector<std::vector<double>>& x,
                                const std::vector<double>& y, const std::vector<double>& theta,
                                const std::vector<double>& step, double l2) {
  const size_t n = theta.size();
  const double before = objective(x, y, theta, l2);
  std::vector<double> next(n);
  double scale = 1.0;
  for (int halving = 0; halving < 40; ++halving, scale /= 2) {
    for (size_t i = 0; i < n; ++i) {
      next[i] = theta[i] - scale * step[i];
    }
    if (objective(x, y, next, l2) <= before) {
      break;
    }
  }
  return next;
}

}  // namespace

bool solve_linear(std::vector<std::vector<double>> a, std::vector<double> b,
                  std::vector<double>& x) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) {
        pivot = r;
      }
    }
    if (std::abs(a[pivot][col]) < 1e-12) {
      return false;
    }
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t r = col + 1; r < n; ++r) {
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c < n; ++c) {
        a[r][c] -= f * a[col][c];
      }
      b[r] -= f * b[col];
    }
  }
  x.assign(n, 0.0);
  for (size_t i = n; i-- > 0;) {
    double sum = b[i];
    for (size_t c = i + 1; c < n; ++c) {
      sum -= a[i][c] * x[c];
    }
    x[i] = sum / a[i][i];
  }
  return true;
}

double LogisticModel::logit(const std::vector<double>& x) const {
  double z = bias;
  for (size_t i = 0; i < weights.size() && i < x.size(); ++i) {
    z += weights[i] * x[i];
  }
  return z;
}

double LogisticModel::predict(const std::vector<double>& x) const {
  return sigmoid(logit(x));
}

LogisticModel fit_logistic(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                           double l2) {
  const size_t features = x.empty() ? 0 : x.front().size();
  LogisticModel model;
  model.weights.assign(features, 0.0);
  if (x.empty()) {
    return model;
  }
  double mean = 0;
  for (double label : y) {
    mean += label;
  }
  mean /= static_cast<double>(y.size());
  // Start from the base rate: with labels that do not vary that is already the answer.
  const double clipped = std::clamp(mean, 1e-4, 1 - 1e-4);
  model.bias = std::log(clipped / (1 - clipped));
  if (mean <= 0 || mean >= 1) {
    return model;
  }
  const size_t n = features + 1;  // bias first
  std::vector<double> theta(n, 0.0);
  theta[0] = model.bias;
  for (int iteration = 0; iteration < 50; ++iteration) {
    std::vector<double> gradient;
    std::vector<std::vector<double>> hessian;
    newton_system(x, y, theta, l2, gradient, hessian);
    std::vector<double> step;
    if (!solve_linear(hessian, gradient, step)) {
      break;
    }
    const std::vector<double> next = damped_step(x, y, theta, step, l2);
    double largest = 0;
    for (size_t i = 0; i < n; ++i) {
      largest = std::max(largest, std::abs(next[i] - theta[i]));
    }
    theta = next;
    if (largest < 1e-10) {
      break;
    }
  }
  model.bias = theta[0];
  for (size_t f = 0; f < features; ++f) {
    model.weights[f] = theta[f + 1];
  }
  return model;
}

}  // namespace tandem::eval
