#include "server/gateway_stats.h"

#include <algorithm>
#include <string_view>

#include "server/egress_guard.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using telemetry::Labels;

constexpr size_t kWindowCapacity = 4096;  // newest samples per tier kept for percentiles

// The metric names, each declared once; docs/OPERATIONS.md lists them with their labels.
constexpr const char* kRequests = "tandem_requests_total";
constexpr const char* kEscalations = "tandem_escalations_total";
constexpr const char* kDuration = "tandem_request_duration_seconds";
constexpr const char* kTtft = "tandem_time_to_first_token_seconds";
constexpr const char* kTokens = "tandem_tokens_total";
constexpr const char* kCost = "tandem_cost_usd_total";
constexpr const char* kAllCloudCost = "tandem_all_cloud_cost_usd_total";
constexpr const char* kCostSaved = "tandem_cost_saved_usd_total";
constexpr const char* kPinnedRequests = "tandem_privacy_pinned_requests_total";
constexpr const char* kPrivacyPins = "tandem_privacy_pins_total";
constexpr const char* kDataLeft = "tandem_data_left_device_total";
constexpr const char* kLabels = "tandem_edge_labels_total";

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The rule that decided, as the metrics' `reason` label: the first reason code. Codes are a
// small fixed set (policy.h), so the label's cardinality stays bounded.
std::string_view first_reason(const store::TraceRecord& trace) {
  return trace.reason_codes.empty() ? std::string_view("none") : trace.reason_codes.front();
}

// The index of a trace's tier in kStatusTiers ("" is "none"), or the count for another name.
size_t tier_index(const std::string& tier) {
  if (tier.empty()) {
    return std::size(kStatusTiers) - 1;
  }
  for (size_t i = 0; i < std::size(kStatusTiers); ++i) {
    if (tier == kStatusTiers[i]) {
      return i;
    }
  }
  return std::size(kStatusTiers);
}

// The tier's `tier` label: its kStatusTiers name ("" is "none"), else its own name.
std::string_view tier_label(size_t index, const std::string& tier) {
  return index < std::size(kStatusTiers) ? std::string_view(kStatusTiers[index]) : tier;
}

// The privacy rule that kept the request on the device ("privacy.detected", "privacy.header",
// "privacy.key_policy"), or "" when none did.
std::string privacy_pin(const store::TraceRecord& trace) {
  for (const auto& code : trace.reason_codes) {
    if (starts_with(code, "privacy.") && code != "privacy.edge_only") {
      return code;
    }
  }
  return "";
}

json summary_json(const telemetry::LatencyWindow::Summary& s) {
  return {{"count", s.count}, {"p50", s.p50},   {"p90", s.p90},
          {"p99", s.p99},     {"mean", s.mean}, {"max", s.max}};
}

// Money in whole micro-USD, carrying the fractions over so that nothing is lost to rounding.
int64_t whole(double& remainder, double usd) {
  remainder += usd * 1e6;
  const auto micro = static_cast<int64_t>(remainder);
  remainder -= static_cast<double>(micro);
  return micro;
}

double share(uint64_t part, uint64_t total) {
  return total == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(total);
}

}  // namespace

GatewayStats::GatewayStats(int64_t window_ms)
    : window_ms_(window_ms), recent_tiers_(window_ms), recent_escalations_(window_ms) {
  const std::vector<double> buckets = telemetry::latency_buckets_seconds();
  for (size_t t = 0; t < kTierCount; ++t) {
    const char* tier = kStatusTiers[t];
    latency_[t] = std::make_unique<telemetry::LatencyWindow>(window_ms, kWindowCapacity);
    ttft_[t] = std::make_unique<telemetry::LatencyWindow>(window_ms, kWindowCapacity);
    duration_histogram_[t] = &registry_.histogram(
        kDuration, "Whole request latency per answering tier", buckets, {{"tier", tier}});
    ttft_histogram_[t] = &registry_.histogram(
        kTtft, "Time to the first token the client received, per answering tier", buckets,
        {{"tier", tier}});
  }
  // Resolved once, so that a request's bookkeeping is atomics, not registry lookups; declared
  // up front, a scrape also shows every family at zero before the first request.
  for (size_t t = 0; t < 2; ++t) {
    const char* tier = t == 0 ? "edge" : "cloud";
    cost_[t] = &registry_.counter(kCost, "Spend per tier in USD (edge: 0 unless priced)",
                                  {{"tier", tier}});
    prompt_tokens_[t] = &registry_.counter(kTokens, "Tokens processed per tier",
                                           {{"tier", tier}, {"type", "prompt"}});
    completion_tokens_[t] = &registry_.counter(kTokens, "Tokens processed per tier",
                                               {{"tier", tier}, {"type", "completion"}});
  }
  escalations_ = &registry_.counter(kEscalations,
                                    "Requests the edge answered first and a higher tier replaced");
  all_cloud_cost_ = &registry_.counter(
      kAllCloudCost, "What the same answers would have cost all in the cloud, USD");
  cost_saved_ = &registry_.counter(kCostSaved, "All-cloud cost minus actual spend, USD");
  data_left_ =
      &registry_.counter(kDataLeft, "Requests that sent some of their data to a cloud upstream");
  pinned_ = &registry_.counter(kPinnedRequests, "Requests a privacy rule kept on the device");
}

