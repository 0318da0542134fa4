#include "routing/router.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tandem::routing {
namespace {

using nlohmann::json;

// The scanner's rules from configured patterns and keyword lists.
PrivacyRules scanner_rules(const std::vector<config::NamedPattern>& patterns,
                           const std::vector<config::NamedWords>& keywords) {
  PrivacyRules rules;
  for (const auto& p : patterns) {
    rules.patterns.push_back({p.name, p.regex});
  }
  for (const auto& k : keywords) {
    rules.keyword_lists.push_back({k.name, k.words});
  }
  return rules;
}

// The review rules reuse the scanner with only the configured patterns and keywords.
PrivacyRules review_rules(const config::ReviewConfig& config) {
  PrivacyRules rules = scanner_rules(config.patterns, config.keywords);
  rules.disabled_detectors = PrivacyScanner::builtin_detectors();
  return rules;
}

// A share as an operator writes it: 0.01, not 0.010000.
std::string format_share(double share) {
  std::ostringstream out;
  out << share;
  return out.str();
}

}  // namespace

PrivacyRules privacy_rules(const config::PrivacyConfig& config) {
  PrivacyRules rules = scanner_rules(config.patterns, config.keywords);
  rules.disabled_detectors = config.disabled_detectors;
  return rules;
}

Result<double> threshold_for_share(const ComplexityModel& model, double cloud_share) {
  // The ends need no measurement: no score exceeds 1 and none falls below 0.
  if (cloud_share <= 0.0) {
    return std::nextafter(1.0, 2.0);
  }
  if (cloud_share >= 1.0) {
    return 0.0;
  }
  // The weights file lists (cloud_share, threshold) pairs measured on its training data;
  // thresholds fall as the share grows. Between two pairs, interpolate linearly.
  std::vector<std::pair<double, double>> points;
  const auto& metadata = model.metadata();
  if (metadata.contains("thresholds") && metadata["thresholds"].is_array()) {
    for (const auto& entry : metadata["thresholds"]) {
      if (entry.contains("cloud_share") && entry.contains("threshold") &&
          entry["cloud_share"].is_number() && entry["threshold"].is_number()) {
        points.emplace_back(entry["cloud_share"].get<double>(), entry["threshold"].get<double>());
      }
    }
  }
  if (points.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the classifier's weights record no thresholds for a cloud share");
  }
  std::sort(points.begin(), points.end());
  // Beyond the recorded shares a threshold was never measured; taking the nearest one would
  // silently gate a share the operator did not ask for.
  constexpr double kSlack = 1e-9;
  if (cloud_share < points.front().first - kSlack || cloud_share > points.back().first + kSlack) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "cloud_share " + format_share(cloud_share) +
            " is outside the shares the classifier's weights record thresholds for (" +
            format_share(points.front().first) + " to " + format_share(points.back().first) +
            ", or 0 and 1)");
  }
  if (cloud_share <= points.front().first) {
    return points.front().second;
  }
  for (size_t i = 1; i < points.size(); ++i) {
    if (cloud_share <= points[i].first) {
      const auto [s0, t0] = points[i - 1];
      const auto [s1, t1] = points[i];
      return t0 + (t1 - t0) * (cloud_share - s0) / (s1 - s0);
    }
  }
  return points.back().second;
}

Router::Router(config::RoutingConfig config, PrivacyScanner privacy,
               std::optional<PrivacyScanner> review, std::shared_ptr<const ComplexityModel> model)
    : config_(std::move(config)),
      privacy_(std::move(privacy)),
      review_(std::move(review)),
      model_(std::move(model)) {}

Result<std::shared_ptr<const Router>> Router::create(const config::RoutingConfig& config) {
  for (const auto& name : config.privacy.disabled_detectors) {
    const auto& known = PrivacyScanner::builtin_detectors();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const auto& k : known) {
        list += (list.empty() ? "" : ", ") + k;
      }
      return make_error(ErrorCode::kInvalidArgument,
                        "routing.privacy.disabled_detectors: unknown detector '" + name +
                            "' (known: " + list + ")");
    }
  }
  auto privacy = PrivacyScanner::create(privacy_rules(config.privacy));
  if (!privacy) {
    return make_error(ErrorCode::kInvalidArgument, "routing.privacy: " + privacy.error().message);
  }
  std::optional<PrivacyScanner> review;
  if (!config.review.keywords.empty() || !config.review.patterns.empty()) {
    auto scanner = PrivacyScanner::create(review_rules(config.review));
    if (!scanner) {
      return make_error(ErrorCode::kInvalidArgument, "routing.review: " + scanner.error().message);
    }
    review = std::move(scanner).value();
  }
  std::shared_ptr<const ComplexityModel> model;
  if (config.ingress.model.empty()) {
    model = std::shared_ptr<const ComplexityModel>(&ComplexityModel::builtin(),
                                                   [](const ComplexityModel*) {});
  } else {
    auto loaded = ComplexityModel::load(config.ingress.model);
    if (!loaded) {
      return make_error(loaded.error().code, "routing.ingress.model: " + loaded.error().message);
    }
    model = std::make_shared<const ComplexityModel>(std::move(loaded).value());
  }
  config::RoutingConfig resolved = config;
  if (resolved.ingress.threshold < 0) {
    auto threshold = threshold_for_share(*model, resolved.ingress.cloud_share);
    if (!threshold) {
      return make_error(
          ErrorCode::kInvalidArgument,
          "routing.ingress: " + threshold.error().message + "; set routing.ingress.threshold");
    }
    resolved.ingress.threshold = threshold.value();
  }
  return std::shared_ptr<const Router>(
      new Router(resolved, std::move(privacy).value(), std::move(review), std::move(model)));
}

