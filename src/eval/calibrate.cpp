#include "eval/calibrate.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <sstream>

#include "eval/curve.h"
#include "routing/confidence.h"
#include "routing/policy.h"

namespace tandem::eval {
namespace {

using nlohmann::ordered_json;

std::string text_of(double v) {
  std::ostringstream out;
  out.precision(6);
  out << v;
  return out.str();
}

double round6(double v) {
  return std::round(v * 1e6) / 1e6;
}

// The margin reaching the target on `rows` scored by `gain`, and what it gives there.
struct Chosen {
  double margin = 0;
  double cloud_share = 0;
  double quality_vs_cloud = 0;
};

Chosen choose_margin(const std::vector<double>& gain, const std::vector<const Sample*>& rows,
                     const CalibrateOptions& options) {
  std::vector<Outcome> o;
  double cloud = 0;
  for (const Sample* s : rows) {
    o.push_back(s->outcome());
    cloud += s->score[kCloudTier];
  }
  const auto curve = sweep(gain, o, CostModel::kCascade);
  const double n = static_cast<double>(rows.size());
  const double cloud_quality = cloud / n;
  Crossing at;
  if (options.target_quality) {
    const auto crossing = first_quality_at_least(curve, *options.target_quality * cloud_quality);
    at = crossing ? *crossing : Crossing{1.0, cloud_quality, curve.back().cost, -1e9};
  } else {
    at = at_cloud_share(curve, *options.target_cloud_share);
  }
  // Queries with gain >= margin escalate. At share 0 the curve's threshold is +infinity: no
  // escalation at all, which a finite margin above every gain also gives.
  double margin = at.threshold;
  if (!std::isfinite(margin)) {
    margin = 2.0;  // gains lie in [-1, 1]
  }
  return {margin, at.cloud_share, cloud_quality > 0 ? at.quality / cloud_quality : 0.0};
}

std::vector<double> gains_of(const std::vector<const Sample*>& rows, const FitOptions& fit) {
  std::vector<Sample> copy;
  copy.reserve(rows.size());
  for (const Sample* s : rows) {
    copy.push_back(*s);
  }
  return cross_fitted(copy, kEdgeTier, fit, true);
}

ordered_json hindsight_json(const HindsightShares& h) {
  auto share = [](const std::optional<double>& v) {
    return v ? ordered_json(round6(*v)) : ordered_json(nullptr);
  };
  return {{"tuned_cloud_share", share(h.tuned)}, {"oracle_cloud_share", share(h.oracle)}};
}

// " (threshold tuned on these rows: 0.361, oracle: 0.160)", or "" without a quality target.
std::string hindsight_text(const HindsightShares& h) {
  if (!h.tuned && !h.oracle) {
    return "";
  }
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(3);
  out << " (tuned on these rows: ";
  if (h.tuned) {
    out << *h.tuned;
  } else {
    out << "out of reach";
  }
  out << ", oracle: ";
  if (h.oracle) {
    out << *h.oracle;
  } else {
    out << "out of reach";
  }
  out << ")";
  return out.str();
}

ordered_json weights_json(const config::ConfidenceWeights& w) {
  return {{"bias", round6(w.bias)},
          {"mean_logprob", round6(w.mean_logprob)},
          {"min_logprob", round6(w.min_logprob)},
          {"mean_entropy", round6(w.mean_entropy)},
          {"mean_margin", round6(w.mean_margin)},
          {"log_doubt", round6(w.log_doubt)},
          {"log_tokens", round6(w.log_tokens)},
          {"complexity", round6(w.complexity)}};
}

void add_weight_edits(std::vector<config::ConfigEdit>& edits, std::vector<std::string> prefix,
                      const config::ConfidenceWeights& w) {
  prefix.push_back("weights");
  const std::pair<const char*, double> values[] = {{"bias", w.bias},
                                                   {"mean_logprob", w.mean_logprob},
                                                   {"min_logprob", w.min_logprob},
                                                   {"mean_entropy", w.mean_entropy},
                                                   {"mean_margin", w.mean_margin},
                                                   {"log_doubt", w.log_doubt},
                                                   {"log_tokens", w.log_tokens},
                                                   {"complexity", w.complexity}};
  for (const auto& [key, value] : values) {
    auto path = prefix;
    path.emplace_back(key);
    edits.push_back({path, text_of(round6(value))});
  }
}

HindsightShares hindsight_shares(const Calibration& calibration,
                                 const std::vector<const Sample*>& rows, double target_quality) {
  HindsightShares out;
  if (rows.empty()) {
    return out;
  }
  std::vector<double> need;
  std::vector<Outcome> outcomes;
  double cloud = 0;
  for (const Sample* row : rows) {
    need.push_back(escalation_gain(calibration, *row));
    outcomes.push_back(row->outcome());
    cloud += row->score[kCloudTier];
  }
  const double wanted = target_quality * cloud / static_cast<double>(rows.size());
  if (auto tuned = first_quality_at_least(sweep(need, outcomes, CostModel::kCascade), wanted)) {
    out.tuned = tuned->cloud_share;
  }
  if (auto oracle = first_quality_at_least(oracle_curve(outcomes), wanted)) {
    out.oracle = oracle->cloud_share;
  }
  return out;
}

}  // namespace

RealizedPoint apply_cascade(const config::CascadeConfig& cascade,
                            const std::vector<const Sample*>& rows) {
  RealizedPoint p;
  p.rows = rows.size();
  if (rows.empty()) {
    return p;
  }
  double quality = 0;
  double cloud_quality = 0;
  double cost = 0;
  double all_cloud = 0;
  size_t escalated = 0;
  for (const Sample* s : rows) {
    const config::KindCascade k = routing::cascade_settings(cascade, s->kind);
    const auto& c = s->confidence[kEdgeTier];
    const double good =
        c ? routing::combined_confidence(k.weights, c->mean_logprob, c->min_logprob,
                                         c->mean_entropy, c->mean_margin, s->complexity, c->tokens)
          : 0.0;
    const bool escalate = good < k.threshold;
    escalated += escalate ? 1 : 0;
    quality += s->score[escalate ? kCloudTier : kEdgeTier];
    cloud_quality += s->score[kCloudTier];
    cost += s->cost[kEdgeTier] + (escalate ? s->cost[kCloudTier] : 0.0);
    all_cloud += s->cost[kCloudTier];
  }
  const double n = static_cast<double>(rows.size());
  p.quality = quality / n;
  p.quality_vs_cloud = cloud_quality > 0 ? quality / cloud_quality : 0.0;
  p.cloud_share = static_cast<double>(escalated) / n;
  p.cost_saved = all_cloud > 0 ? 1.0 - cost / all_cloud : 0.0;
  return p;
}

namespace {

Status check_calibrate_options(const CalibrateOptions& options) {
  if (options.target_quality.has_value() == options.target_cloud_share.has_value()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "give exactly one target: --target-quality or --target-cloud-share");
  }
  if (options.target_quality && !(*options.target_quality > 0 && *options.target_quality <= 1)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "--target-quality: must be in (0, 1], a share of the cloud's quality");
  }
  if (options.target_cloud_share &&
      !(*options.target_cloud_share >= 0 && *options.target_cloud_share <= 1)) {
    return make_error(ErrorCode::kInvalidArgument, "--target-cloud-share: must be in [0, 1]");
  }
  if (!(options.fit_share > 0 && options.fit_share <= 1)) {
    return make_error(ErrorCode::kInvalidArgument, "--fit-share: must be in (0, 1]");
  }
  if (options.per_kind != "auto" && options.per_kind != "on" && options.per_kind != "off") {
    return make_error(ErrorCode::kInvalidArgument, "--per-kind: must be auto, on or off");
  }
  return {};
}

