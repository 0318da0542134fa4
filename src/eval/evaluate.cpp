#include "eval/evaluate.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "eval/calibration.h"
#include "eval/gated_policy.h"
#include "eval/samples.h"
#include "eval/three_tier.h"
#include "routing/confidence.h"

namespace tandem::eval {
namespace {

using nlohmann::ordered_json;

bool wanted(const EvalOptions& options, std::string_view name) {
  return options.policy.empty() || options.policy == name;
}

PolicyResult unavailable(std::string name, std::string why) {
  PolicyResult r;
  r.name = std::move(name);
  r.available = false;
  r.unavailable_reason = std::move(why);
  return r;
}

PolicyResult swept(std::string name, std::string weights, const std::vector<double>& need,
                   const std::vector<Sample>& samples, CostModel cost_model) {
  PolicyResult r;
  r.name = std::move(name);
  r.weights = std::move(weights);
  r.cost_model = cost_model;
  r.curve = sweep(need, outcomes(samples), cost_model);
  r.summary = summarize(r.curve, all_cloud_cost(samples));
  return r;
}

// Each policy's need for the cloud (higher: cloud first), per sample, with its cost model.
struct Scored {
  std::string name;
  std::string weights;
  CostModel cost_model;
  std::vector<double> need;
  std::vector<bool> direct;  // queries never run on the edge (`gated`); empty: none
};

// The models cross_fitted() will fit for the options (each one per fold): after routing the
// prompts, they are where eval spends its time.
size_t cross_fits(const EvalOptions& options, const SampleSet& set) {
  if (!set.has_confidence) {
    return 0;
  }
  return (wanted(options, "learned") ? 1 : 0) + (wanted(options, "combined") ? 1 : 0) +
         (options.mid.empty() ? 0 : 2);
}

std::vector<Scored> score_policies(const EvalOptions& options, const SampleSet& set,
                                   double ingress_threshold, PhaseSteps& fits,
                                   std::vector<PolicyResult>& unavailable_out) {
  std::vector<Scored> out;
  const auto& samples = set.samples;
  const std::string no_confidence =
      "the data carries no confidence for the edge model ('" + options.edge + "')";
  if (wanted(options, "confidence")) {
    if (!set.has_confidence) {
      unavailable_out.push_back(unavailable("confidence", no_confidence));
    } else {
      Scored s{"confidence", "none: the raw signal", CostModel::kCascade, {}, {}};
      for (const auto& sample : samples) {
        s.need.push_back(cascade_need(sample));
      }
      out.push_back(std::move(s));
    }
  }
  for (const bool combined : {false, true}) {
    const char* name = combined ? "combined" : "learned";
    if (!wanted(options, name)) {
      continue;
    }
    if (!set.has_confidence) {
      unavailable_out.push_back(unavailable(name, no_confidence));
      continue;
    }
    FitOptions fit;
    fit.signals.complexity = combined;
    const FoldBy fold_by = options.left_out_tasks ? FoldBy::kTask : FoldBy::kRow;
    out.push_back({name,
                   options.left_out_tasks ? "cross-fitted (each task left out)"
                                          : "cross-fitted (5 folds by row id)",
                   CostModel::kCascade,
                   cross_fitted(samples, kEdgeTier, fit, true, fold_by),
                   {}});
    fits.step();
  }
  if (wanted(options, "gated")) {
    if (!set.has_confidence) {
      unavailable_out.push_back(unavailable("gated", no_confidence));
    } else {
      auto gated = gated_scores(samples, ingress_threshold);
      out.push_back({"gated",
                     "classifier >= " + std::to_string(ingress_threshold).substr(0, 5) +
                         " to the cloud, the rest: confidence",
                     CostModel::kCascade, std::move(gated.need), std::move(gated.direct)});
    }
  }
  if (wanted(options, "length")) {
    // The peer every prompt-only router must beat: longer prompts to the cloud first. The user
    // message's length, not the classifier's log_chars, which also counts the head of a system
    // prompt that states a task.
    Scored s{"length", "none: the prompt's length", CostModel::kOneTier, {}, {}};
    for (const auto& sample : samples) {
      s.need.push_back(sample.prompt_chars);
    }
    out.push_back(std::move(s));
  }
  if (wanted(options, "classifier")) {
    Scored s{"classifier",
             options.config && !options.config->routing.ingress.model.empty()
                 ? "configured: " + options.config->routing.ingress.model
                 : "shipped (models/router/complexity-default.json)",
             CostModel::kOneTier,
             {},
             {}};
    for (const auto& sample : samples) {
      s.need.push_back(sample.complexity);
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<OperatingPoint> operating_point(const config::GatewayConfig& config,
                                       const routing::Router& router,
                                       const std::vector<Sample>& samples) {
  OperatingPoint op;
  std::map<std::string, size_t> patterns;
  routing::HealthSnapshot healthy;
  double quality = 0;
  double cloud_quality = 0;
  size_t answered = 0;
  size_t on_cloud = 0;
  size_t on_review = 0;
  for (const auto& s : samples) {
    const routing::Decision d = router.decide(s.signals, healthy);
    ++patterns[routing::pattern_name(d.pattern)];
    op.all_cloud_cost_usd += s.cost[kCloudTier];
    bool cloud = false;
    double cost = 0;
    switch (d.pattern) {
      case routing::Pattern::kEdge:
        cost = s.cost[kEdgeTier];
        break;
      case routing::Pattern::kCloud:
        cloud = true;
        cost = s.cost[kCloudTier];
        break;
      case routing::Pattern::kCascade: {
        const auto& conf = s.confidence[kEdgeTier];
        if (!conf) {
          return make_error(
              ErrorCode::kInvalidArgument,
              "the configured cascade needs the edge's confidence, which row '" + s.id + "' lacks");
        }
        const config::KindCascade k = routing::cascade_settings(config.routing.cascade, s.kind);
        const double good = routing::combined_confidence(
            k.weights, conf->mean_logprob, conf->min_logprob, conf->mean_entropy, conf->mean_margin,
            s.complexity, conf->tokens);
        cloud = good < k.threshold;
        cost = s.cost[kEdgeTier] + (cloud ? s.cost[kCloudTier] : 0.0);
        break;
      }
      case routing::Pattern::kSpeculative:
        // The cloud verifies every edge answer and replaces it where they differ: in answer-
        // level traces that is the cloud's answer, at both tiers' cost.
        cloud = true;
        cost = s.cost[kEdgeTier] + s.cost[kCloudTier];
        break;
      case routing::Pattern::kCollaborate:
        return make_error(ErrorCode::kInvalidArgument,
                          "the configured pattern 'collaborate' works token by token; answer-level "
                          "traces cannot replay it (evaluate with routing.pattern: cascade or "
                          "ingress)");
      case routing::Pattern::kReview:
      case routing::Pattern::kNone:
        ++on_review;
        continue;
    }
    ++answered;
    on_cloud += cloud ? 1 : 0;
    quality += cloud ? s.score[kCloudTier] : s.score[kEdgeTier];
    cloud_quality += s.score[kCloudTier];
    op.cost_usd += cost;
  }
  const double total = static_cast<double>(samples.size());
  if (answered > 0) {
    op.quality = quality / static_cast<double>(answered);
    op.quality_vs_cloud = cloud_quality > 0 ? quality / cloud_quality : 0.0;
  }
  op.cloud_share = static_cast<double>(on_cloud) / total;
  op.edge_share = static_cast<double>(answered - on_cloud) / total;
  op.review_share = static_cast<double>(on_review) / total;
  op.patterns.assign(patterns.begin(), patterns.end());
  return op;
}

// The evaluated files the classifier's weights were trained on (by file name, from the weights'
// metadata), for the in-sample note; empty when none.
std::string training_overlap(const routing::ComplexityModel& model,
                             const std::vector<eval::TraceRow>& rows) {
  const auto& metadata = model.metadata();
  if (!metadata.is_object() || !metadata.contains("data") || !metadata["data"].is_array()) {
    return "";
  }
  std::set<std::string> trained;
  for (const auto& file : metadata["data"]) {
    if (file.is_string()) {
      trained.insert(std::filesystem::path(file.get<std::string>()).filename().string());
    }
  }
  std::set<std::string> overlap;
  for (const auto& row : rows) {
    const std::string file = row.location.substr(0, row.location.rfind(':'));
    const std::string name = std::filesystem::path(file).filename().string();
    if (trained.count(name) != 0) {
      overlap.insert(name);
    }
  }
  std::string out;
  for (const auto& name : overlap) {
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

PolicyResult baseline(const char* name, const std::vector<Sample>& samples) {
  PolicyResult r;
  r.name = name;
  r.weights = "none";
  const auto o = outcomes(samples);
  r.curve = std::string_view(name) == "random" ? random_curve(o) : oracle_curve(o);
  r.summary = summarize(r.curve, all_cloud_cost(samples));
  return r;
}

std::vector<PolicyResult> run_policies(const std::vector<Scored>& scored,
                                       const std::vector<PolicyResult>& unavailable_policies,
                                       const std::vector<Sample>& samples,
                                       const std::vector<size_t>& subset) {
  std::vector<Sample> picked;
  picked.reserve(subset.size());
  for (size_t i : subset) {
    picked.push_back(samples[i]);
  }
  std::vector<PolicyResult> out;
  for (const auto& s : scored) {
    std::vector<double> need;
    std::vector<bool> direct;
    need.reserve(subset.size());
    for (size_t i : subset) {
      need.push_back(s.need[i]);
      if (!s.direct.empty()) {
        direct.push_back(s.direct[i]);
      }
    }
    out.push_back(swept(s.name, s.weights, need,
                        direct.empty() ? picked : without_edge_cost(picked, direct), s.cost_model));
  }
  out.insert(out.end(), unavailable_policies.begin(), unavailable_policies.end());
  // Keep kPolicyNames order whatever was available.
  std::stable_sort(out.begin(), out.end(), [](const PolicyResult& a, const PolicyResult& b) {
    auto rank = [](const std::string& n) {
      return std::find_if(std::begin(kPolicyNames), std::end(kPolicyNames),
                          [&](const char* k) { return n == k; }) -
             std::begin(kPolicyNames);
    };
    return rank(a.name) < rank(b.name);
  });
  out.push_back(baseline("random", picked));
  out.push_back(baseline("oracle", picked));
  return out;
}

Status check_policy_name(const EvalOptions& options) {
  if (!options.policy.empty() &&
      std::find_if(std::begin(kPolicyNames), std::end(kPolicyNames),
                   [&](const char* n) { return options.policy == n; }) == std::end(kPolicyNames)) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "--policy: unknown policy '" + options.policy +
            "' (one of confidence, learned, classifier, combined, gated, length, random, oracle)");
  }
  return {};
}

// The mean quality of each tier over all rows.
void mean_qualities(const std::vector<Sample>& samples, EvalReport& report) {
  for (const auto& s : samples) {
    report.edge_quality += s.score[kEdgeTier];
    report.mid_quality += s.score[kMidTier];
    report.cloud_quality += s.score[kCloudTier];
  }
  const double n = static_cast<double>(samples.size());
  report.edge_quality /= n;
  report.mid_quality /= n;
  report.cloud_quality /= n;
}

// The policies again on each task's rows alone, with the kinds of query each task holds.
std::vector<Breakdown> task_breakdowns(const std::vector<Scored>& scored,
                                       const std::vector<PolicyResult>& missing,
                                       const std::vector<Sample>& samples) {
  std::vector<Breakdown> out;
  std::map<std::string, std::vector<size_t>> tasks;
  for (size_t i = 0; i < samples.size(); ++i) {
    tasks[samples[i].task.empty() ? "(none)" : samples[i].task].push_back(i);
  }
  for (const auto& [task, subset] : tasks) {
    std::map<std::string, size_t> kinds;
    for (size_t i : subset) {
      ++kinds[std::string(routing::query_kind_name(samples[i].kind))];
    }
    out.push_back({task,
                   subset.size(),
                   {kinds.begin(), kinds.end()},
                   run_policies(scored, missing, samples, subset)});
  }
  return out;
}

// Edge, then mid, then cloud, each tier escalating by its own cross-fitted confidence.
PolicyResult three_tier_result(const SampleSet& set, PhaseSteps& fits) {
  if (!set.has_confidence) {
    return unavailable("three_tier", "the data lacks the edge's or mid's confidence");
  }
  const auto& samples = set.samples;
  const FitOptions fit;
  const auto edge_good = cross_fitted(samples, kEdgeTier, fit, false);
  fits.step();
  const auto mid_good = cross_fitted(samples, kMidTier, fit, false);
  fits.step();
  PolicyResult r;
  r.name = "three_tier";
  r.weights = "cross-fitted (5 folds by row id), per tier";
  r.cost_model = CostModel::kCascade;
  r.curve = three_tier_curve(samples, edge_good, mid_good);
  r.summary = summarize(r.curve, all_cloud_cost(samples));
  return r;
}

}  // namespace

Result<EvalReport> evaluate(const EvalOptions& options, Progress& progress) {
  if (auto checked = check_policy_name(options); !checked) {
    return checked.error();
  }
  const config::RoutingConfig routing_config =
      options.config ? options.config->routing : config::RoutingConfig{};
  auto router = routing::Router::create(routing_config);
  if (!router) {
    return router.error();
  }
  auto rows = eval::load_trace_paths(options.data, progress);
  if (!rows) {
    return rows.error();
  }
  SampleOptions sample_options{options.edge, options.mid, options.cloud, options.edge_cost_zero,
                               options.seed};
  auto set = make_samples(rows.value(), sample_options, *router.value(), progress);
  if (!set) {
    return set.error();
  }
  const auto& samples = set.value().samples;
  EvalReport report;
  report.options = options;
  report.rows_read = set.value().rows_read;
  report.rows_used = samples.size();
  report.rows_skipped = set.value().rows_skipped;
  report.rows_without_cost = set.value().rows_without_cost;
  mean_qualities(samples, report);

  std::vector<PolicyResult> missing;
  PhaseSteps fits(progress, "cross-fitting policies", cross_fits(options, set.value()));
  const std::vector<Scored> scored = score_policies(
      options, set.value(), router.value()->config().ingress.threshold, fits, missing);
  std::vector<size_t> all(samples.size());
  for (size_t i = 0; i < all.size(); ++i) {
    all[i] = i;
  }
  report.policies = run_policies(scored, missing, samples, all);
  if (options.by_task) {
    report.tasks = task_breakdowns(scored, missing, samples);
  }
  if (!options.mid.empty()) {
    report.three_tier = three_tier_result(set.value(), fits);
  }
  if (options.config) {
    auto op = operating_point(*options.config, *router.value(), samples);
    if (!op) {
      return op.error();
    }
    report.operating = op.value();
  }
  if (const std::string overlap = training_overlap(router.value()->model(), rows.value());
      !overlap.empty()) {
    report.notes.push_back("the classifier was trained on 80% of " + overlap +
                           ": on those rows its figures are partly in-sample");
  }
  if (report.rows_without_cost > 0) {
    report.notes.push_back(std::to_string(report.rows_without_cost) +
                           " rows have no cost for some model: counted as 0");
  }
  return report;
}

}  // namespace tandem::eval