telemetry::Counter& GatewayStats::requests_counter(std::string_view tier, std::string_view pattern,
                                                   std::string_view reason) {
  const RequestsKeyView key{tier, pattern, reason};
  std::lock_guard lock(mutex_);
  auto it = requests_.find(key);
  if (it == requests_.end()) {
    telemetry::Counter& counter = registry_.counter(
        kRequests, "Requests answered, by the tier that answered, pattern and deciding rule",
        {{"tier", std::string(tier)},
         {"pattern", std::string(pattern)},
         {"reason", std::string(reason)}});
    it = requests_
             .emplace(RequestsKey{std::string(tier), std::string(pattern), std::string(reason)},
                      &counter)
             .first;
  }
  return *it->second;
}

void GatewayStats::count_for_fleet(size_t tier_index, std::string_view tier, bool escalated,
                                   double cloud_cost_usd, double saved_usd) {
  fleet_requests_.fetch_add(1, std::memory_order_relaxed);
  if (escalated) {
    fleet_escalations_.fetch_add(1, std::memory_order_relaxed);
  }
  if (tier_index < kTierCount) {
    fleet_tier_requests_[tier_index].fetch_add(1, std::memory_order_relaxed);
    if (cloud_cost_usd == 0.0 && saved_usd == 0.0) {
      return;  // nothing to carry: most requests of a free tier
    }
  }
  std::lock_guard lock(mutex_);
  if (tier_index >= kTierCount) {
    ++fleet_deltas_["requests." + std::string(tier)];
  }
  fleet_deltas_["cloud_cost_micro_usd"] += whole(cloud_cost_remainder_, cloud_cost_usd);
  if (saved_usd > 0.0) {
    fleet_deltas_["saved_micro_usd"] += whole(saved_remainder_, saved_usd);
  }
}

void GatewayStats::observe(const store::TraceRecord& trace, bool routed, int64_t now_ms) {
  const size_t t = tier_index(trace.tier);
  const bool known_tier = t < kTierCount;
  const std::string_view tier = tier_label(t, trace.tier);
  requests_counter(tier, trace.pattern, first_reason(trace)).add();
  recent_tiers_.add(tier, now_ms);
  if (trace.escalated) {
    escalations_->add();
    recent_escalations_.add(routed ? "routed" : "named", now_ms);
  }
  if (known_tier) {
    duration_histogram_[t]->observe(trace.latency_ms / 1000.0);
    latency_[t]->add(trace.latency_ms, now_ms);
    if (trace.ttft_ms > 0) {
      ttft_histogram_[t]->observe(trace.ttft_ms / 1000.0);
      ttft_[t]->add(trace.ttft_ms, now_ms);
    }
  }
  record_series(trace, routed, known_tier, now_ms);
  const int64_t tokens[2] = {trace.edge_tokens, trace.cloud_tokens};
  for (size_t i = 0; i < 2; ++i) {
    if (tokens[i] > 0) {
      prompt_tokens_[i]->add(static_cast<double>(trace.prompt_tokens));
      completion_tokens_[i]->add(static_cast<double>(tokens[i]));
    }
  }
  cost_[0]->add(trace.cost_edge);
  cost_[1]->add(trace.cost_cloud);
  double saved = 0.0;
  if (trace.cost_all_cloud) {
    all_cloud_cost_->add(*trace.cost_all_cloud);
    saved = std::max(0.0, *trace.cost_all_cloud - trace.cost_edge - trace.cost_cloud);
    cost_saved_->add(saved);
  }
  if (trace.data_left_device) {
    data_left_->add();
  }
  count_privacy_pin(trace);
  if (trace.edge_good) {
    observe_label(trace.label_source, *trace.edge_good);
  }
  count_for_fleet(t, tier, trace.escalated, trace.cost_cloud, saved);
}