FitOptions fit_options(const CalibrateOptions& options, bool per_kind) {
  FitOptions fit;
  fit.signals = options.signals;
  fit.signals.complexity = options.combined;
  fit.per_kind = per_kind;
  return fit;
}

// Per kind or pooled: out-of-fold on the fitting rows, the variant that needs fewer cloud
// calls for the target quality (or keeps more quality at the target share) wins. Sets the
// result's variants, per_kind and margin; returns the winner's out-of-fold gains.
std::vector<double> choose_variant(const std::vector<const Sample*>& fit_rows,
                                   const CalibrateOptions& options, CalibrateResult& result,
                                   PhaseSteps& steps) {
  std::vector<bool> variants;
  if (options.per_kind != "off") {
    variants.push_back(true);
  }
  if (options.per_kind != "on") {
    variants.push_back(false);
  }
  std::vector<double> best_gain;
  Chosen best;
  for (const bool per_kind : variants) {
    const auto gain = gains_of(fit_rows, fit_options(options, per_kind));
    const Chosen chosen = choose_margin(gain, fit_rows, options);
    result.variants.push_back({per_kind, chosen.cloud_share, chosen.quality_vs_cloud});
    const bool better =
        best_gain.empty() ||
        (options.target_quality ? chosen.cloud_share < best.cloud_share - 1e-9
                                : chosen.quality_vs_cloud > best.quality_vs_cloud + 1e-9);
    if (better) {
      best = chosen;
      best_gain = gain;
      result.per_kind = per_kind;
    }
    steps.step();
  }
  result.margin = best.margin;
  return best_gain;
}

