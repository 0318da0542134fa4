// `tandem eval`'s report as JSON and as text: the policies' metrics, the headline policy, the
// per-task breakdowns and the configured operating point (evaluate.h).

#include <cmath>
#include <sstream>

#include "eval/evaluate.h"

namespace tandem::eval {
namespace {

using nlohmann::ordered_json;

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

}  // namespace

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
