#include "eval/bootstrap.h"

#include <algorithm>
#include <cstddef>

namespace tandem::eval {

Interval percentile_interval(double estimate, std::vector<double> draws) {
  std::sort(draws.begin(), draws.end());
  auto at = [&](double q) {
    const auto i = static_cast<size_t>(std::clamp(q * static_cast<double>(draws.size() - 1), 0.0,
                                                  static_cast<double>(draws.size() - 1)));
    return draws[i];
  };
  return {estimate, at(0.025), at(0.975)};
}

}  // namespace tandem::eval