// What to expect: the out-of-fold decisions on the fitting rows (escalated where `gain`
// reaches the margin), with bootstrap intervals.
void expect_from_fit_rows(const std::vector<const Sample*>& fit_rows,
                          const std::vector<double>& gain, const CalibrateOptions& options,
                          CalibrateResult& result) {
  const size_t n = fit_rows.size();
  auto measure = [&](const std::vector<size_t>& index) {
    double quality = 0;
    double cloud = 0;
    size_t escalated = 0;
    for (size_t i : index) {
      const bool escalate = gain[i] >= result.margin;
      escalated += escalate ? 1 : 0;
      quality += fit_rows[i]->score[escalate ? kCloudTier : kEdgeTier];
      cloud += fit_rows[i]->score[kCloudTier];
    }
    return std::pair{cloud > 0 ? quality / cloud : 0.0,
                     static_cast<double>(escalated) / static_cast<double>(index.size())};
  };
  std::vector<size_t> identity(n);
  for (size_t i = 0; i < n; ++i) {
    identity[i] = i;
  }
  const auto [quality_estimate, share_estimate] = measure(identity);
  std::mt19937_64 random(options.seed ^ 0x5eed);
  std::uniform_int_distribution<size_t> pick(0, n - 1);
  std::vector<double> quality_draws;
  std::vector<double> share_draws;
  std::vector<size_t> resample(n);
  for (size_t b = 0; b < std::max<size_t>(options.bootstrap, 2); ++b) {
    for (auto& i : resample) {
      i = pick(random);
    }
    const auto [q, s] = measure(resample);
    quality_draws.push_back(q);
    share_draws.push_back(s);
  }
  result.expected_quality_vs_cloud = percentile_interval(quality_estimate, quality_draws);
  result.expected_cloud_share = percentile_interval(share_estimate, share_draws);
}

void note_small_kinds(CalibrateResult& result) {
  for (size_t k = 0; k < routing::kQueryKindCount; ++k) {
    const size_t rows = result.calibration.rows_by_kind[k];
    if (rows > 0 && rows < 40) {
      result.notes.push_back(
          "query kind '" +
          std::string(routing::query_kind_name(static_cast<routing::QueryKind>(k))) + "' has " +
          std::to_string(rows) + " rows: it uses the pooled calibration");
    }
  }
}

}  // namespace

Result<CalibrateResult> calibrate(const std::vector<Sample>& samples,
                                  const CalibrateOptions& options, Progress& progress) {
  if (auto checked = check_calibrate_options(options); !checked) {
    return checked.error();
  }
  CalibrateResult result;
  result.options = options;
  std::vector<const Sample*> fit_rows;
  std::vector<const Sample*> check_rows;
  for (const auto& s : samples) {
    if (!s.confidence[kEdgeTier]) {
      continue;
    }
    (eval::unit_interval(s.hash) < options.fit_share ? fit_rows : check_rows).push_back(&s);
  }
  if (fit_rows.size() < 20) {
    return make_error(ErrorCode::kInvalidArgument,
                      "too few rows with the edge's confidence to calibrate on (" +
                          std::to_string(fit_rows.size()) + " in the fitting sample, need 20)");
  }
  result.fit_rows = fit_rows.size();
  result.check_rows = check_rows.size();

  // Each variant's cross-fit, then the final fit, then the bootstrap.
  const size_t variants = (options.per_kind != "off" ? 1 : 0) + (options.per_kind != "on" ? 1 : 0);
  PhaseSteps steps(progress, "calibrating", variants + 2);
  const std::vector<double> best_gain = choose_variant(fit_rows, options, result, steps);
  result.calibration = fit_calibration(fit_rows, kEdgeTier, fit_options(options, result.per_kind));
  result.cascade = to_cascade_config(result.calibration, result.margin, options.base);
  steps.step();

  expect_from_fit_rows(fit_rows, best_gain, options, result);
  steps.step();
  result.check = apply_cascade(result.cascade, check_rows);
  if (options.target_quality) {
    result.check_hindsight =
        hindsight_shares(result.calibration, check_rows, *options.target_quality);
  }
  note_small_kinds(result);
  return result;
}

