#include "eval/three_tier.h"

#include <algorithm>
#include <limits>

namespace tandem::eval {

std::vector<CurvePoint> three_tier_curve(const std::vector<Sample>& samples,
                                         const std::vector<double>& edge_good,
                                         const std::vector<double>& mid_good) {
  const size_t n = samples.size();
  std::vector<CurvePoint> curve;
  if (n == 0) {
    return curve;
  }
  // With threshold t a query stays on the edge while t <= edge_good, is answered by the mid
  // tier while edge_good < t <= mid_good, and by the cloud once t > max(edge_good, mid_good).
  // So it changes tier at most twice: at edge_good and, if higher, at mid_good.
  struct Event {
    double at;
    size_t row;
  };
  std::vector<Event> events;
  events.reserve(2 * n);
  std::vector<TierIndex> tier(n, kEdgeTier);
  double quality_sum = 0;
  double cost = 0;
  for (size_t i = 0; i < n; ++i) {
    events.push_back({edge_good[i], i});
    if (mid_good[i] > edge_good[i]) {
      events.push_back({mid_good[i], i});
    }
    quality_sum += samples[i].score[kEdgeTier];
    cost += samples[i].cost[kEdgeTier];
  }
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.at < b.at; });
  const double total = static_cast<double>(n);
  size_t on_cloud = 0;
  size_t on_mid = 0;
  curve.push_back({0.0, quality_sum / total, cost, -std::numeric_limits<double>::infinity(), 0.0});
  for (size_t e = 0; e < events.size();) {
    const double at = events[e].at;
    for (; e < events.size() && events[e].at == at; ++e) {
      const size_t i = events[e].row;
      const Sample& s = samples[i];
      const bool to_cloud = tier[i] == kMidTier || mid_good[i] <= edge_good[i];
      const TierIndex next = to_cloud ? kCloudTier : kMidTier;
      if (tier[i] == kEdgeTier) {
        cost += s.cost[kMidTier];  // the mid tier runs as soon as the edge escalates
      }
      if (next == kCloudTier) {
        cost += s.cost[kCloudTier];
        ++on_cloud;
      } else {
        ++on_mid;
      }
      if (tier[i] == kMidTier) {
        --on_mid;
      }
      quality_sum += s.score[next] - s.score[tier[i]];
      tier[i] = next;
    }
    // Escalation happens for t strictly above `at`: the point stands for thresholds just past it.
    curve.push_back({static_cast<double>(on_cloud) / total, quality_sum / total, cost, at,
                     static_cast<double>(on_mid) / total});
  }
  return curve;
}

}  // namespace tandem::eval
