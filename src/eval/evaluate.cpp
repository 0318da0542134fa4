#include "eval/evaluate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

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
        s.need.push_back(-sample.confidence[kEdgeTier]->mean_logprob);
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
    // The peer every prompt-only router must beat: longer prompts to the cloud first.
    Scored s{"length", "none: the prompt's length", CostModel::kOneTier, {}, {}};
    const size_t log_chars = routing::feature_index("log_chars");
    for (const auto& sample : samples) {
      s.need.push_back(sample.signals.features.values[log_chars]);
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
      direct.push_back(!s.direct.empty() && s.direct[i]);
    }
    out.push_back(swept(s.name, s.weights, need,
                        s.direct.empty() ? picked : without_edge_cost(picked, direct),
                        s.cost_model));
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

ordered_json number(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) {
    return nullptr;
  }
  return std::round(*v * 1e6) / 1e6;
}

ordered_json summary_json(const PolicyResult& p, bool with_curve) {
  if (!p.available) {
    return {{"available", false}, {"reason", p.unavailable_reason}};
  }
  const CurveSummary& s = p.summary;
  ordered_json j = {{"apgr", number(s.apgr)},
                    {"cpt50", number(s.cpt50)},
                    {"cpt80", number(s.cpt80)},
                    {"cpt95", number(s.cpt95)},
                    {"edge_share_at_95", number(s.edge_share_at_95)},
                    {"cost_saved_at_95", number(s.cost_saved_at_95)},
                    {"cost_usd_at_95", number(s.cost_at_95)},
                    {"edge_quality", number(s.edge_quality)},
                    {"cloud_quality", number(s.cloud_quality)},
                    {"cost_model", p.cost_model == CostModel::kCascade ? "cascade" : "one_tier"},
                    {"weights", p.weights}};
  if (with_curve) {
    ordered_json curve = ordered_json::array();
    for (const auto& point : p.curve) {
      ordered_json pt = {{"cloud_share", number(point.cloud_share)},
                         {"quality", number(point.quality)},
                         {"cost_usd", number(point.cost)},
                         {"threshold", number(point.threshold)}};
      if (point.mid_share > 0) {
        pt["mid_share"] = number(point.mid_share);
      }
      curve.push_back(std::move(pt));
    }
    j["curve"] = std::move(curve);
  }
  return j;
}

const PolicyResult* headline(const EvalReport& report) {
  for (const char* name : {"learned", "classifier", "confidence", "combined"}) {
    if (!report.options.policy.empty() && report.options.policy != name) {
      continue;
    }
    for (const auto& p : report.policies) {
      if (p.name == name && p.available) {
        return &p;
      }
    }
  }
  return nullptr;
}

std::string fixed(std::optional<double> v, int digits = 3) {
  if (!v || !std::isfinite(*v)) {
    return "-";
  }
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << *v;
  return out.str();
}