Result<std::vector<LeftOutTaskCheck>> check_left_out_tasks(const std::vector<Sample>& samples,
                                                           const CalibrateOptions& options,
                                                           Progress& progress) {
  std::set<std::string> tasks;
  for (const auto& s : samples) {
    tasks.insert(s.task);
  }
  if (tasks.size() < 2) {
    return make_error(ErrorCode::kInvalidArgument,
                      "leaving a task out needs rows of at least two tasks");
  }
  CalibrateOptions fit_all = options;
  fit_all.fit_share = 1.0;  // the left-out task is the check
  std::vector<LeftOutTaskCheck> checks;
  // One step per task; each calibration's own phase would only flicker past.
  PhaseSteps steps(progress, "calibrating without each task", tasks.size());
  for (const auto& task : tasks) {
    std::vector<Sample> others;
    std::vector<const Sample*> left_out;
    for (const auto& s : samples) {
      if (s.task == task) {
        left_out.push_back(&s);
      } else {
        others.push_back(s);
      }
    }
    auto fitted = calibrate(others, fit_all);
    if (!fitted) {
      return make_error(fitted.error().code,
                        "leaving out task '" + task + "': " + fitted.error().message);
    }
    LeftOutTaskCheck check;
    check.task = task;
    check.realized = apply_cascade(fitted.value().cascade, left_out);
    check.target = options.target_quality ? *options.target_quality : *options.target_cloud_share;
    if (options.target_quality) {
      check.hindsight =
          hindsight_shares(fitted.value().calibration, left_out, *options.target_quality);
    }
    checks.push_back(std::move(check));
    steps.step();
  }
  return checks;
}

std::vector<config::ConfigEdit> config_edits(const CalibrateResult& result) {
  std::vector<config::ConfigEdit> edits;
  const std::vector<std::string> cascade = {"routing", "cascade"};
  edits.push_back({{"routing", "cascade", "threshold"}, text_of(round6(result.cascade.threshold))});
  add_weight_edits(edits, cascade, result.cascade.weights);
  // Every kind is written, so that no kind keeps a stale calibration from an earlier run.
  for (const char* kind : config::kQueryKinds) {
    const auto it = result.cascade.kinds.find(kind);
    const config::KindCascade settings =
        it != result.cascade.kinds.end()
            ? it->second
            : config::KindCascade{result.cascade.threshold, result.cascade.weights};
    std::vector<std::string> prefix = {"routing", "cascade", "kinds", kind};
    auto threshold = prefix;
    threshold.emplace_back("threshold");
    edits.push_back({threshold, text_of(round6(settings.threshold))});
    add_weight_edits(edits, prefix, settings.weights);
  }
  return edits;
}

