#include "eval/replay.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace tandem::eval {

// The per-request routing code this offline work drives.
using namespace routing;  // NOLINT(google-build-using-namespace)

namespace {

using nlohmann::json;

// Rules that decided from the state of the tiers at the time, not from the request: replay
// assumes both tiers up, so these requests keep the tier they had.
bool health_rule(const std::string& code) {
  return code == "cloud.offline" || code == "edge.unavailable" || code == "cloud.not_configured" ||
         code == "no_tier" || code.rfind("capability.", 0) == 0;
}

bool any_code(const std::vector<std::string>& codes, bool (*match)(const std::string&)) {
  return std::any_of(codes.begin(), codes.end(), match);
}

bool model_rule(const std::string& code) {
  return code.rfind("model.", 0) == 0;
}

bool named(const std::vector<config::NamedPattern>& patterns, std::string_view name) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const config::NamedPattern& p) { return p.name == name; });
}

bool named(const std::vector<config::NamedWords>& lists, std::string_view name) {
  return std::any_of(lists.begin(), lists.end(),
                     [&](const config::NamedWords& w) { return w.name == name; });
}

// Whether a recorded finding still counts under `patterns` and `keywords` (the configured
// rules) with the built-in detectors `builtin_on`: a rule the new configuration removed or
// switched off no longer matches.
bool still_matches(const std::string& detector, const std::vector<config::NamedPattern>& patterns,
                   const std::vector<config::NamedWords>& keywords, bool builtin_on,
                   const std::vector<std::string>& disabled) {
  constexpr std::string_view kPattern = "pattern:";
  constexpr std::string_view kKeyword = "keyword:";
  if (detector.rfind(kPattern, 0) == 0) {
    return named(patterns, std::string_view(detector).substr(kPattern.size()));
  }
  if (detector.rfind(kKeyword, 0) == 0) {
    return named(keywords, std::string_view(detector).substr(kKeyword.size()));
  }
  return builtin_on && std::find(disabled.begin(), disabled.end(), detector) == disabled.end();
}

std::string tier_label(const std::string& tier, bool escalated) {
  return escalated ? tier + " (escalated)" : tier;
}

void count(TierShares& shares, const std::string& tier, bool escalated) {
  if (tier == "edge") {
    ++shares.edge;
  } else if (tier == "cloud") {
    ++shares.cloud;
  } else if (tier == "human") {
    ++shares.human;
  } else {
    ++shares.none;
  }
  if (escalated) {
    ++shares.escalated;
  }
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
  return buffer;
}

json shares_json(const TierShares& s, size_t total) {
  auto share = [total](size_t n) { return total == 0 ? 0.0 : static_cast<double>(n) / total; };
  json out = json::object();
  for (const auto& [name, n] : {std::pair<const char*, size_t>{"edge", s.edge},
                                {"cloud", s.cloud},
                                {"human", s.human},
                                {"none", s.none},
                                {"escalated", s.escalated}}) {
    out[name] = {{"requests", n}, {"share", share(n)}};
  }
  return out;
}

}  // namespace

Replayer::Replayer(std::shared_ptr<const Router> router, size_t max_changes)
    : router_(std::move(router)), max_changes_(max_changes) {}

Replayer::Outcome Replayer::before(const RecordedRequest& r) const {
  Outcome o;
  o.tier = r.tier;
  o.escalated = r.escalated;
  o.cost = r.cost_edge + r.cost_cloud;
  if (r.tier == "cloud" || r.tier == "human") {
    o.quality = 1.0;
  } else if (r.tier == "edge") {
    if (r.edge_good) {
      o.quality = *r.edge_good ? 1.0 : 0.0;
      o.labelled = true;
    } else if (r.confidence && r.confidence->tokens > 0) {
      o.quality = r.confidence->combined;  // P(good) under the weights of the time
    }
  } else {
    o.quality = 0.0;  // no answer
  }
  return o;
}

RouteSignals Replayer::signals(const RecordedRequest& r, QueryKind kind) {
  const config::RoutingConfig& cfg = router_->config();
  RouteSignals s;
  s.hints = r.hints;
  s.kind = kind;
  // With routing.privacy off the scanner does not run at all.
  for (const auto& detector : r.privacy_detectors) {
    if (cfg.privacy.enabled && still_matches(detector, cfg.privacy.patterns, cfg.privacy.keywords,
                                             true, cfg.privacy.disabled_detectors)) {
      PrivacyFinding finding;
      finding.detector = detector;
      s.privacy.push_back(std::move(finding));
    }
  }
  if (cfg.review.enabled) {
    for (const auto& rule : r.review_rules) {
      if (still_matches(rule, cfg.review.patterns, cfg.review.keywords, false, {})) {
        PrivacyFinding finding;
        finding.detector = rule;
        s.review.push_back(std::move(finding));
      }
    }
  }
  if (read_recorded_features(r.features, s.features)) {
    s.complexity = router_->model().score(s.features);
  } else {
    ++report_.features_missing;
    s.complexity = r.complexity;
  }
  return s;
}

