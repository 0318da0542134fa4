#pragma once
// A small logistic regression for calibration: a handful of features, soft labels in [0, 1],
// an L2 penalty on the weights (not the bias), fitted by Newton's method. Deterministic: the
// same rows give the same weights, so calibration runs are reproducible.
//
// Thread-safety: free functions without shared state.

#include <cstddef>
#include <vector>

namespace tandem::eval {

// Solves a x = b for a small symmetric positive definite a (Gaussian elimination with partial
// pivoting; a penalty on the diagonal keeps a well conditioned). False when a is singular.
bool solve_linear(std::vector<std::vector<double>> a, std::vector<double> b,
                  std::vector<double>& x);

struct LogisticModel {
  double bias = 0;
  std::vector<double> weights;

  double logit(const std::vector<double>& x) const;
  double predict(const std::vector<double>& x) const;  // P(label = 1)
};

// Rows of `x` all have the same length; `y` in [0, 1]. With no rows, or labels that do not
// vary, the model is the (clipped) base rate with zero weights.
LogisticModel fit_logistic(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                           double l2 = 1.0);

}  // namespace tandem::eval