ordered_json to_json(const CalibrateResult& r) {
  auto interval = [](const Interval& i) {
    return ordered_json{
        {"estimate", round6(i.estimate)}, {"low", round6(i.low)}, {"high", round6(i.high)}};
  };
  ordered_json kinds = ordered_json::object();
  for (const char* kind : config::kQueryKinds) {
    const auto it = r.cascade.kinds.find(kind);
    const size_t index = static_cast<size_t>(
        std::find_if(std::begin(config::kQueryKinds), std::end(config::kQueryKinds),
                     [&](const char* k) { return std::string_view(k) == kind; }) -
        std::begin(config::kQueryKinds));
    ordered_json entry = {{"rows", r.calibration.rows_by_kind[index]},
                          {"own_weights", r.calibration.by_kind[index].has_value()}};
    if (it != r.cascade.kinds.end()) {
      entry["threshold"] = round6(it->second.threshold);
      entry["weights"] = weights_json(it->second.weights);
    }
    kinds[kind] = std::move(entry);
  }
  ordered_json variants = ordered_json::array();
  for (const auto& v : r.variants) {
    variants.push_back({{"per_kind", v.per_kind},
                        {"cloud_share", round6(v.cloud_share)},
                        {"quality_vs_cloud", round6(v.quality_vs_cloud)}});
  }
  ordered_json target;
  if (r.options.target_quality) {
    target = {{"quality_vs_cloud", *r.options.target_quality}};
  } else {
    target = {{"cloud_share", *r.options.target_cloud_share}};
  }
  ordered_json left_out = ordered_json::array();
  for (const auto& c : r.left_out_tasks) {
    left_out.push_back({{"task", c.task},
                        {"rows", c.realized.rows},
                        {"quality_vs_cloud", round6(c.realized.quality_vs_cloud)},
                        {"cloud_share", round6(c.realized.cloud_share)},
                        {"cost_saved", round6(c.realized.cost_saved)},
                        {"hindsight", hindsight_json(c.hindsight)}});
  }
  return {{"target", target},
          {"policy", r.options.combined ? "combined" : "learned"},
          {"per_kind", r.per_kind},
          {"variants", variants},
          {"margin", round6(r.margin)},
          {"rows", {{"fit", r.fit_rows}, {"check", r.check_rows}}},
          {"expected",
           {{"quality_vs_cloud", interval(r.expected_quality_vs_cloud)},
            {"cloud_share", interval(r.expected_cloud_share)}}},
          {"check",
           {{"rows", r.check.rows},
            {"quality", round6(r.check.quality)},
            {"quality_vs_cloud", round6(r.check.quality_vs_cloud)},
            {"cloud_share", round6(r.check.cloud_share)},
            {"cost_saved", round6(r.check.cost_saved)},
            {"hindsight", hindsight_json(r.check_hindsight)}}},
          {"left_out_tasks", left_out},
          {"cascade",
           {{"threshold", round6(r.cascade.threshold)},
            {"weights", weights_json(r.cascade.weights)},
            {"kinds", kinds}}},
          {"notes", r.notes}};
}

std::string to_text(const CalibrateResult& r) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(3);
  out << "calibrated the " << (r.options.combined ? "combined" : "learned") << " cascade on "
      << r.fit_rows << " rows";
  if (r.options.target_quality) {
    out << " for " << *r.options.target_quality * 100 << "% of the cloud's quality\n";
  } else {
    out << " for a cloud share of " << *r.options.target_cloud_share << "\n";
  }
  for (const auto& v : r.variants) {
    out << "  " << (v.per_kind ? "per query kind" : "one threshold ") << ": cloud share "
        << v.cloud_share << ", quality " << v.quality_vs_cloud * 100 << "% of cloud"
        << (v.per_kind == r.per_kind ? "  <- chosen" : "") << "\n";
  }
  const auto& q = r.expected_quality_vs_cloud;
  const auto& s = r.expected_cloud_share;
  out << "expected (fitting rows, out of fold, 95% bootstrap interval):\n"
      << "  quality " << q.estimate * 100 << "% of cloud [" << q.low * 100 << ", " << q.high * 100
      << "], cloud share " << s.estimate << " [" << s.low << ", " << s.high << "]\n";
  if (r.check.rows > 0) {
    out << "check (" << r.check.rows << " rows not fitted on): quality "
        << r.check.quality_vs_cloud * 100 << "% of cloud, cloud share " << r.check.cloud_share
        << hindsight_text(r.check_hindsight) << ", cost saved " << r.check.cost_saved * 100
        << "% vs all-cloud\n";
  }
  if (!r.left_out_tasks.empty()) {
    out << "each task left out (calibrated on the others, applied to it):\n";
    for (const auto& c : r.left_out_tasks) {
      out << "  " << c.task << " (" << c.realized.rows << " rows): quality "
          << c.realized.quality_vs_cloud * 100 << "% of cloud, cloud share "
          << c.realized.cloud_share << hindsight_text(c.hindsight) << "\n";
    }
  }
  out << "routing.cascade: threshold " << r.cascade.threshold << "\n";
  for (const auto& [kind, k] : r.cascade.kinds) {
    out << "  kinds." << kind << ": threshold " << k.threshold << ", weights bias "
        << k.weights.bias << " mean_logprob " << k.weights.mean_logprob;
    if (k.weights.complexity != 0) {
      out << " complexity " << k.weights.complexity;
    }
    out << "\n";
  }
  for (const auto& note : r.notes) {
    out << "note: " << note << "\n";
  }
  return out.str();
}

}  // namespace tandem::eval