// The edge's answer: its label when one was recorded, else P(good) from its recorded signals
// under the new weights for its kind.
Replayer::EdgeAnswer Replayer::edge_answer(const RecordedRequest& r,
                                           const config::KindCascade& cascade, double complexity) {
  EdgeAnswer edge;
  if (r.confidence && r.confidence->tokens > 0) {
    const ConfidenceSnapshot& c = *r.confidence;
    edge.confidence = combined_confidence(cascade.weights, c.mean_logprob, c.min_logprob,
                                          c.mean_entropy, c.mean_margin, complexity);
  }
  if (r.edge_good) {
    edge.quality = *r.edge_good ? 1.0 : 0.0;
    edge.labelled = true;
  } else {
    edge.quality = edge.confidence;
  }
  return edge;
}

// The tier the decided pattern gives the request (a cascade by the edge's confidence under the
// new threshold, P3 by the recorded label), adding to `detail` why.
Replayer::Outcome Replayer::follow(Pattern pattern, const RecordedRequest& r, QueryKind kind,
                                   const config::KindCascade& cascade, EdgeAnswer& edge,
                                   std::string& detail) {
  Outcome now;
  switch (pattern) {
    case Pattern::kNone:
      now.tier = "none";
      now.quality = 0.0;
      break;
    case Pattern::kCloud:
      now.tier = "cloud";
      break;
    case Pattern::kReview:
      now.tier = "human";
      break;
    case Pattern::kEdge:
    case Pattern::kCollaborate:
      now.tier = "edge";
      break;
    case Pattern::kCascade:
      if (!r.confidence) {
        now.tier = "edge";
        edge.quality.reset();
        edge.labelled = false;
        ++report_.unjudged_cascade;
        detail += "; no recorded edge confidence: counted as an edge answer";
      } else if (!edge.confidence || *edge.confidence < cascade.threshold) {
        now.tier = "cloud";
        now.escalated = true;
        detail += edge.confidence ? "; edge confidence " + fixed(*edge.confidence, 3) + " < " +
                                        fixed(cascade.threshold, 3) + " (" +
                                        std::string(query_kind_name(kind)) + "): escalated"
                                  : "; the edge wrote no tokens: escalated";
      } else {
        now.tier = "edge";
        detail += "; edge confidence " + fixed(*edge.confidence, 3) +
                  " >= " + fixed(cascade.threshold, 3) + " (" + std::string(query_kind_name(kind)) +
                  "): the edge answers";
      }
      break;
    case Pattern::kSpeculative:
      now.verified = true;  // P3: the cloud is called whatever it decides
      if (r.edge_good && !*r.edge_good) {
        now.tier = "cloud";  // the verification revises a wrong edge answer
        now.escalated = true;
      } else {
        now.tier = "edge";
      }
      break;
  }
  if (now.tier == "cloud" || now.tier == "human") {
    now.quality = 1.0;
  } else if (now.tier == "edge") {
    now.quality = edge.quality;
    now.labelled = edge.labelled;
  }
  return now;
}

// Cost: unchanged when the outcome is; otherwise the recorded edge cost for an edge answer
// and the recorded all-cloud price for a cloud one.
double Replayer::cost_of(const RecordedRequest& r, const Outcome& was, const Outcome& now,
                         Pattern pattern) {
  if (now.tier == was.tier && now.escalated == was.escalated &&
      r.pattern == pattern_name(pattern)) {
    return was.cost;
  }
  const bool edge_ran = now.tier == "edge" || now.escalated;
  const bool cloud_ran = now.tier == "cloud" || now.verified;
  double cost = edge_ran ? r.cost_edge : 0.0;
  if (cloud_ran) {
    if (r.cost_all_cloud) {
      cost += *r.cost_all_cloud;
    } else {
      ++report_.cost_unknown;
    }
  }
  return cost;
}

Replayer::Outcome Replayer::redecide(const RecordedRequest& r, const Outcome& was,
                                     std::string& reason, std::string& detail) {
  const config::RoutingConfig& cfg = router_->config();
  PromptFeatures features;
  read_recorded_features(r.features, features);  // all zero when the trace kept none
  const QueryKind kind = parse_query_kind(r.kind).value_or(query_kind(features));
  const RouteSignals s = signals(r, kind);
  const Decision decision = router_->decide(s, HealthSnapshot{});
  if (!decision.reasons.empty()) {
    reason = std::string(reason_code_name(decision.reasons.front().code));
    detail = decision.reasons.front().detail;
  }
  const config::KindCascade cascade = cascade_settings(cfg.cascade, kind);
  EdgeAnswer edge = edge_answer(r, cascade, s.complexity);
  Outcome now = follow(decision.pattern, r, kind, cascade, edge, detail);
  now.cost = cost_of(r, was, now, decision.pattern);
  return now;
}

