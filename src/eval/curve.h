#pragma once
// The cost-quality curve of a router and RouteLLM's summary metrics (Ong et al., "RouteLLM",
// arXiv 2406.18665): PGR (performance gap recovered), APGR (its area over the share of calls
// to the strong model), CPT(x%) (the smallest share of strong calls that recovers x% of the
// gap). The curve here is exact: one point at every distinct score of the router, linear
// between them (the expected result of breaking ties at random), not 10 quantiles.
//
// Thread-safety: free functions without shared state.

#include <optional>
#include <vector>

namespace tandem::eval {

// What each tier's answer to one query is worth and costs.
struct Outcome {
  double edge_score = 0;
  double cloud_score = 0;
  double edge_cost = 0;
  double cloud_cost = 0;
};

// How a router spends: an ingress router runs one tier per query; a cascade always runs the
// edge and pays the cloud on top for the queries it escalates.
enum class CostModel { kOneTier, kCascade };

struct CurvePoint {
  double cloud_share = 0;  // share of queries answered by the cloud
  double quality = 0;      // mean score of the answers
  double cost = 0;         // total cost, USD
  double threshold = 0;    // the router's score at and above which queries went to the cloud
  double mid_share = 0;    // three-tier cascades: share answered by the middle tier
};

// Queries sorted by `need` (higher: cloud first), one point per group of equal need, from
// "all edge" (share 0) to "all cloud" (share 1). `need` and `outcomes` have the same length.
std::vector<CurvePoint> sweep(const std::vector<double>& need, const std::vector<Outcome>& outcomes,
                              CostModel cost_model);

// The curve of a router that sends a random share of queries to the cloud: linear between
// all-edge and all-cloud (in expectation).
std::vector<CurvePoint> random_curve(const std::vector<Outcome>& outcomes);

// The oracle router: the cloud exactly where its answer is better, largest gain first.
std::vector<CurvePoint> oracle_curve(const std::vector<Outcome>& outcomes);

struct CurveSummary {
  double edge_quality = 0;
  double cloud_quality = 0;
  double all_cloud_cost = 0;
  // Undefined (nullopt) when the cloud is not better than the edge on these queries.
  std::optional<double> apgr;
  std::optional<double> cpt50;
  std::optional<double> cpt80;
  std::optional<double> cpt95;
  // At the smallest cloud share whose quality reaches 95% of the cloud's.
  double cloud_share_at_95 = 0;
  double edge_share_at_95 = 0;
  double cost_at_95 = 0;
  double cost_saved_at_95 = 0;  // 1 - cost / all-cloud cost; negative when it costs more
};

CurveSummary summarize(const std::vector<CurvePoint>& curve, double all_cloud_cost,
                       double quality_target = 0.95);

// The first point (interpolated) where `value(point) >= target`, nullopt when none.
struct Crossing {
  double cloud_share = 0;
  double quality = 0;
  double cost = 0;
  double threshold = 0;
};
std::optional<Crossing> first_quality_at_least(const std::vector<CurvePoint>& curve,
                                               double quality);
// The point (interpolated) at a given cloud share.
Crossing at_cloud_share(const std::vector<CurvePoint>& curve, double share);

}  // namespace tandem::eval
