// What the operations bookkeeping costs (bench/run_operations_bench.sh turns the output into the
// table of docs/BENCHMARKS.md), Google Benchmark, beside a baseline every response already pays:
//
// On the request path, once per request:
//   BM_GatewayStatsObserve        GatewayStats::observe(trace): Prometheus counters and
//                                 histograms, the windowed tier counts, the latency windows;
//                                 1, 2 and 4 threads on the same object (contention).
//   BM_GamingEscalationCapped/N   GamingMonitor::escalation_capped() before routing,
//   BM_GamingRecord/N             GamingMonitor::record() after the answer, with N clients
//                                 tracked (100, 1,000, 10,000).
//   BM_ThrottleRecordDecode       ThrottleMonitor::record_decode() after an edge generation.
//   BM_LatencyWindowAdd           one LatencyWindow::add() (observe() makes one or two).
// At scrape time:
//   BM_MetricsRender              MetricsRegistry::render() after 10,000 requests over every
//                                 tier, pattern, deciding rule and privacy detector: GET /metrics.
//   BM_MetricsRenderWithGaming/N  the same plus the gaming gauge function the gateway registers
//                                 (tandem_gaming_flagged_clients runs GamingMonitor::report()).
//   BM_StatusSections             GatewayStats' status page sections after 10,000 requests.
//   BM_GamingReport/N             GamingMonitor::report(), the status page's gaming section and
//                                 the flagged-clients gauge; it holds the monitor's lock.
//   BM_LatencyWindowSummary       a summary over 4,096 samples.
// What a scrape does to the request path:
//   BM_GamingRecordWhileScraped/N record() timed call by call while another thread runs
//                                 report() every 250 ms: the p99 and max say how long a
//                                 request waits behind a scrape.
// Baseline:
//   BM_Baseline_DecisionRecordJson  DecisionRecord::to_json().dump() of a cascade request that
//                                   escalated, with the router's real explanation: the `tandem`
//                                   object every response carries.
//   BM_Baseline_JsonDump            dump() alone of that object, already built.
//
// The traffic: a fixed mix of request shapes (tier, pattern, deciding rule, privacy detectors,
// escalations, verification labels) in the proportions of a routed deployment, latencies
// log-normal per tier and clamped to 5-2000 ms, one request per simulated millisecond. The
// gaming monitor's clients send about 40 requests each in its one-hour window; 1 % of them are
// gamers (90 % escalated, prompts in the top complexity quintile), so the reports have clients
// to flag and escalation_capped() runs its tests for some calls.

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "config/config.h"
#include "routing/router.h"
#include "server/gateway.h"
#include "server/gateway_stats.h"
#include "store/trace_log.h"
#include "telemetry/gaming_monitor.h"
#include "telemetry/latency_window.h"
#include "telemetry/metrics.h"
#include "telemetry/throttle_monitor.h"

using namespace tandem;
using nlohmann::json;

