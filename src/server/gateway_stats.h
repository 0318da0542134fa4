#pragma once
// What the gateway counts about the requests it answers, declared once in one place (Envoy's
// habit): the Prometheus metrics of GET /metrics, and the sliding windows behind the status
// page's live numbers (tier shares and latency percentiles of the last few minutes), and the
// time series behind the dashboard's plots (the last hours in 10 s buckets). Fed once
// per request, at its end, from the request's trace (store::TraceRecord) — the one summary of
// what the router saw and did — so metrics, status and stored traces cannot disagree.
//
// Thread-safety: every method may be called from any thread; nothing here does I/O. observe()
// updates series resolved once and the fleet's request counts (atomics), takes this object's
// lock once (the requests counter cache; money, whose fractions carry over, when a request
// cost any) and the windows' own locks.

#include <array>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <tuple>

#include "store/trace_log.h"
#include "telemetry/latency_window.h"
#include "telemetry/metrics.h"
#include "telemetry/time_series.h"

namespace tandem::server {

inline constexpr const char* kStatusTiers[] = {"edge", "cloud", "human", "none"};
// The `pattern` label of embeddings requests in tandem_requests_total.
inline constexpr const char* kEmbeddingsPattern = "embeddings";

class GatewayStats {
 public:
  // `window_ms`: how far back the status page's "recent" numbers look.
  explicit GatewayStats(int64_t window_ms = 300000);

  telemetry::MetricsRegistry& registry() { return registry_; }
  const telemetry::MetricsRegistry& registry() const { return registry_; }
  // The dashboard's plots: requests are recorded by observe(); readings of lasting state
  // (decode speed, cloud reachability) by whoever samples them (Operations::sample_series).
  telemetry::TimeSeries& series() { return series_; }
  const telemetry::TimeSeries& series() const { return series_; }

  // One finished request, from its completed trace. `routed`: the client asked for `tandem`
  // (the router decided), not a named model.
  void observe(const store::TraceRecord& trace, bool routed, int64_t now_ms);
  // One finished POST /v1/embeddings request, from its trace: counted in the requests (pattern
  // "embeddings"), prompt tokens, cost, data that left the device and privacy pins, but not in
  // the latency windows or tier shares, which describe how chat and completions are routed.
  void observe_embeddings(const store::TraceRecord& trace);
  // A reviewer's answer labelled an edge answer (the label itself is written by the trace
  // writer; here it only counts).
  void observe_label(const std::string& source, bool edge_good);

  // Fleet-wide counters (several replicas, store.redis): what this replica added since the
  // last call, by counter name ("requests", "requests.edge", "escalations",
  // "cloud_cost_micro_usd", "saved_micro_usd"); the caller adds them to the shared store.
  std::map<std::string, int64_t> take_fleet_deltas();

  // The status page's traffic, latency, tokens, cost and quality sections.
  nlohmann::json traffic_json(int64_t now_ms) const;
  nlohmann::json latency_json(int64_t now_ms, bool ttft) const;
  nlohmann::json tokens_json() const;
  nlohmann::json cost_json() const;
  nlohmann::json quality_json() const;
  nlohmann::json privacy_json() const;

 private:
  static constexpr size_t kTierCount = std::size(kStatusTiers);

  // The requests counter of one (tier, pattern, reason): resolved once, then cached.
  telemetry::Counter& requests_counter(std::string_view tier, std::string_view pattern,
                                       std::string_view reason);
  // One request in the fleet's counts: its tier (index into kStatusTiers, or kTierCount for
  // another name) and its money.
  void count_for_fleet(size_t tier_index, std::string_view tier, bool escalated,
                       double cloud_cost_usd, double saved_usd);
  // The request in the dashboard's time series.
  void record_series(const store::TraceRecord& trace, bool routed, bool known_tier, int64_t now_ms);
  // The privacy pin of a request, when a privacy rule kept it on the device.
  void count_privacy_pin(const store::TraceRecord& trace);

  telemetry::MetricsRegistry registry_;
  // Series resolved at construction (the registry keeps them for its lifetime). Index 0 is the
  // edge, 1 the cloud.
  telemetry::Counter* cost_[2] = {};
  telemetry::Counter* prompt_tokens_[2] = {};
  telemetry::Counter* completion_tokens_[2] = {};
  telemetry::Counter* escalations_ = nullptr;
  telemetry::Counter* all_cloud_cost_ = nullptr;
  telemetry::Counter* cost_saved_ = nullptr;
  telemetry::Counter* data_left_ = nullptr;
  telemetry::Counter* pinned_ = nullptr;
  // By tier, in the order of kStatusTiers; fixed at construction.
  std::array<telemetry::Histogram*, kTierCount> duration_histogram_{};
  std::array<telemetry::Histogram*, kTierCount> ttft_histogram_{};
  int64_t window_ms_;
  telemetry::WindowedCounter recent_tiers_;
  telemetry::WindowedCounter recent_escalations_;
  std::array<std::unique_ptr<telemetry::LatencyWindow>, kTierCount> latency_;
  std::array<std::unique_ptr<telemetry::LatencyWindow>, kTierCount> ttft_;
  telemetry::TimeSeries series_{telemetry::TimeSeries::Options{}};
  // The fleet's request counts since the last take_fleet_deltas(), by tier.
  std::atomic<int64_t> fleet_requests_{0};
  std::array<std::atomic<int64_t>, kTierCount> fleet_tier_requests_{};
  std::atomic<int64_t> fleet_escalations_{0};
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> pins_by_detector_;  // guarded by mutex_
  // Money and requests of a tier outside kStatusTiers; guarded by mutex_.
  std::map<std::string, int64_t> fleet_deltas_;
  // By (tier, pattern, reason), found by views of them; guarded by mutex_.
  struct RequestsKey {
    std::string tier, pattern, reason;
  };
  struct RequestsKeyView {
    std::string_view tier, pattern, reason;
  };
  struct RequestsKeyLess {
    using is_transparent = void;
    static RequestsKeyView view(const RequestsKey& k) { return {k.tier, k.pattern, k.reason}; }
    static RequestsKeyView view(const RequestsKeyView& k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      const RequestsKeyView x = view(a);
      const RequestsKeyView y = view(b);
      return std::tie(x.tier, x.pattern, x.reason) < std::tie(y.tier, y.pattern, y.reason);
    }
  };
  std::map<RequestsKey, telemetry::Counter*, RequestsKeyLess> requests_;
  double cloud_cost_remainder_ = 0.0;  // guarded by mutex_: below one micro-USD
  double saved_remainder_ = 0.0;       // guarded by mutex_
};

}  // namespace tandem::server