void GatewayStats::record_series(const store::TraceRecord& trace, bool routed, bool known_tier,
                                 int64_t now_ms) {
  telemetry::SeriesRequest request;
  request.tier = telemetry::series_tier(trace.tier.empty() ? "none" : trace.tier.c_str());
  request.escalated = trace.escalated;
  request.routed = routed;
  request.latency_ms = known_tier ? trace.latency_ms : -1;
  request.ttft_ms = known_tier && trace.ttft_ms > 0 ? trace.ttft_ms : -1;
  request.spend_usd = trace.cost_edge + trace.cost_cloud;
  request.all_cloud_usd = trace.cost_all_cloud;
  series_.record_request(request, now_ms);
}

void GatewayStats::count_privacy_pin(const store::TraceRecord& trace) {
  const std::string pin = privacy_pin(trace);
  if (pin.empty()) {
    return;
  }
  pinned_->add();
  // A header or key policy pins without a detector: the rule's code stands in for it.
  std::vector<std::string> detectors = trace.privacy_detectors;
  if (detectors.empty()) {
    detectors.push_back(pin);
  }
  std::lock_guard lock(mutex_);
  for (const auto& detector : detectors) {
    registry_
        .counter(kPrivacyPins, "Requests pinned to the edge by a privacy rule, by detector",
                 {{"detector", detector}})
        .add();
    ++pins_by_detector_[detector];
  }
}

void GatewayStats::observe_embeddings(const store::TraceRecord& trace) {
  const size_t t = tier_index(trace.tier);
  const std::string_view tier = tier_label(t, trace.tier);
  requests_counter(tier, kEmbeddingsPattern, first_reason(trace)).add();
  const size_t tokens_tier = tier == "cloud" ? 1 : 0;
  if (tier == "edge" || tier == "cloud") {
    prompt_tokens_[tokens_tier]->add(static_cast<double>(trace.prompt_tokens));
  }
  cost_[1]->add(trace.cost_cloud);
  if (trace.data_left_device) {
    data_left_->add();
  }
  count_privacy_pin(trace);
  count_for_fleet(t, tier, false, trace.cost_cloud, 0.0);
}

std::map<std::string, int64_t> GatewayStats::take_fleet_deltas() {
  std::map<std::string, int64_t> out;
  {
    std::lock_guard lock(mutex_);
    out.swap(fleet_deltas_);
  }
  // Zero counts are left in: the caller adds every delta but skips the zeros.
  out["requests"] += fleet_requests_.exchange(0, std::memory_order_relaxed);
  out["escalations"] += fleet_escalations_.exchange(0, std::memory_order_relaxed);
  for (size_t t = 0; t < kTierCount; ++t) {
    out["requests." + std::string(kStatusTiers[t])] +=
        fleet_tier_requests_[t].exchange(0, std::memory_order_relaxed);
  }
  return out;
}

void GatewayStats::observe_label(const std::string& source, bool edge_good) {
  registry_
      .counter(kLabels, "Edge answers judged, by who judged and the verdict",
               {{"source", source}, {"verdict", edge_good ? "good" : "bad"}})
      .add();
}

