// The router trainer's reports and weights-file metadata as JSON. Non-finite numbers become
// null: JSON has no NaN.

#include "eval/router_report_json.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <string>

#include "common/time_text.h"

namespace tandem::eval {

using namespace routing;  // NOLINT(google-build-using-namespace)

namespace {

std::string utc_now() {
  return utc_iso8601(std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count());
}

nlohmann::ordered_json number(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json to_json(const RoutingPoint& point) {
  return {{"target_cloud_share", number(point.target_share)},
          {"threshold", number(point.threshold)},
          {"cloud_share", number(point.cloud_share)},
          {"quality", number(point.quality)},
          {"quality_kept", number(point.quality_kept)},
          {"gap_recovered", number(point.gap_recovered)},
          {"random_router_quality", number(point.random_quality)}};
}

nlohmann::ordered_json to_json(const std::vector<ModelPair>& pairs) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& pair : pairs) {
    out.push_back({{"edge", pair.edge}, {"cloud", pair.cloud}});
  }
  return out;
}

nlohmann::ordered_json l2_json(double l2) {
  return std::isinf(l2) ? nlohmann::ordered_json("prior-only") : nlohmann::ordered_json(l2);
}

nlohmann::ordered_json optional_number(const std::optional<double>& value) {
  return value ? number(*value) : nlohmann::ordered_json(nullptr);
}

// {estimate, low, high} (the 95% bootstrap interval), or null when not measured.
nlohmann::ordered_json interval_json(const std::optional<Interval>& interval) {
  if (!interval) {
    return nullptr;
  }
  return {{"estimate", number(interval->estimate)},
          {"low", number(interval->low)},
          {"high", number(interval->high)}};
}

nlohmann::ordered_json summary_json(const LeftOutReport& report) {
  nlohmann::ordered_json out = {{"slices_counted", report.counted},
                                {"mean_apgr", number(report.mean_model)},
                                {"mean_length_apgr", number(report.mean_length)},
                                {"mean_best_baseline_apgr", number(report.mean_best_baseline)},
                                {"slices_at_least_best_baseline", report.at_least_baseline},
                                {"mean_incumbent_apgr", optional_number(report.mean_incumbent)}};
  if (report.noise_draws > 0) {
    auto summary = [&](const NoiseSummary& s) {
      return nlohmann::ordered_json{{"resamples", report.noise_draws},
                                    {"slices_below_beyond_chance", s.below},
                                    {"slices_above_beyond_chance", s.above},
                                    {"mean", interval_json(s.mean)}};
    };
    out["versus_length"] = summary(report.versus_length);
    out["versus_best_baseline"] = summary(report.versus_best);
  }
  return out;
}

// Per file and language: pairs, ordered by the new weights and by the ones in service.
nlohmann::ordered_json common_sense_json(const CommonSense& check) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (size_t i = 0; i < check.model.size(); ++i) {
    const PairOrdering& row = check.model[i];
    nlohmann::ordered_json item = {{"file", row.file},
                                   {"lang", row.lang},
                                   {"pairs", row.pairs},
                                   {"ordered", row.ordered},
                                   {"misordered", row.misordered}};
    if (i < check.incumbent.size()) {
      item["incumbent_ordered"] = check.incumbent[i].ordered;
    }
    rows.push_back(std::move(item));
  }
  return {{"floor", kCommonSenseFloor}, {"kept", check.kept}, {"files", std::move(rows)}};
}

}  // namespace

nlohmann::ordered_json weights_metadata(const TrainingReport& report, size_t train_rows,
                                        size_t holdout_rows) {
  const TrainingOptions& options = report.options;
  nlohmann::ordered_json metadata;
  metadata["trainer"] = "tandem router train";
  metadata["created_at"] = utc_now();
  metadata["pairs"] = to_json(options.pairs);
  metadata["label"] = "1 when the cloud's score is higher than the edge's (ties: the edge)";
  metadata["data"] = options.data_files;
  metadata["prior"] = report.prior_source;
  metadata["rows"] = {{"read", report.rows_read},
                      {"used", report.rows_used},
                      {"skipped", report.rows_skipped},
                      {"train", train_rows},
                      {"holdout", holdout_rows}};
  metadata["split"] = {
      {"holdout", options.holdout}, {"seed", options.seed}, {"by", "hash of the row id"}};
  metadata["balance"] = {{"max_slice_rows", options.max_slice_rows},
                         {"slice_weight_rows", options.slice_weight_rows}};
  metadata["l2"] = l2_json(report.l2);
  metadata["l2_selection"] = report.l2_selection;
  metadata["base_rate"] = number(report.train.base_rate);
  metadata["metrics"] = {{"train", to_json(report.train)}, {"holdout", to_json(report.holdout)}};
  metadata["left_out"] = {{"task", summary_json(report.left_out_task)},
                          {"task_prior_only", summary_json(report.left_out_task_prior)},
                          {"source", summary_json(report.left_out_source)}};
  return metadata;
}

