#pragma once
// Percentile bootstrap intervals: how far a figure measured on a sample of rows could move on
// another sample of the same size. Resampling the rows (with replacement) and recomputing the
// figure gives its spread; the 2.5th and 97.5th percentiles of the draws bound it at 95%.
//
// Thread-safety: free functions without shared state.

#include <vector>

namespace tandem::eval {

struct Interval {
  double estimate = 0;  // the figure on the rows themselves
  double low = 0;       // 2.5th percentile of the bootstrap
  double high = 0;      // 97.5th percentile

  bool below_zero() const { return high < 0; }
  bool above_zero() const { return low > 0; }
};

// The 95% percentile interval of `draws` around `estimate`. `draws` must not be empty.
Interval percentile_interval(double estimate, std::vector<double> draws);

}  // namespace tandem::eval
