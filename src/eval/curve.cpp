#include "eval/curve.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tandem::eval {
namespace {

double lerp(double a, double b, double t) {
  return a + (b - a) * t;
}

Crossing interpolate(const CurvePoint& a, const CurvePoint& b, double t) {
  // Within a segment the threshold is that of its far end: the group being split.
  return {lerp(a.cloud_share, b.cloud_share, t), lerp(a.quality, b.quality, t),
          lerp(a.cost, b.cost, t), t > 0 ? b.threshold : a.threshold};
}

// The smallest share where PGR reaches `fraction` of the gap.
std::optional<double> cpt(const std::vector<CurvePoint>& curve, double edge_quality,
                          double cloud_quality, double fraction) {
  const auto crossing =
      first_quality_at_least(curve, edge_quality + fraction * (cloud_quality - edge_quality));
  if (!crossing) {
    return std::nullopt;
  }
  return crossing->cloud_share;
}

}  // namespace

std::vector<CurvePoint> sweep(const std::vector<double>& need, const std::vector<Outcome>& outcomes,
                              CostModel cost_model) {
  const size_t n = outcomes.size();
  std::vector<CurvePoint> curve;
  if (n == 0) {
    return curve;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return need[a] > need[b]; });
  double quality_sum = 0;
  double cost = 0;
  for (const Outcome& o : outcomes) {
    quality_sum += o.edge_score;
    cost += o.edge_cost;
  }
  const double total = static_cast<double>(n);
  curve.push_back({0.0, quality_sum / total, cost, std::numeric_limits<double>::infinity()});
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && need[order[j]] == need[order[i]]) {
      const Outcome& o = outcomes[order[j]];
      quality_sum += o.cloud_score - o.edge_score;
      cost += cost_model == CostModel::kCascade ? o.cloud_cost : o.cloud_cost - o.edge_cost;
      ++j;
    }
    curve.push_back({static_cast<double>(j) / total, quality_sum / total, cost, need[order[i]]});
    i = j;
  }
  return curve;
}

std::vector<CurvePoint> random_curve(const std::vector<Outcome>& outcomes) {
  // Every query has the same need: one group, a straight line from all-edge to all-cloud.
  return sweep(std::vector<double>(outcomes.size(), 0.0), outcomes, CostModel::kOneTier);
}

std::vector<CurvePoint> oracle_curve(const std::vector<Outcome>& outcomes) {
  std::vector<double> gain;
  gain.reserve(outcomes.size());
  for (const Outcome& o : outcomes) {
    gain.push_back(o.cloud_score - o.edge_score);
  }
  return sweep(gain, outcomes, CostModel::kOneTier);
}

std::optional<Crossing> first_quality_at_least(const std::vector<CurvePoint>& curve,
                                               double quality) {
  if (curve.empty()) {
    return std::nullopt;
  }
  // A tolerance for the sums of many scores: 0.95 * q must not miss q's own point.
  constexpr double kEps = 1e-12;
  if (curve.front().quality + kEps >= quality) {
    return interpolate(curve.front(), curve.front(), 0.0);
  }
  for (size_t i = 1; i < curve.size(); ++i) {
    const CurvePoint& a = curve[i - 1];
    const CurvePoint& b = curve[i];
    if (b.quality + kEps >= quality) {
      const double rise = b.quality - a.quality;
      const double t = rise > 0 ? std::clamp((quality - a.quality) / rise, 0.0, 1.0) : 1.0;
      return interpolate(a, b, t);
    }
  }
  return std::nullopt;
}

Crossing at_cloud_share(const std::vector<CurvePoint>& curve, double share) {
  if (curve.empty()) {
    return {};
  }
  for (size_t i = 1; i < curve.size(); ++i) {
    const CurvePoint& a = curve[i - 1];
    const CurvePoint& b = curve[i];
    if (b.cloud_share >= share) {
      const double run = b.cloud_share - a.cloud_share;
      return interpolate(a, b, run > 0 ? std::clamp((share - a.cloud_share) / run, 0.0, 1.0) : 1.0);
    }
  }
  return interpolate(curve.back(), curve.back(), 0.0);
}

CurveSummary summarize(const std::vector<CurvePoint>& curve, double all_cloud_cost,
                       double quality_target) {
  CurveSummary s;
  if (curve.empty()) {
    return s;
  }
  s.edge_quality = curve.front().quality;
  s.cloud_quality = curve.back().quality;
  s.all_cloud_cost = all_cloud_cost;
  const double gap = s.cloud_quality - s.edge_quality;
  if (gap > 0) {
    double area = 0;
    for (size_t i = 1; i < curve.size(); ++i) {
      const double width = curve[i].cloud_share - curve[i - 1].cloud_share;
      area += width * ((curve[i].quality + curve[i - 1].quality) / 2 - s.edge_quality) / gap;
    }
    s.apgr = area;
    s.cpt50 = cpt(curve, s.edge_quality, s.cloud_quality, 0.5);
    s.cpt80 = cpt(curve, s.edge_quality, s.cloud_quality, 0.8);
    s.cpt95 = cpt(curve, s.edge_quality, s.cloud_quality, 0.95);
  }
  // The curve always ends at the cloud's quality, so the target is always reached.
  const auto at = first_quality_at_least(curve, quality_target * s.cloud_quality);
  const Crossing point = at ? *at : interpolate(curve.back(), curve.back(), 0.0);
  s.cloud_share_at_95 = point.cloud_share;
  s.edge_share_at_95 = 1.0 - point.cloud_share;
  s.cost_at_95 = point.cost;
  s.cost_saved_at_95 = all_cloud_cost > 0 ? 1.0 - point.cost / all_cloud_cost : 0.0;
  return s;
}

}  // namespace tandem::eval