void Replayer::tally(const RecordedRequest& r, const Outcome& was, const Outcome& now,
                     const std::string& reason, const std::string& detail) {
  count(report_.before, was.tier, was.escalated);
  count(report_.after, now.tier, now.escalated);
  report_.cost_before_usd += was.cost;
  report_.cost_after_usd += now.cost;
  if (was.quality && now.quality) {
    ++report_.quality_requests;
    quality_before_sum_ += *was.quality;
    quality_after_sum_ += *now.quality;
    if (was.labelled || now.labelled) {
      ++report_.labelled;
    }
  }
  if (now.tier != was.tier) {
    ++report_.changed;
    if (report_.changes.size() < max_changes_) {
      report_.changes.push_back({r.request_id, r.kind, tier_label(was.tier, was.escalated),
                                 tier_label(now.tier, now.escalated), reason, detail});
    }
  }
}

void Replayer::add(const RecordedRequest& r) {
  ++report_.requests;
  const Outcome was = before(r);
  Outcome now = was;
  std::string reason;
  std::string detail;
  if (r.tier != "edge" && r.tier != "cloud" && r.tier != "human") {
    ++report_.kept_failed;
  } else if (any_code(r.reason_codes, model_rule)) {
    ++report_.kept_explicit;
  } else if (any_code(r.reason_codes, health_rule)) {
    ++report_.kept_health;
  } else {
    ++report_.redecided;
    now = redecide(r, was, reason, detail);
  }
  tally(r, was, now, reason, detail);
}

ReplayReport Replayer::report() const {
  ReplayReport out = report_;
  if (out.quality_requests > 0) {
    out.quality_before = quality_before_sum_ / static_cast<double>(out.quality_requests);
    out.quality_after = quality_after_sum_ / static_cast<double>(out.quality_requests);
  }
  const config::RoutingConfig& cfg = router_->config();
  auto& notes = out.notes;
  notes.push_back(
      "the consistency memory is not replayed: every request is decided afresh (the memory "
      "depends on the order of live traffic)");
  notes.push_back("both tiers are assumed healthy; " + std::to_string(out.kept_health) +
                  " request(s) decided by a health or capability rule keep their tier, as do " +
                  std::to_string(out.kept_explicit) + " that named a model and " +
                  std::to_string(out.kept_failed) + " that failed");
  notes.push_back(
      "privacy and review rules are re-applied to the recorded findings only: a pattern or "
      "keyword list the new configuration adds needs the prompt text, which traces never keep");
  if (cfg.shadow.enabled) {
    notes.push_back("shadow mode is not replayed: the report shows the routing without it");
  }
  if (cfg.review.enabled) {
    notes.push_back(
        "escalations the cloud is unsure of would go to review (routing.review.cloud_threshold); "
        "the cloud's confidence is not recorded, so they count as cloud answers");
  }
  if (out.unjudged_cascade > 0) {
    notes.push_back(std::to_string(out.unjudged_cascade) +
                    " request(s) newly in the cascade have no recorded edge confidence: counted "
                    "as edge answers of unknown quality");
  }
  if (out.features_missing > 0) {
    notes.push_back(std::to_string(out.features_missing) +
                    " request(s) lack prompt features: their recorded complexity stood in for "
                    "the new classifier's");
  }
  if (out.cost_unknown > 0) {
    notes.push_back(std::to_string(out.cost_unknown) +
                    " request(s) newly on the cloud have no recorded cloud price: counted at 0");
  }
  return out;
}

json to_json(const ReplayReport& report) {
  json changes = json::array();
  for (const auto& c : report.changes) {
    changes.push_back({{"request_id", c.request_id},
                       {"kind", c.kind},
                       {"from", c.from_tier},
                       {"to", c.to_tier},
                       {"reason", c.reason},
                       {"detail", c.detail}});
  }
  return {
      {"requests", report.requests},
      {"redecided", report.redecided},
      {"kept",
       {{"health", report.kept_health},
        {"explicit_model", report.kept_explicit},
        {"failed", report.kept_failed}}},
      {"tiers",
       {{"before", shares_json(report.before, report.requests)},
        {"after", shares_json(report.after, report.requests)}}},
      {"cost_usd",
       {{"before", report.cost_before_usd},
        {"after", report.cost_after_usd},
        {"change", report.cost_after_usd - report.cost_before_usd},
        {"unknown_requests", report.cost_unknown}}},
      {"quality",
       {{"before", report.quality_requests > 0 ? json(report.quality_before) : json(nullptr)},
        {"after", report.quality_requests > 0 ? json(report.quality_after) : json(nullptr)},
        {"change", report.quality_requests > 0 ? json(report.quality_after - report.quality_before)
                                               : json(nullptr)},
        {"requests", report.quality_requests},
        {"labelled", report.labelled}}},
      {"unjudged_cascade", report.unjudged_cascade},
      {"changed", report.changed},
      {"changes", std::move(changes)},
      {"notes", report.notes},
  };
}

}  // namespace tandem::eval