namespace {

constexpr int64_t kStartMs = 1'700'000'000'000;  // any epoch time
constexpr size_t kTraceCount = 4096;             // distinct traces cycled through (power of 2)
constexpr size_t kPrefillRequests = 10000;       // "a busy gateway": requests before measuring

// ---------------------------------------------------------------------------------------------
// Traffic

struct Shape {
  double weight;
  const char* tier;
  const char* pattern;
  std::vector<std::string> reasons;
  std::vector<std::string> detectors;
  bool escalated = false;
  bool routed = true;
  bool label = false;  // a P3 verification label (good 80 % of the time)
};

// The mix of a routed deployment: mostly simple edge and complex cloud answers, the cascade
// escalating some, privacy pins over every built-in detector, and the rare rules.
std::vector<Shape> traffic_shapes() {
  std::vector<Shape> shapes = {
      {22, "edge", "edge", {"ingress.simple"}, {}},
      {16, "edge", "cascade", {"ingress.simple"}, {}},
      {4, "edge", "cascade", {"ingress.simple"}, {}, false, true, true},
      {7, "cloud", "cascade", {"ingress.simple"}, {}, true},
      {24, "cloud", "cloud", {"ingress.complex"}, {}},
      {3, "edge", "speculative", {"pattern.speculative"}, {}},
      {2, "edge", "collaborate", {"pattern.collaborate"}, {}},
      {1, "edge", "edge", {"pattern.edge"}, {}},
      {1, "cloud", "cloud", {"pattern.cloud"}, {}},
      {3, "cloud", "cloud", {"model.cloud"}, {}, false, false},
      {2, "edge", "edge", {"model.edge"}, {}, false, false},
      {1, "edge", "edge", {"privacy.header", "privacy.edge_only"}, {}},
      {1, "edge", "edge", {"privacy.key_policy", "privacy.edge_only"}, {}},
      {1, "human", "review", {"review.rule"}, {}},
      {0.5, "human", "cascade", {"ingress.simple"}, {}, true},
      {1, "edge", "edge", {"cloud.offline"}, {}},
      {1, "cloud", "cloud", {"edge.unavailable"}, {}},
      {1, "edge", "edge", {"latency.budget"}, {}},
      {0.5, "edge", "edge", {"gaming.capped"}, {}},
      {1, "cloud", "cloud", {"device.throttled"}, {}},
      {1, "edge", "edge", {"consistency.memory"}, {}},
      {0.5, "cloud", "cloud", {"consistency.memory"}, {}},
      {1, "none", "cloud", {"ingress.complex"}, {}},  // the upstream failed
      {0.5, "none", "edge", {"ingress.simple"}, {}},  // the edge failed
  };
  const char* detectors[] = {"email",          "phone", "payment_card", "us_ssn",
                             "cn_resident_id", "iban",  "ip_address",   "credential"};
  for (const char* d : detectors) {
    shapes.push_back({0.6, "edge", "edge", {"privacy.detected", "privacy.edge_only"}, {d}});
  }
  shapes.push_back(
      {0.3, "edge", "edge", {"privacy.detected", "privacy.edge_only"}, {"email", "phone"}});
  return shapes;
}

double lognormal_ms(std::mt19937_64& rng, double median_ms, double sigma) {
  std::lognormal_distribution<double> d(std::log(median_ms), sigma);
  return std::clamp(d(rng), 5.0, 2000.0);
}

struct Request {
  store::TraceRecord trace;
  bool routed = true;
};

std::vector<Request> make_requests(size_t n, uint64_t seed) {
  const auto shapes = traffic_shapes();
  std::vector<double> weights;
  for (const auto& s : shapes) {
    weights.push_back(s.weight);
  }
  std::mt19937_64 rng(seed);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  std::uniform_int_distribution<int> tokens(20, 800);
  std::uniform_int_distribution<int> client(0, 199);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const char* kinds[] = {"multiple_choice", "math", "code", "factoid", "open"};
  std::vector<Request> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = shapes[pick(rng)];
    Request r;
    r.routed = s.routed;
    store::TraceRecord& t = r.trace;
    t.request_id = "chatcmpl-" + std::to_string(i);
    t.client = "client-" + std::to_string(client(rng));
    t.model = s.routed ? "tandem" : (std::string(s.tier) == "cloud" ? "gpt-4o-mini" : "edge");
    t.tier = s.tier;
    t.pattern = s.pattern;
    t.kind = kinds[i % 5];
    t.reason_codes = s.reasons;
    t.privacy_detectors = s.detectors;
    t.complexity = unit(rng);
    t.escalated = s.escalated;
    const std::string tier = s.tier;
    const bool cloud_ran = tier == "cloud" || tier == "human" || s.escalated;
    const bool edge_ran = tier == "edge" || s.escalated;
    t.prompt_tokens = tokens(rng);
    t.edge_tokens = edge_ran ? tokens(rng) / 2 : 0;
    t.cloud_tokens = cloud_ran && tier != "none" ? tokens(rng) / 2 : 0;
    t.cost_cloud = static_cast<double>(t.prompt_tokens) * 0.15e-6 +
                   static_cast<double>(t.cloud_tokens) * 0.6e-6;
    if (tier != "none") {
      t.cost_all_cloud = static_cast<double>(t.prompt_tokens) * 0.15e-6 +
                         static_cast<double>(t.edge_tokens + t.cloud_tokens) * 0.6e-6;
    }
    t.data_left_device = cloud_ran;
    const double median = tier == "edge"    ? 120
                          : tier == "cloud" ? 700
                          : tier == "human" ? 1500
                                            : 60;
    t.latency_ms = lognormal_ms(rng, median, 0.6);
    t.ttft_ms = tier == "none" ? 0.0 : std::max(5.0, t.latency_ms * (0.1 + 0.3 * unit(rng)));
    if (s.label) {
      t.edge_good = unit(rng) < 0.8;
      t.label_source = "verification";
    }
    t.unix_ms = kStartMs;
    out.push_back(std::move(r));
  }
  return out;
}