json GatewayStats::traffic_json(int64_t now_ms) const {
  json total_tiers = json::object();
  for (const char* tier : kStatusTiers) {
    total_tiers[tier] = static_cast<uint64_t>(registry_.sum(kRequests, {{"tier", tier}}));
  }
  json by_pattern = json::object();
  for (const char* pattern : {"edge", "cloud", "cascade", "speculative", "collaborate", "review",
                              "none", kEmbeddingsPattern}) {
    const auto n = static_cast<uint64_t>(registry_.sum(kRequests, {{"pattern", pattern}}));
    if (n > 0) {
      by_pattern[pattern] = n;
    }
  }
  const auto requests = static_cast<uint64_t>(registry_.sum(kRequests));
  const auto recent = recent_tiers_.counts(now_ms);
  const uint64_t recent_total = recent_tiers_.total(now_ms);
  json recent_tiers = json::object();
  json recent_share = json::object();
  for (const char* tier : kStatusTiers) {
    const auto it = recent.find(tier);
    const uint64_t n = it == recent.end() ? 0 : it->second;
    recent_tiers[tier] = n;
    recent_share[tier] = share(n, recent_total);
  }
  return {{"window_s", window_ms_ / 1000},
          {"total",
           {{"requests", requests},
            {"by_tier", std::move(total_tiers)},
            {"by_pattern", std::move(by_pattern)},
            {"escalations", static_cast<uint64_t>(registry_.sum(kEscalations))},
            {"errors", static_cast<uint64_t>(registry_.sum(kRequests, {{"tier", "none"}}))}}},
          {"recent",
           {{"requests", recent_total},
            {"by_tier", std::move(recent_tiers)},
            {"share", std::move(recent_share)},
            {"escalation_rate", share(recent_escalations_.total(now_ms), recent_total)}}}};
}

json GatewayStats::latency_json(int64_t now_ms, bool ttft) const {
  json out = json::object();
  for (size_t t = 0; t + 1 < kTierCount; ++t) {  // every tier but "none"
    out[kStatusTiers[t]] = summary_json((ttft ? ttft_ : latency_)[t]->summary(now_ms));
  }
  return out;
}

json GatewayStats::tokens_json() const {
  json out = json::object();
  for (const char* tier : {"edge", "cloud"}) {
    out[tier] = {
        {"prompt",
         static_cast<uint64_t>(registry_.sum(kTokens, {{"tier", tier}, {"type", "prompt"}}))},
        {"completion",
         static_cast<uint64_t>(registry_.sum(kTokens, {{"tier", tier}, {"type", "completion"}}))}};
  }
  return out;
}

json GatewayStats::cost_json() const {
  const double all_cloud = registry_.sum(kAllCloudCost);
  const double saved = registry_.sum(kCostSaved);
  return {{"edge_usd", registry_.sum(kCost, {{"tier", "edge"}})},
          {"cloud_usd", registry_.sum(kCost, {{"tier", "cloud"}})},
          {"all_cloud_usd", all_cloud},
          {"saved_usd", saved},
          {"saved_share", all_cloud > 0 ? json(saved / all_cloud) : json(nullptr)}};
}

json GatewayStats::quality_json() const {
  const auto good = static_cast<uint64_t>(registry_.sum(kLabels, {{"verdict", "good"}}));
  const auto labelled = static_cast<uint64_t>(registry_.sum(kLabels));
  json by_source = json::object();
  for (const char* source : {"verification", "review", "shadow"}) {
    by_source[source] = static_cast<uint64_t>(registry_.sum(kLabels, {{"source", source}}));
  }
  return {{"labelled", labelled},
          {"edge_good", good},
          {"edge_good_rate", labelled > 0 ? json(share(good, labelled)) : json(nullptr)},
          {"by_source", std::move(by_source)}};
}

json GatewayStats::privacy_json() const {
  json by_detector = json::object();
  {
    std::lock_guard lock(mutex_);
    for (const auto& [detector, n] : pins_by_detector_) {
      by_detector[detector] = n;
    }
  }
  // What the egress guard (egress_guard.h) let out and kept home, by purpose and reason.
  json sent = json::object();
  json refused = json::object();
  for (const char* purpose : kEgressPurposes) {
    if (const double n = registry_.sum(kEgressSendsMetric, {{"purpose", purpose}}); n > 0) {
      sent[purpose] = static_cast<uint64_t>(n);
    }
  }
  for (const char* reason : kEgressRefusalReasons) {
    if (const double n = registry_.sum(kEgressRefusalsMetric, {{"reason", reason}}); n > 0) {
      refused[reason] = static_cast<uint64_t>(n);
    }
  }
  return {{"pins", static_cast<uint64_t>(registry_.sum(kPinnedRequests))},
          {"by_detector", std::move(by_detector)},
          {"data_left_device", static_cast<uint64_t>(registry_.sum(kDataLeft))},
          {"egress", {{"sent", std::move(sent)}, {"refused", std::move(refused)}}}};
}

}  // namespace tandem::server