void policy_table(std::ostringstream& out, const std::vector<PolicyResult>& policies) {
  out << "  policy        APGR   CPT50  CPT80  CPT95  edge@95  saved@95  weights\n";
  for (const auto& p : policies) {
    std::string name = p.name;
    name.resize(12, ' ');
    if (!p.available) {
      out << "  " << name << "  unavailable: " << p.unavailable_reason << "\n";
      continue;
    }
    const CurveSummary& s = p.summary;
    char line[160];
    std::snprintf(line, sizeof line, "  %s  %-5s  %-5s  %-5s  %-5s  %-7s  %-8s  %s\n", name.c_str(),
                  fixed(s.apgr).c_str(), fixed(s.cpt50).c_str(), fixed(s.cpt80).c_str(),
                  fixed(s.cpt95).c_str(), fixed(s.edge_share_at_95).c_str(),
                  fixed(s.cost_saved_at_95).c_str(), p.weights.c_str());
    out << line;
  }
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

nlohmann::ordered_json to_json(const EvalReport& report) {
  ordered_json j;
  const PolicyResult* head = headline(report);
  j["policy"] = head ? head->name : "";
  const ordered_json head_json = head ? summary_json(*head, false) : ordered_json::object();
  for (const char* key :
       {"apgr", "cpt50", "cpt80", "cpt95", "edge_share_at_95", "cost_saved_at_95"}) {
    j[key] = head_json.contains(key) ? head_json[key] : ordered_json(nullptr);
  }
  j["edge_quality"] = number(report.edge_quality);
  if (!report.options.mid.empty()) {
    j["mid_quality"] = number(report.mid_quality);
  }
  j["cloud_quality"] = number(report.cloud_quality);
  j["models"] = {{"edge", report.options.edge}, {"cloud", report.options.cloud}};
  if (!report.options.mid.empty()) {
    j["models"]["mid"] = report.options.mid;
  }
  j["rows"] = {{"read", report.rows_read},
               {"used", report.rows_used},
               {"skipped", report.rows_skipped},
               {"without_cost", report.rows_without_cost}};
  ordered_json policies = ordered_json::object();
  ordered_json baselines = ordered_json::object();
  for (const auto& p : report.policies) {
    const bool baseline = p.name == "random" || p.name == "oracle" || p.name == "length";
    (baseline ? baselines : policies)[p.name] = summary_json(p, true);
  }
  j["policies"] = std::move(policies);
  j["baselines"] = std::move(baselines);
  if (report.three_tier) {
    j["three_tier"] = summary_json(*report.three_tier, true);
  }
  if (report.operating) {
    const OperatingPoint& op = *report.operating;
    ordered_json patterns = ordered_json::object();
    for (const auto& [name, count] : op.patterns) {
      patterns[name] = count;
    }
    j["operating"] = {{"quality", number(op.quality)},
                      {"quality_vs_cloud", number(op.quality_vs_cloud)},
                      {"cloud_share", number(op.cloud_share)},
                      {"edge_share", number(op.edge_share)},
                      {"review_share", number(op.review_share)},
                      {"cost_usd", number(op.cost_usd)},
                      {"all_cloud_cost_usd", number(op.all_cloud_cost_usd)},
                      {"patterns", std::move(patterns)}};
  }
  if (!report.tasks.empty()) {
    ordered_json tasks = ordered_json::object();
    for (const auto& t : report.tasks) {
      ordered_json by_policy = ordered_json::object();
      for (const auto& p : t.policies) {
        by_policy[p.name] = summary_json(p, false);
      }
      ordered_json kinds = ordered_json::object();
      for (const auto& [kind, count] : t.kinds) {
        kinds[kind] = count;
      }
      tasks[t.task] = {
          {"rows", t.rows}, {"kinds", std::move(kinds)}, {"policies", std::move(by_policy)}};
    }
    j["tasks"] = std::move(tasks);
  }
  j["notes"] = report.notes;
  return j;
}

std::string to_text(const EvalReport& report) {
  std::ostringstream out;
  out << "tandem eval: " << report.rows_used << " queries (" << report.rows_skipped
      << " skipped), edge " << report.options.edge;
  if (!report.options.mid.empty()) {
    out << " -> mid " << report.options.mid;
  }
  out << " -> cloud " << report.options.cloud << "\n";
  out << "  edge quality " << fixed(report.edge_quality);
  if (!report.options.mid.empty()) {
    out << ", mid quality " << fixed(report.mid_quality);
  }
  out << ", cloud quality " << fixed(report.cloud_quality) << "\n\n";
  policy_table(out, report.policies);
  if (report.three_tier) {
    out << "\n";
    policy_table(out, {*report.three_tier});
  }
  for (const auto& t : report.tasks) {
    out << "\ntask " << t.task << " (" << t.rows << " queries; kinds:";
    for (const auto& [kind, count] : t.kinds) {
      out << " " << kind << " " << count;
    }
    out << ")\n";
    policy_table(out, t.policies);
  }
  if (report.operating) {
    const OperatingPoint& op = *report.operating;
    out << "\nconfigured thresholds: quality " << fixed(op.quality) << " ("
        << fixed(op.quality_vs_cloud * 100, 1) << "% of the cloud's), cloud share "
        << fixed(op.cloud_share) << ", edge share " << fixed(op.edge_share);
    if (op.review_share > 0) {
      out << ", review share " << fixed(op.review_share);
    }
    out << ", cost $" << fixed(op.cost_usd, 4) << " (all cloud $" << fixed(op.all_cloud_cost_usd, 4)
        << ")\n";
  }
  out << "\nAPGR: area under the share of the edge-cloud quality gap recovered, over the cloud "
         "share (random = 0.5).\nCPTx: cloud share needed to recover x% of the gap. edge@95 / "
         "saved@95: edge share and cost saved vs all-cloud at 95% of the cloud's quality.\n";
  for (const auto& note : report.notes) {
    out << "note: " << note << "\n";
  }
  return out.str();
}

}  // namespace tandem::eval