const std::vector<Request>& requests() {
  static const std::vector<Request> r = make_requests(kTraceCount, 42);
  return r;
}

// A GatewayStats after `n` requests, one per millisecond from kStartMs; returns the time of the
// next request.
int64_t prefill(server::GatewayStats& stats, size_t n) {
  const auto& reqs = requests();
  int64_t now = kStartMs;
  for (size_t i = 0; i < n; ++i, ++now) {
    const Request& r = reqs[i % kTraceCount];
    stats.observe(r.trace, r.routed, now);
  }
  return now;
}

// ---------------------------------------------------------------------------------------------
// GatewayStats

std::unique_ptr<server::GatewayStats> g_observe_stats;

void BM_GatewayStatsObserve(benchmark::State& state) {
  if (state.thread_index() == 0) {
    g_observe_stats = std::make_unique<server::GatewayStats>();
    prefill(*g_observe_stats, kPrefillRequests);
  }
  const auto& reqs = requests();
  // Each thread its own clock, one request per millisecond, starting where the prefill ended.
  int64_t now = kStartMs + static_cast<int64_t>(kPrefillRequests);
  size_t i = static_cast<size_t>(state.thread_index()) * 997;
  for (auto _ : state) {
    const Request& r = reqs[i++ & (kTraceCount - 1)];
    g_observe_stats->observe(r.trace, r.routed, now++);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    g_observe_stats.reset();
  }
}
BENCHMARK(BM_GatewayStatsObserve)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

struct BusyStats {
  server::GatewayStats stats;
  int64_t now = 0;
  BusyStats() { now = prefill(stats, kPrefillRequests); }
};

BusyStats& busy_stats() {
  static BusyStats s;
  return s;
}

size_t series_of(const std::string& text) {
  size_t n = 0;
  size_t line = 0;
  while (line < text.size()) {
    const size_t end = text.find('\n', line);
    if (text[line] != '#') {
      ++n;
    }
    line = end == std::string::npos ? text.size() : end + 1;
  }
  return n;
}

void BM_MetricsRender(benchmark::State& state) {
  const auto& registry = busy_stats().stats.registry();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = registry.render();
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  const std::string text = registry.render();
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["samples"] = static_cast<double>(series_of(text));
}
BENCHMARK(BM_MetricsRender)->Unit(benchmark::kMicrosecond);

void BM_StatusSections(benchmark::State& state) {
  const auto& stats = busy_stats().stats;
  const int64_t now = busy_stats().now;
  for (auto _ : state) {
    json page = {{"traffic", stats.traffic_json(now)},
                 {"latency_ms", stats.latency_json(now, false)},
                 {"ttft_ms", stats.latency_json(now, true)},
                 {"tokens", stats.tokens_json()},
                 {"cost", stats.cost_json()},
                 {"quality", stats.quality_json()},
                 {"privacy", stats.privacy_json()}};
    benchmark::DoNotOptimize(page);
  }
}
BENCHMARK(BM_StatusSections)->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------
// Gaming monitor

constexpr int64_t kGamingWindowMs = 3'600'000;
constexpr size_t kRequestsPerClient = 40;

