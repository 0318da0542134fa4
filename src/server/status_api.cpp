#include "server/status_api.h"

#include "common/allocator.h"
#include "common/time_text.h"
#include "common/version.h"
#include "server/gateway_util.h"
#include "store/trace_writer.h"

namespace tandem::server {
namespace {

using nlohmann::json;

json time_or_null(int64_t unix_ms) {
  return unix_ms > 0 ? json(utc_iso8601(unix_ms)) : json(nullptr);
}

json text_or_null(const std::string& text) {
  return text.empty() ? json(nullptr) : json(text);
}

json edge_model_json(const Gateway& gateway, const telemetry::SkewMonitor::Snapshot& skew) {
  const auto* engine = gateway.engine();
  json edge = {{"loaded", engine != nullptr}};
  if (engine != nullptr) {
    const auto& model = engine->model();
    edge["name"] = gateway.edge_name();
    edge["sha256"] = model.sha256;
    edge["version"] = model.version;
    edge["quantization"] = model.quantization;
    edge["architecture"] = model.architecture;
    edge["error"] = nullptr;
  } else {
    edge["error"] = gateway.edge_problem();
  }
  edge["allowed"] = skew.edge_check.allowed;
  edge["problem"] = text_or_null(skew.edge_check.problem);
  return edge;
}

json models_json(const Gateway& gateway) {
  const auto skew = gateway.monitors().skew().snapshot();
  json cloud = json::array();
  for (const auto& u : gateway.upstreams()) {
    const auto mapped = u->config().models.find(gateway.cloud_model());
    json entry = {
        {"upstream", u->name()},
        {"model", mapped == u->config().models.end() ? json(nullptr) : json(mapped->second)},
        {"reported_model", nullptr},
        {"first_seen", nullptr},
        {"last_seen", nullptr},
        {"changes", 0}};
    for (const auto& seen : skew.cloud) {
      if (seen.upstream == u->name()) {
        entry["reported_model"] = seen.model;
        entry["first_seen"] = time_or_null(seen.first_seen_ms);
        entry["last_seen"] = time_or_null(seen.last_seen_ms);
        entry["changes"] = seen.changes;
        entry["previous_model"] = text_or_null(seen.previous_model);
      }
    }
    cloud.push_back(std::move(entry));
  }
  json alerts = json::array();
  for (const auto& a : skew.alerts) {
    alerts.push_back({{"code", a.code}, {"detail", a.detail}, {"since", time_or_null(a.since_ms)}});
  }
  json history = json::array();
  for (const auto& run : skew.history) {
    const size_t answered = run.prompts - run.failed;
    history.push_back({{"at", time_or_null(run.at_ms)},
                       {"agreement", answered > 0 ? json(static_cast<double>(run.agreed) /
                                                         static_cast<double>(answered))
                                                  : json(nullptr)},
                       {"prompts", run.prompts},
                       {"agreed", run.agreed},
                       {"failed", run.failed},
                       {"edge_sha256", run.edge_sha256},
                       {"cloud_model", run.cloud_model}});
  }
  const auto& canary = gateway.config().operations.canary;
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {
      {"edge", edge_model_json(gateway, skew)},
      {"cloud", std::move(cloud)},
      {"skew",
       {{"alerts", std::move(alerts)},
        {"min_edge_version", text_or_null(gateway.config().operations.version.min_edge_version)},
        {"canary",
         {{"enabled", canary.enabled},
          {"interval_s", canary.interval_s},
          {"runs", skew.history.size()},
          {"last_at",
           skew.history.empty() ? json(nullptr) : time_or_null(skew.history.back().at_ms)},
          {"last_agreement", optional(skew.last_agreement)},
          {"mean_agreement", optional(skew.mean_agreement)},
          {"history", std::move(history)}}}}}};
}

json circuits_json(const Gateway& gateway, int64_t now_ms) {
  std::map<std::string, int64_t> shared_until;
  if (auto open = gateway.operations().shared().open_circuits(now_ms); open) {
    for (const auto& c : *open) {
      shared_until[c.upstream] = std::max(shared_until[c.upstream], c.until_ms);
    }
  }
  json out = json::array();
  for (const auto& u : gateway.upstreams()) {
    const auto s = u->status();
    const auto until = shared_until.find(s.name);
    out.push_back({{"upstream", s.name},
                   {"state", upstream::circuit_state_name(s.circuit)},
                   {"online", s.online},
                   {"consecutive_failures", s.consecutive_failures},
                   {"cooldown_remaining_ms", s.cooldown_remaining_ms},
                   {"last_error", text_or_null(s.last_error)},
                   {"held_by_peer", u->circuit_held_by_peer()},
                   {"shared_open_until",
                    until == shared_until.end() ? json(nullptr) : time_or_null(until->second)}});
  }
  return out;
}

json reviews_json(Gateway& gateway) {
  json out = json::object();
  for (const char* status : {"pending", "answered", "rejected"}) {
    auto n = gateway.reviews().count(status);
    out[status] = n ? json(*n) : json(nullptr);
  }
  return out;
}

// The shared store's outage (store.redis unreachable: its calls fail at once), or null.
json store_outage_json(const Gateway& gateway) {
  const auto outage = gateway.operations().store_outage();
  if (!outage) {
    return nullptr;
  }
  return {{"since", utc_iso8601(outage->since_unix_ms)},
          {"reason", outage->reason},
          {"refused_calls", gateway.operations().store_refused_calls()}};
}

// Every replica's counts together (store.redis); null for a gateway on its own.
json fleet_json(const Gateway& gateway) {
  if (std::string_view(gateway.operations().shared().backend()) == "local") {
    return nullptr;
  }
  auto counters = gateway.operations().shared().counters();
  if (!counters) {
    return {{"error", counters.error().message}};
  }
  json out = json::object();
  for (const auto& [name, value] : *counters) {
    out[name] = value;
  }
  return {{"counters", std::move(out)}, {"synced_every_s", 1}};
}

}  // namespace

json status_json(Gateway& gateway, bool ready) {
  (void)gateway.health();  // brings the offline monitor up to date
  const int64_t now = unix_ms();
  const GatewayStats& stats = gateway.stats();
  Monitors& monitors = gateway.monitors();
  json quality = stats.quality_json();
  const auto skew = monitors.skew().snapshot();
  quality["canary_agreement"] = skew.last_agreement ? json(*skew.last_agreement) : json(nullptr);
  json edge = nullptr;
  if (const auto* engine = gateway.engine()) {
    const auto s = engine->stats();
    edge = {{"queued", s.queued},
            {"active", s.active},
            {"completed", s.completed},
            {"prompt_tokens_cached", s.prompt_tokens_cached},
            {"prompt_tokens_prefilled", s.prompt_tokens_prefilled},
            {"prompt_tokens_restored", s.prompt_tokens_restored},
            {"prompt_store_entries", s.prompt_store_entries},
            {"prompt_store_bytes", s.prompt_store_bytes}};
  }
  return {{"gateway",
           {{"version", kTandemVersion},
            {"allocator", allocator_name()},
            {"replica", gateway.operations().replica()},
            {"started_at", utc_iso8601(gateway.started_unix_ms())},
            {"uptime_s", static_cast<double>(now - gateway.started_unix_ms()) / 1000.0},
            {"now", utc_iso8601(now)},
            {"ready", ready},
            {"store", gateway.operations().shared().backend()},
            {"store_outage", store_outage_json(gateway)},
            {"routing_pattern", gateway.config().routing.pattern}}},
          {"traffic", stats.traffic_json(now)},
          {"latency_ms", stats.latency_json(now, false)},
          {"ttft_ms", stats.latency_json(now, true)},
          {"tokens", stats.tokens_json()},
          {"cost", stats.cost_json()},
          {"quality", std::move(quality)},
          {"models", models_json(gateway)},
          {"offline", monitors.offline_json()},
          {"device", monitors.device_json()},
          {"circuits", circuits_json(gateway, now)},
          {"gaming", monitors.gaming_json(now)},
          {"reviews", reviews_json(gateway)},
          {"privacy", stats.privacy_json()},
          {"edge", std::move(edge)},
          {"fleet", fleet_json(gateway)}};
}

namespace {

using Samples = std::vector<std::pair<telemetry::Labels, double>>;

// Each registers its metrics with collectors that read `g` at scrape time: the registry is the
// gateway's, so it never outlives it.

// The edge engine: its queue, its slots and where its prompt tokens came from.
void register_edge_metrics(telemetry::MetricsRegistry& registry, Gateway* g) {
  registry.gauge_function("tandem_edge_queue_depth", "Edge generations waiting for a slot", [g] {
    return Samples{{{}, g->engine() ? static_cast<double>(g->engine()->stats().queued) : 0.0}};
  });
  registry.gauge_function("tandem_edge_active_sequences", "Edge generations decoding", [g] {
    return Samples{{{}, g->engine() ? static_cast<double>(g->engine()->stats().active) : 0.0}};
  });
  registry.counter_function(
      "tandem_edge_prompt_tokens_total",
      "Edge prompt tokens by where their KV came from: cached (a slot's prompt cache) or "
      "prefilled (decoded)",
      [g] {
        if (g->engine() == nullptr) {
          return Samples{};
        }
        const auto s = g->engine()->stats();
        return Samples{{{{"source", "cached"}}, static_cast<double>(s.prompt_tokens_cached)},
                       {{{"source", "prefilled"}}, static_cast<double>(s.prompt_tokens_prefilled)}};
      });
  registry.counter_function(
      "tandem_edge_prompt_tokens_restored_total",
      "Of the cached edge prompt tokens, those restored from host memory (edge.prompt_cache_mib)",
      [g] {
        return Samples{
            {{},
             g->engine() ? static_cast<double>(g->engine()->stats().prompt_tokens_restored) : 0.0}};
      });
  registry.gauge_function(
      "tandem_edge_prompt_store_bytes",
      "Host memory held by prompt prefixes pushed out of the edge's slots", [g] {
        return Samples{
            {{}, g->engine() ? static_cast<double>(g->engine()->stats().prompt_store_bytes) : 0.0}};
      });
}

// The cloud tier: each upstream's circuit and health, and whether the tier is reachable.
void register_cloud_metrics(telemetry::MetricsRegistry& registry, Gateway* g) {
  registry.gauge_function(
      "tandem_upstream_circuit_state",
      "1 for each upstream's current circuit state (closed, open, half_open)", [g] {
        Samples out;
        for (const auto& u : g->upstreams()) {
          const auto state = u->status().circuit;
          for (auto candidate : {upstream::CircuitState::kClosed, upstream::CircuitState::kOpen,
                                 upstream::CircuitState::kHalfOpen}) {
            out.push_back(
                {{{"upstream", u->name()}, {"state", upstream::circuit_state_name(candidate)}},
                 candidate == state ? 1.0 : 0.0});
          }
        }
        return out;
      });
  registry.gauge_function("tandem_upstream_online", "1 when the upstream's health probe passes",
                          [g] {
                            Samples out;
                            for (const auto& u : g->upstreams()) {
                              out.push_back({{{"upstream", u->name()}}, u->online() ? 1.0 : 0.0});
                            }
                            return out;
                          });
  registry.gauge_function("tandem_cloud_offline",
                          "1 while the cloud tier is configured but unreachable", [g] {
                            return Samples{{{}, g->monitors().offline().offline ? 1.0 : 0.0}};
                          });
}

// The shared Redis store, when there is one: whether it answers, and calls refused meanwhile.
void register_store_metrics(telemetry::MetricsRegistry& registry, Gateway* g) {
  if (std::string_view(g->operations().shared().backend()) == "redis") {
    registry.gauge_function("tandem_store_reachable",
                            "1 while the shared Redis store answers, 0 during an outage", [g] {
                              return Samples{{{}, g->operations().store_outage() ? 0.0 : 1.0}};
                            });
    registry.counter_function(
        "tandem_store_refused_calls_total",
        "Calls to the shared Redis store refused without being sent during outages", [g] {
          return Samples{{{}, static_cast<double>(g->operations().store_refused_calls())}};
        });
  }
}

// The human-review queue.
void register_review_metrics(telemetry::MetricsRegistry& registry, Gateway* g) {
  registry.gauge_function("tandem_review_queue_pending", "Tickets waiting for a reviewer", [g] {
    auto n = g->reviews().count("pending");
    return n ? Samples{{{}, static_cast<double>(*n)}} : Samples{};
  });
}

// The device the edge runs on: throttling and what the throttle monitor decides on.
void register_device_metrics(telemetry::MetricsRegistry& registry, Gateway* g) {
  registry.gauge_function(
      "tandem_device_throttled", "1 while the device is throttled (heat, battery, slow decoding)",
      [g] {
        const auto s = g->monitors().throttle().snapshot();
        return Samples{{{}, s.state == telemetry::ThrottleState::kThrottled ? 1.0 : 0.0}};
      });
  registry.gauge_function("tandem_device_temperature_celsius", "Hottest thermal zone", [g] {
    const auto s = g->monitors().throttle().snapshot();
    return s.max_temp_c ? Samples{{{}, *s.max_temp_c}} : Samples{};
  });
  registry.gauge_function("tandem_battery_percent", "Lowest battery charge", [g] {
    const auto s = g->monitors().throttle().snapshot();
    return s.battery_percent ? Samples{{{}, *s.battery_percent}} : Samples{};
  });
  registry.gauge_function(
      "tandem_edge_decode_tokens_per_second",
      "Edge decode speed (EWMA of single-sequence generations)", [g] {
        const auto s = g->monitors().throttle().snapshot();
        return s.ewma_tokens_per_s ? Samples{{{}, *s.ewma_tokens_per_s}} : Samples{};
      });
  registry.gauge_function(
      "tandem_edge_decode_baseline_tokens_per_second",
      "The edge decode speed the throttle monitor compares with", [g] {
        const auto s = g->monitors().throttle().snapshot();
        return s.baseline_tokens_per_s ? Samples{{{}, *s.baseline_tokens_per_s}} : Samples{};
      });
}

// What the monitors flag: version skew and clients gaming the router.
void register_alert_metrics(telemetry::MetricsRegistry& registry, Gateway* g) {
  registry.gauge_function("tandem_skew_alerts", "Active version-skew alerts, by code", [g] {
    std::map<std::string, double> counts;
    for (const auto& a : g->monitors().skew().snapshot().alerts) {
      counts[a.code] += 1;
    }
    Samples out;
    for (const auto& [code, n] : counts) {
      out.push_back({{{"code", code}}, n});
    }
    return out;
  });
  registry.gauge_function(
      "tandem_gaming_flagged_clients", "Clients flagged for routing gaming in the current window",
      [g] {
        const auto report = g->monitors().gaming_report(unix_ms());
        return Samples{{{}, report ? static_cast<double>(report->flagged.size()) : 0.0}};
      });
}

}  // namespace

void register_scrape_metrics(Gateway& gateway) {
  auto& registry = gateway.stats().registry();
  Gateway* g = &gateway;  // the registry is the gateway's: it never outlives it
  register_edge_metrics(registry, g);
  register_cloud_metrics(registry, g);
  register_store_metrics(registry, g);
  register_review_metrics(registry, g);
  register_device_metrics(registry, g);
  register_alert_metrics(registry, g);
}

std::string metrics_text(const Gateway& gateway) {
  return gateway.stats().registry().render();
}

}  // namespace tandem::server