std::vector<PrivacyFinding> Router::privacy_signal(const RouteInput& input,
                                                   std::vector<OpaqueContent>& opaque) const {
  const bool scan_opaque = config_.privacy.opaque_content != "allow";
  if (!config_.privacy.enabled && !scan_opaque) {
    return {};
  }
  std::optional<Result<JsonScan>> scanned;
  if (input.document != nullptr) {
    scanned = scan_json_document(privacy_, *input.document);
  } else if (!input.body.empty()) {
    scanned = scan_json(privacy_, input.body);
  }
  if (scanned && scanned->ok()) {
    opaque = std::move((*scanned)->opaque);
    if (config_.privacy.enabled) {
      return std::move((*scanned)->findings);
    }
    return {};
  }
  // Not JSON: read as text below, so nothing goes unscanned.
  if (config_.privacy.enabled) {
    return privacy_.scan(input.body.empty() ? input.text : input.body);
  }
  return {};
}

RouteSignals Router::privacy_signals(const RouteInput& input) const {
  RouteSignals s;
  s.hints = input.hints;
  s.privacy = privacy_signal(input, s.opaque);
  return s;
}

RouteSignals Router::signals(const RouteInput& input) const {
  RouteSignals s = privacy_signals(input);
  if (review_ && config_.review.enabled) {
    s.review = review_->scan(input.text);
  }
  s.features = extract_features(input.prompt);
  s.kind = query_kind(s.features);
  s.complexity = model_->score(s.features);
  return s;
}

json to_json(const std::vector<PrivacyFinding>& findings) {
  json out = json::array();
  for (const auto& f : findings) {
    json item = {
        {"detector", f.detector}, {"offset", f.offset}, {"length", f.length}, {"masked", f.masked}};
    if (!f.field.empty()) {
      item["field"] = f.field;
    }
    out.push_back(std::move(item));
  }
  return out;
}

json to_json(const std::vector<OpaqueContent>& opaque) {
  json out = json::array();
  for (const auto& o : opaque) {
    out.push_back({{"field", o.field}, {"kind", o.kind}});
  }
  return out;
}

json to_json(const Decision& decision) {
  json reasons = json::array();
  for (const auto& r : decision.reasons) {
    reasons.push_back({{"code", std::string(reason_code_name(r.code))}, {"detail", r.detail}});
  }
  return {{"tier", decision.tier == Tier::kNone ? json(nullptr) : json(tier_name(decision.tier))},
          {"pattern", pattern_name(decision.pattern)},
          {"cloud_allowed", decision.cloud_allowed},
          {"from_memory", decision.from_memory},
          {"reasons", std::move(reasons)},
          {"notice", decision.notice ? json(*decision.notice) : json(nullptr)}};
}

RouteExplanation Router::explanation(const RouteInput& input, const RouteSignals& signals,
                                     const Decision& decision, const HealthSnapshot& health,
                                     bool detailed) const {
  RouteExplanation e;
  e.decision = decision;
  e.signals = signals;
  e.health = health;
  e.prompt = {input.prompt.total_chars, input.prompt.turns};
  e.complexity_model = std::string(model_->version());
  if (detailed) {
    e.feature_contributions.emplace();
    for (const auto& c : model_->explain(signals.features, kFeatureCount)) {
      e.feature_contributions->push_back({std::string(c.feature), c.value, c.contribution});
    }
  }
  e.thresholds = {config_.ingress.threshold,
                  cascade_settings(config_.cascade, signals.kind).threshold,
                  config_.edge_latency_budget_ms, config_.collaborate.entropy_threshold,
                  config_.review.cloud_threshold};
  return e;
}

json Router::explain(const RouteInput& input, const RouteSignals& signals, const Decision& decision,
                     const HealthSnapshot& health, bool detailed) const {
  return to_json(explanation(input, signals, decision, health, detailed));
}

}  // namespace tandem::routing