struct GamingFixture {
  std::unique_ptr<telemetry::GamingMonitor> monitor;
  std::vector<std::string> clients;
  // The requests BM_GamingRecord sends, cycled through: longer than a window's worth, so a
  // client's window never holds the same observation twice (repeats would skew its mix).
  std::vector<telemetry::RoutingObservation> stream;
  size_t next = 0;
  int64_t now = 0;
  int64_t step_ms = 1;  // between requests, so the window holds ~kRequestsPerClient per client
};

telemetry::RoutingObservation observation(const std::string& client, bool gamer,
                                          std::mt19937_64& rng) {
  static const char* kinds[] = {"multiple_choice", "math", "code", "factoid", "open"};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  telemetry::RoutingObservation o;
  o.client = client;
  o.kind = kinds[rng() % 5];
  if (gamer) {
    o.complexity = 0.8 + 0.2 * unit(rng);
    o.escalated = unit(rng) < 0.9;
  } else {
    o.complexity = unit(rng);
    o.escalated = unit(rng) < 0.1 + 0.5 * o.complexity;  // ~35 % overall
  }
  return o;
}

// A monitor tracking `clients` clients with ~kRequestsPerClient requests each in its window,
// in steady state: the window is full, so every new request expires about one old one.
GamingFixture& gaming_fixture(size_t clients) {
  static std::map<size_t, std::unique_ptr<GamingFixture>> cache;
  auto& slot = cache[clients];
  if (slot) {
    return *slot;
  }
  slot = std::make_unique<GamingFixture>();
  GamingFixture& f = *slot;
  telemetry::GamingOptions options;
  options.window_ms = kGamingWindowMs;
  options.escalation_cap = 0.5;
  options.max_clients = 10000;
  f.monitor = std::make_unique<telemetry::GamingMonitor>(options);
  for (size_t c = 0; c < clients; ++c) {
    f.clients.push_back("key-" + std::to_string(c));
  }
  std::mt19937_64 rng(7 + clients);
  const auto is_gamer = [](size_t c) { return c % 100 == 37; };
  const size_t total = clients * kRequestsPerClient;
  f.step_ms = std::max<int64_t>(1, kGamingWindowMs / static_cast<int64_t>(total));
  std::uniform_int_distribution<size_t> any(0, clients - 1);
  int64_t now = kStartMs;
  for (size_t i = 0; i < total; ++i, now += f.step_ms) {
    const size_t c = any(rng);
    auto o = observation(f.clients[c], is_gamer(c), rng);
    o.now_ms = now;
    f.monitor->record(o);
  }
  const size_t stream_size = std::bit_ceil(std::max<size_t>(total + 1, 65536));  // masked
  f.stream.reserve(stream_size);
  while (f.stream.size() < stream_size) {
    const size_t c = any(rng);
    f.stream.push_back(observation(f.clients[c], is_gamer(c), rng));
  }
  f.now = now;
  return f;
}