void add_shipped_metadata(nlohmann::ordered_json& metadata, const TrainingReport& report,
                          const std::vector<std::pair<double, double>>& thresholds) {
  auto& suggested = metadata["thresholds"] = nlohmann::ordered_json::array();
  for (const auto& [share, threshold] : thresholds) {
    suggested.push_back({{"cloud_share", share}, {"threshold", number(threshold)}});
  }
  metadata["holdout_routing"] = {
      {"all_edge_quality", number(report.holdout_routing.all_edge_quality)},
      {"all_cloud_quality", number(report.holdout_routing.all_cloud_quality)}};
  metadata["feature_names"] = feature_names();
}

nlohmann::ordered_json to_json(const BinaryMetrics& metrics) {
  return {{"rows", metrics.rows},
          {"base_rate", number(metrics.base_rate)},
          {"auc", number(metrics.auc)},
          {"log_loss", number(metrics.log_loss)}};
}

nlohmann::ordered_json to_json(const EvaluationReport& report) {
  nlohmann::ordered_json out;
  out["data"] = report.data_files;
  out["pairs"] = to_json(report.pairs);
  out["rows"] = {
      {"read", report.rows_read}, {"used", report.metrics.rows}, {"skipped", report.rows_skipped}};
  out["metrics"] = to_json(report.metrics);
  out["all_edge_quality"] = number(report.all_edge_quality);
  out["all_cloud_quality"] = number(report.all_cloud_quality);
  auto& points = out["routing"] = nlohmann::ordered_json::array();
  for (const auto& point : report.points) {
    points.push_back(to_json(point));
  }
  return out;
}

nlohmann::ordered_json to_json(const TrainingReport& report) {
  nlohmann::ordered_json out;
  out["data"] = report.options.data_files;
  out["pairs"] = to_json(report.options.pairs);
  out["prior"] = report.prior_source;
  out["rows"] = {{"read", report.rows_read},
                 {"used", report.rows_used},
                 {"skipped", report.rows_skipped},
                 {"train", report.train.rows},
                 {"holdout", report.holdout.rows}};
  out["l2"] = l2_json(report.l2);
  out["l2_selection"] = report.l2_selection;
  auto& search = out["l2_search"] = nlohmann::ordered_json::array();
  for (const auto& candidate : report.l2_search) {
    search.push_back({{"l2", l2_json(candidate.l2)},
                      {"cv_log_loss", number(candidate.cv_log_loss)},
                      {"cv_auc", number(candidate.cv_auc)},
                      {"left_out_task_mean_apgr", number(candidate.left_out_apgr)}});
  }
  out["accepted"] = report.accepted;
  if (report.common_sense) {
    out["common_sense"] = common_sense_json(*report.common_sense);
  }
  out["left_out"] = {{"task", to_json(report.left_out_task)},
                     {"task_prior_only", to_json(report.left_out_task_prior)},
                     {"source", to_json(report.left_out_source)}};
  out["train"] = to_json(report.train);
  out["holdout"] = to_json(report.holdout);
  out["holdout_routing"] = {{"all_edge_quality", number(report.holdout_routing.all_edge_quality)},
                            {"all_cloud_quality", number(report.holdout_routing.all_cloud_quality)},
                            {"thresholds", nlohmann::ordered_json::array()}};
  for (const auto& point : report.holdout_routing.points) {
    out["holdout_routing"]["thresholds"].push_back(to_json(point));
  }
  auto& top = out["top_features"] = nlohmann::ordered_json::array();
  for (const auto& [name, weight] : report.top_features) {
    top.push_back({{"feature", name}, {"weight", weight}});
  }
  out["constant_features"] = report.constant_features;
  out["version"] = report.model ? std::string(report.model->version()) : std::string();
  return out;
}

nlohmann::ordered_json to_json(const LeftOutReport& report) {
  nlohmann::ordered_json out = summary_json(report);
  out["by"] = report.by;
  auto slice_json = [](const SliceResult& slice) {
    return nlohmann::ordered_json{{"source", slice.source},
                                  {"task", slice.task},
                                  {"rows", slice.rows},
                                  {"net_gap_rows", slice.net_gap_rows},
                                  {"edge_quality", number(slice.edge_quality)},
                                  {"cloud_quality", number(slice.cloud_quality)},
                                  {"apgr", optional_number(slice.model)},
                                  {"length_apgr", optional_number(slice.length)},
                                  {"turns_apgr", optional_number(slice.turns)},
                                  {"best_baseline_apgr", optional_number(slice.best_baseline())},
                                  {"incumbent_apgr", optional_number(slice.incumbent)},
                                  {"versus_length", interval_json(slice.versus_length)},
                                  {"versus_best_baseline", interval_json(slice.versus_best)},
                                  {"counted", slice.counted()}};
  };
  auto& slices = out["slices"] = nlohmann::ordered_json::array();
  for (const auto& slice : report.slices) {
    slices.push_back(slice_json(slice));
  }
  auto& mixed = out["mixed_traffic"] = nlohmann::ordered_json::array();
  for (const auto& slice : report.mixed) {
    mixed.push_back(slice_json(slice));
  }
  return out;
}

}  // namespace tandem::eval
