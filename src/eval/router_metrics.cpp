// Router metrics and routing points: see router_metrics.h.

#include "eval/router_metrics.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace tandem::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

double auc(const std::vector<double>& scores, const std::vector<int>& labels) {
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double positive_rank_sum = 0;
  size_t positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) {
      ++j;
    }
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) {
      if (labels[order[k]] == 1) {
        positive_rank_sum += average_rank;
        ++positives;
      }
    }
    i = j;
  }
  const size_t negatives = n - positives;
  if (positives == 0 || negatives == 0) {
    return kNaN;
  }
  const double p = static_cast<double>(positives);
  return (positive_rank_sum - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

double log_loss(const std::vector<double>& scores, const std::vector<int>& labels) {
  if (scores.empty()) {
    return kNaN;
  }
  double sum = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    const double p = std::clamp(scores[i], 1e-15, 1 - 1e-15);
    sum -= labels[i] == 1 ? std::log(p) : std::log(1 - p);
  }
  return sum / static_cast<double>(scores.size());
}

BinaryMetrics binary_metrics(const std::vector<double>& scores, const std::vector<int>& labels) {
  BinaryMetrics metrics;
  metrics.rows = scores.size();
  double positives = 0;
  for (int label : labels) {
    positives += label;
  }
  metrics.base_rate = scores.empty() ? kNaN : positives / static_cast<double>(scores.size());
  metrics.auc = auc(scores, labels);
  metrics.log_loss = log_loss(scores, labels);
  return metrics;
}

double threshold_for_share(std::vector<double> scores, double share) {
  if (scores.empty()) {
    return kNaN;
  }
  std::sort(scores.begin(), scores.end(), std::greater<>());
  const auto wanted = static_cast<size_t>(std::llround(share * static_cast<double>(scores.size())));
  return scores[std::clamp<size_t>(wanted, 1, scores.size()) - 1];
}

void fill_routing(const std::vector<ScoredExample>& rows,
                  const std::vector<std::pair<double, double>>& share_thresholds,
                  EvaluationReport& report) {
  double edge_sum = 0;
  double cloud_sum = 0;
  std::vector<double> scores;
  std::vector<int> labels;
  for (const auto& row : rows) {
    edge_sum += row.example->edge;
    cloud_sum += row.example->cloud;
    scores.push_back(row.score);
    labels.push_back(row.example->label);
  }
  const double n = static_cast<double>(rows.size());
  report.metrics = binary_metrics(scores, labels);
  report.all_edge_quality = rows.empty() ? kNaN : edge_sum / n;
  report.all_cloud_quality = rows.empty() ? kNaN : cloud_sum / n;
  report.points.clear();
  if (rows.empty()) {
    return;
  }
  for (const auto& [share, threshold] : share_thresholds) {
    RoutingPoint point;
    point.target_share = share;
    point.threshold = threshold;
    double cloud_rows = 0;
    double quality_sum = 0;
    for (const auto& row : rows) {
      const bool to_cloud = row.score >= threshold;
      cloud_rows += to_cloud ? 1 : 0;
      quality_sum += to_cloud ? row.example->cloud : row.example->edge;
    }
    const double all_edge = report.all_edge_quality;
    const double all_cloud = report.all_cloud_quality;
    point.cloud_share = cloud_rows / n;
    point.quality = quality_sum / n;
    point.quality_kept = all_cloud > 0 ? point.quality / all_cloud : kNaN;
    point.gap_recovered =
        all_cloud != all_edge ? (point.quality - all_edge) / (all_cloud - all_edge) : kNaN;
    point.random_quality = all_edge + point.cloud_share * (all_cloud - all_edge);
    report.points.push_back(point);
  }
}

std::vector<double> scores_of(const ComplexityModel& model, const ExampleRefs& examples) {
  std::vector<double> scores;
  scores.reserve(examples.size());
  for (const TrainingExample* example : examples) {
    scores.push_back(model.score(example->features));
  }
  return scores;
}

std::vector<int> labels_of(const ExampleRefs& examples) {
  std::vector<int> labels;
  labels.reserve(examples.size());
  for (const TrainingExample* example : examples) {
    labels.push_back(example->label);
  }
  return labels;
}

}  // namespace tandem::eval
