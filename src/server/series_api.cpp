#include "server/series_api.h"

#include <functional>
#include <optional>
#include <vector>

#include "common/time_text.h"
#include "server/gateway_util.h"
#include "telemetry/time_series.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using Points = std::vector<telemetry::TimeSeries::Point>;

constexpr int64_t kMinWindowS = 60;

json number_or_null(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json ratio_or_null(uint64_t part, uint64_t whole) {
  return whole == 0 ? json(nullptr) : json(static_cast<double>(part) / static_cast<double>(whole));
}

// One array with `value` of each point.
json column(const Points& points,
            const std::function<json(const telemetry::SeriesBucket&)>& value) {
  json out = json::array();
  for (const auto& p : points) {
    out.push_back(value(p.data));
  }
  return out;
}

json requests_json(const Points& points) {
  json out = json::object();
  for (size_t t = 0; t < telemetry::kSeriesTiers; ++t) {
    out[telemetry::series_tier_name(static_cast<telemetry::SeriesTier>(t))] =
        column(points, [t](const auto& b) { return json(b.requests[t]); });
  }
  return out;
}

// p50 and p95 per answering tier, of the whole request (`ttft` false) or its first token.
json percentiles_json(const Points& points, bool ttft) {
  json out = json::object();
  for (size_t t = 0; t < telemetry::kLatencyTiers; ++t) {
    const auto histogram = [ t, ttft ](const telemetry::SeriesBucket& b) -> const auto& {
      return ttft ? b.ttft_ms[t] : b.latency_ms[t];
    };
    json tier = json::object();
    for (const double percent : {50.0, 95.0}) {
      tier[percent == 50.0 ? "p50" : "p95"] = column(
          points, [&](const auto& b) { return number_or_null(histogram(b).percentile(percent)); });
    }
    out[telemetry::series_tier_name(static_cast<telemetry::SeriesTier>(t))] = std::move(tier);
  }
  return out;
}

// The flagged clients' escalation shares on the points' grid, beside the routed traffic's.
json gaming_json(Gateway& gateway, const Points& points, int64_t now_ms) {
  const auto* monitor = gateway.monitors().gaming();
  if (monitor == nullptr) {
    return {{"enabled", false}, {"clients", json::array()}};
  }
  const auto report = gateway.monitors().gaming_report(now_ms);
  json clients = json::array();
  for (const auto& flagged : report->flagged) {
    if (clients.size() == kSeriesMaxClients) {
      break;
    }
    const auto history = monitor->client_history(flagged.client, points.front().start_ms,
                                                 points.front().span_ms, points.size(), now_ms);
    json share = json::array();
    json requests = json::array();
    for (const auto& interval : history) {
      share.push_back(ratio_or_null(interval.escalations, interval.requests));
      requests.push_back(interval.requests);
    }
    clients.push_back({{"client", flagged.client},
                       {"escalation_share", std::move(share)},
                       {"requests", std::move(requests)}});
  }
  return {{"enabled", true},
          {"window_s", report->window_ms / 1000},
          {"flagged", report->flagged.size()},
          {"clients", std::move(clients)},
          {"routed_cloud_share",
           column(points, [](const auto& b) { return ratio_or_null(b.routed_cloud, b.routed); })}};
}

}  // namespace

ApiResponse series_endpoint(Gateway& gateway, const std::string& query) {
  const telemetry::TimeSeries& series = gateway.stats().series();
  const int64_t kept_s = series.retention_ms() / 1000;
  int64_t window_s = std::min(kSeriesDefaultWindowS, kept_s);
  if (auto bad = read_integer(query, "window_s", std::min(kMinWindowS, kept_s), kept_s, window_s)) {
    return error_response_body(invalid_request(*bad));
  }
  const int64_t now = unix_ms();
  const Points points = series.query(now, window_s * 1000, kSeriesMaxPoints);
  json times = json::array();
  for (const auto& p : points) {
    times.push_back(static_cast<double>(p.start_ms) / 1000.0);
  }
  return {200,
          {{"now", utc_iso8601(now)},
           {"started_s", static_cast<double>(gateway.started_unix_ms()) / 1000.0},
           {"window_s", window_s},
           {"retention_s", kept_s},
           {"bucket_s", static_cast<double>(series.bucket_ms()) / 1000.0},
           {"step_s", static_cast<double>(points.front().span_ms) / 1000.0},
           {"t", std::move(times)},
           {"requests", requests_json(points)},
           {"escalation_rate",
            column(points,
                   [](const auto& b) { return ratio_or_null(b.escalations, b.total_requests()); })},
           {"latency_ms", percentiles_json(points, false)},
           {"ttft_ms", percentiles_json(points, true)},
           {"decode_tokens_per_s",
            {{"ewma",
              column(points, [](const auto& b) { return number_or_null(b.decode_tokens_per_s); })},
             {"baseline",
              column(points, [](const auto& b) { return number_or_null(b.decode_baseline); })}}},
           {"cost_usd",
            {{"spend", column(points, [](const auto& b) { return json(b.spend_usd); })},
             {"all_cloud", column(points, [](const auto& b) { return json(b.all_cloud_usd); })},
             {"saved", column(points, [](const auto& b) { return json(b.saved_usd); })}}},
           {"cloud_available",
            column(points,
                   [](const auto& b) { return ratio_or_null(b.cloud_online, b.cloud_samples); })},
           {"gaming", gaming_json(gateway, points, now)}}};
}

}  // namespace tandem::server