void BM_GamingRecord(benchmark::State& state) {
  GamingFixture& f = gaming_fixture(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    telemetry::RoutingObservation& o = f.stream[f.next++ & (f.stream.size() - 1)];
    o.now_ms = f.now;
    f.now += f.step_ms;
    f.monitor->record(o);
  }
  state.counters["clients"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_GamingRecord)->Arg(100)->Arg(1000)->Arg(10000);

void BM_GamingEscalationCapped(benchmark::State& state) {
  GamingFixture& f = gaming_fixture(static_cast<size_t>(state.range(0)));
  size_t i = 0;
  size_t capped = 0;
  for (auto _ : state) {
    const std::string& client = f.clients[(i++ * 7919) % f.clients.size()];
    capped += f.monitor->escalation_capped(client, f.now) ? 1 : 0;
  }
  state.counters["capped_share"] =
      static_cast<double>(capped) / static_cast<double>(std::max<size_t>(1, i));
}
BENCHMARK(BM_GamingEscalationCapped)->Arg(100)->Arg(1000)->Arg(10000);

void BM_GamingReport(benchmark::State& state) {
  GamingFixture& f = gaming_fixture(static_cast<size_t>(state.range(0)));
  size_t flagged = 0;
  size_t tracked = 0;
  for (auto _ : state) {
    const auto report = f.monitor->report(f.now);
    flagged = report.flagged.size();
    tracked = report.clients_tracked;
  }
  state.counters["flagged"] = static_cast<double>(flagged);
  state.counters["tracked"] = static_cast<double>(tracked);
}
BENCHMARK(BM_GamingReport)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// GET /metrics with the gateway's gaming gauge function registered (status_api.cpp's
// tandem_gaming_flagged_clients), over a monitor of N clients.
void BM_MetricsRenderWithGaming(benchmark::State& state) {
  GamingFixture& f = gaming_fixture(static_cast<size_t>(state.range(0)));
  server::GatewayStats stats;
  prefill(stats, kPrefillRequests);
  auto* monitor = f.monitor.get();
  const int64_t now = f.now;
  stats.registry().gauge_function(
      "tandem_gaming_flagged_clients", "Clients flagged for routing gaming", [monitor, now] {
        return std::vector<std::pair<telemetry::Labels, double>>{
            {{}, static_cast<double>(monitor->report(now).flagged.size())}};
      });
  for (auto _ : state) {
    std::string text = stats.registry().render();
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_MetricsRenderWithGaming)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// record() timed call by call while a scraper thread runs report() every 250 ms.
void BM_GamingRecordWhileScraped(benchmark::State& state) {
  GamingFixture& f = gaming_fixture(static_cast<size_t>(state.range(0)));
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;
  std::atomic<uint64_t> scrapes{0};
  const int64_t scrape_at = f.now;  // report() takes an earlier time as the latest seen
  std::thread scraper([&] {
    std::unique_lock lock(m);
    while (!cv.wait_for(lock, std::chrono::milliseconds(250), [&] { return stop; })) {
      lock.unlock();
      benchmark::DoNotOptimize(f.monitor->report(scrape_at).flagged.size());
      scrapes.fetch_add(1);
      lock.lock();
    }
  });
  std::vector<double> us;
  us.reserve(1 << 22);
  for (auto _ : state) {
    telemetry::RoutingObservation& o = f.stream[f.next++ & (f.stream.size() - 1)];
    o.now_ms = f.now;
    f.now += f.step_ms;
    const auto t0 = std::chrono::steady_clock::now();
    f.monitor->record(o);
    const auto t1 = std::chrono::steady_clock::now();
    if (us.size() < us.capacity()) {
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  }
  {
    std::lock_guard lock(m);
    stop = true;
  }
  cv.notify_all();
  scraper.join();
  if (!us.empty()) {
    std::sort(us.begin(), us.end());
    const auto at = [&](double q) {
      return us[std::min(us.size() - 1, static_cast<size_t>(q * static_cast<double>(us.size())))];
    };
    state.counters["p50_us"] = at(0.50);
    state.counters["p99_us"] = at(0.99);
    state.counters["p999_us"] = at(0.999);
    state.counters["max_us"] = us.back();
    state.counters["over_1ms"] =
        static_cast<double>(us.end() - std::upper_bound(us.begin(), us.end(), 1000.0));
  }
  state.counters["scrapes"] = static_cast<double>(scrapes.load());
}
BENCHMARK(BM_GamingRecordWhileScraped)->Arg(10000)->MinTime(2.0)->UseRealTime();

// ---------------------------------------------------------------------------------------------
// Latency window and throttle monitor

constexpr size_t kWindowSamples = 4096;

void BM_LatencyWindowAdd(benchmark::State& state) {
  telemetry::LatencyWindow window(300000, kWindowSamples);
  std::mt19937_64 rng(3);
  std::vector<double> values(kTraceCount);
  for (auto& v : values) {
    v = lognormal_ms(rng, 200, 0.8);
  }
  int64_t now = kStartMs;
  for (size_t i = 0; i < kWindowSamples; ++i) {
    window.add(values[i & (kTraceCount - 1)], now++);
  }
  size_t i = 0;
  for (auto _ : state) {
    window.add(values[i++ & (kTraceCount - 1)], now++);
  }
}
BENCHMARK(BM_LatencyWindowAdd);

void BM_LatencyWindowSummary(benchmark::State& state) {
  telemetry::LatencyWindow window(300000, kWindowSamples);
  std::mt19937_64 rng(5);
  int64_t now = kStartMs;
  for (size_t i = 0; i < kWindowSamples; ++i) {
    window.add(lognormal_ms(rng, 200, 0.8), now++);
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(window.summary(now));
  }
  state.counters["samples"] = static_cast<double>(window.summary(now).count);
}
BENCHMARK(BM_LatencyWindowSummary)->Unit(benchmark::kMicrosecond);

void BM_ThrottleRecordDecode(benchmark::State& state) {
  telemetry::ThrottleMonitor monitor(telemetry::ThrottleOptions{});
  std::mt19937_64 rng(9);
  std::normal_distribution<double> speed(30.0, 2.0);  // tokens/s of a small model on a laptop
  std::vector<double> speeds(kTraceCount);
  for (auto& s : speeds) {
    s = speed(rng);
  }
  int64_t now = kStartMs;
  for (size_t i = 0; i < 100; ++i) {  // the baseline is learned: steady state
    monitor.record_decode(speeds[i], 128, 1, now += 1000);
  }
  size_t i = 0;
  for (auto _ : state) {
    monitor.record_decode(speeds[i++ & (kTraceCount - 1)], 128, 1, now += 1000);
  }
  state.counters["throttled"] =
      monitor.snapshot().state == telemetry::ThrottleState::kThrottled ? 1 : 0;
}
BENCHMARK(BM_ThrottleRecordDecode);

// ---------------------------------------------------------------------------------------------
// Baseline: the decision record every response carries

server::DecisionRecord cascade_record() {
  static const std::string prompt =
      "A train leaves the station at 9:40 and travels 182 miles at an average speed of 52 miles "
      "per hour. A second train leaves the same station 25 minutes later on a parallel track at "
      "61 miles per hour. At what time does the second train catch up with the first, and how "
      "far from the station are they then? Show each step.";
  auto created = routing::Router::create(config::RoutingConfig{});
  if (!created) {
    std::abort();
  }
  const std::shared_ptr<const routing::Router> router = created.value();
  routing::RouteInput input;
  input.text = prompt;
  input.prompt.last_user = prompt;
  input.prompt.total_chars = prompt.size();
  input.prompt.turns = 1;
  input.hints.client = "key-1234";
  const routing::HealthSnapshot health;
  const auto signals = router->signals(input);
  const auto decision = router->decide(signals, health);

  server::DecisionRecord r;
  r.add_tier("edge");
  r.add_tier("cloud");
  r.tier = "cloud";
  r.pattern = "cascade";
  r.reasons = {"ingress.simple: complexity 0.412 < 0.5",
               "escalated to the cloud: edge confidence 0.531 < 0.700"};
  r.routing = router->explanation(input, signals, decision, health, false);
  r.edge_model = "qwen2.5-1.5b-instruct-q4_k_m";
  r.edge_sha256 = "6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e";
  r.cloud_upstream = "openai";
  r.cloud_model = "gpt-4o-mini-2024-07-18";
  r.edge_usage = server::TierUsage{92, 41};
  r.cloud_usage = server::TierUsage{92, 187};
  r.cloud_cost_usd = 0.0001260;
  r.cloud_prices = config::Prices{0.15, 0.6, 0.0};
  r.data_left_device = true;
  r.ttft_ms = 412.7;
  r.latency_ms = 1893.2;
  r.confidence = server::ConfidencePart{
      routing::ConfidenceSnapshot{41, -0.6312, -4.218, 1.07, 0.412, 0.531}, 0.7};
  server::EscalationPart& escalation = r.escalation.emplace();
  escalation.reason = "edge confidence 0.531000 < 0.700000";
  escalation.at_token = 41;
  escalation.edge_tokens_discarded = 41;
  return r;
}

void BM_Baseline_DecisionRecordJson(benchmark::State& state) {
  const server::DecisionRecord record = cascade_record();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = record.to_json().dump();
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Baseline_DecisionRecordJson);

void BM_Baseline_JsonDump(benchmark::State& state) {
  const json object = cascade_record().to_json();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = object.dump();
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Baseline_JsonDump);

}  // namespace

BENCHMARK_MAIN();
