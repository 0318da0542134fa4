// Operations end to end on loopback: Prometheus metrics, the status document, the audit of
// what went to the cloud, the offline notice, device throttling from a sysfs tree the test
// writes, the edge version policy, routing-gaming flags and caps, canaries and the dashboard —
// with the real edge model and the fault-injecting upstream as the cloud tier.

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "server/gateway_traces.h"
#include "store/consistency_memory.h"
#include "test_harness.h"

namespace tandem::test {
namespace {

std::string cloud_yaml(const std::string& base_url, const std::string& extra) {
  return "cloud:\n  upstreams:\n    - name: cloud\n      base_url: " + base_url +
         "\n      models: {big: fault-ok}\n"
         "      prices: {input_per_million: 2.5, output_per_million: 10}\n"
         "      timeouts: {connect_ms: 1000, first_byte_ms: 20000, idle_ms: 20000, "
         "total_ms: 60000}\n      retry: {max_retries: 0}\n      health: {interval_ms: 0}\n" +
         extra;
}

json routed(const std::string& content) {
  return chat("tandem", content, 8);
}

std::map<std::string, std::string> pattern(const std::string& name,
                                           const std::string& client = "") {
  std::map<std::string, std::string> h = {{"X-Tandem-Pattern", name}};
  if (!client.empty()) {
    h["X-Tandem-Client"] = client;
  }
  return h;
}

json status_of(const GatewayUnderTest& gateway,
               const std::map<std::string, std::string>& headers = {}) {
  auto r = request(gateway.port(), "GET", "/v1/tandem/status", "", headers);
  EXPECT_EQ(r.status, 200) << r.body;
  return r.json_body();
}

// The value of one Prometheus sample line `name{labels} value`, or -1 when absent.
double sample(const std::string& metrics, const std::string& series) {
  const auto at = metrics.find("\n" + series + " ");
  if (at == std::string::npos) {
    return -1;
  }
  return std::stod(metrics.substr(at + series.size() + 2));
}

// A fake /sys with one thermal zone and a battery, rewritten by the test.
class FakeSysfs {
 public:
  FakeSysfs() {
    root_ = std::filesystem::temp_directory_path() / ("tandem-sysfs-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "class/thermal/thermal_zone0");
    std::filesystem::create_directories(root_ / "class/power_supply/BAT0");
    write("class/thermal/thermal_zone0/type", "x86_pkg_temp");
    write("class/power_supply/BAT0/type", "Battery");
    write("class/power_supply/BAT0/status", "Charging");
    write("class/power_supply/BAT0/capacity", "80");
    set_temp_c(50);
  }
  ~FakeSysfs() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  void set_temp_c(int celsius) {
    write("class/thermal/thermal_zone0/temp", std::to_string(celsius * 1000));
  }
  std::string root() const { return root_.string(); }

 private:
  void write(const std::string& relative, const std::string& text) {
    const auto path = root_ / relative;
    std::ofstream(path.string() + ".tmp") << text << "\n";
    std::filesystem::rename(path.string() + ".tmp", path);
  }
  std::filesystem::path root_;
};

// A routed request the cloud answers (pattern.cloud) and one an email pins to the edge
// (privacy.detected): what the metrics tests count.
void send_a_cloud_and_a_private_request(GatewayUnderTest& gateway) {
  ASSERT_EQ(
      post(gateway.port(), "/v1/chat/completions", routed("Once upon a time"), pattern("cloud"))
          .status,
      200);
  ASSERT_EQ(post(gateway.port(), "/v1/chat/completions",
                 routed("Mail jane.doe@example.com the plan"), pattern("cloud"))
                .status,
            200);
}

// What those two requests leave in the metrics text `m`.
void expect_a_cloud_and_a_private_request_counted(const std::string& m) {
  EXPECT_EQ(
      sample(m, R"(tandem_requests_total{tier="cloud",pattern="cloud",reason="pattern.cloud"})"),
      1);
  EXPECT_EQ(
      sample(m, R"(tandem_requests_total{tier="edge",pattern="edge",reason="privacy.detected"})"),
      1);
  EXPECT_EQ(sample(m, R"(tandem_privacy_pins_total{detector="email"})"), 1);
}

// The metrics read the decision's reasons from the request's trace record, which exists whether
// or not a trace is stored: with traces and the audit off they still name the reason.
TEST(OperationsGatewayTest, MetricsNameTheReasonWithTracesAndTheAuditOff) {
  FaultUpstream fault;
  GatewayUnderTest gateway(cloud_yaml(fault.base_url(),
                                      "routing:\n  traces: {enabled: false}\n"
                                      "operations:\n  audit: {enabled: false}\n"));
  ASSERT_NO_FATAL_FAILURE(send_a_cloud_and_a_private_request(gateway));
  ASSERT_EQ(post(gateway.port(), "/v1/chat/completions", chat("big", "Once upon a time", 8)).status,
            200);
  const std::string m = request(gateway.port(), "GET", "/metrics").body;
  expect_a_cloud_and_a_private_request_counted(m);
  EXPECT_EQ(
      sample(m, R"(tandem_requests_total{tier="cloud",pattern="cloud",reason="model.cloud"})"), 1);
}

TEST(OperationsGatewayTest, MetricsCountRequestsPerTierWithLatencyAndCost) {
  FaultUpstream fault;
  GatewayUnderTest gateway(cloud_yaml(fault.base_url(), ""));
  for (int i = 0; i < 3; ++i) {
    // 40 tokens: long enough for the decode-speed monitor to count the generation.
    ASSERT_EQ(post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once upon a time", 40),
                   pattern("edge"))
                  .status,
              200);
  }
  ASSERT_NO_FATAL_FAILURE(send_a_cloud_and_a_private_request(gateway));

  auto r = request(gateway.port(), "GET", "/metrics");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8");
  const std::string& m = r.body;
  EXPECT_EQ(sample(m, R"(tandem_requests_total{tier="edge",pattern="edge",reason="pattern.edge"})"),
            3);
  expect_a_cloud_and_a_private_request_counted(m);
  EXPECT_EQ(sample(m, R"(tandem_request_duration_seconds_count{tier="edge"})"), 4);
  EXPECT_EQ(sample(m, R"(tandem_request_duration_seconds_count{tier="cloud"})"), 1);
  EXPECT_GT(sample(m, R"(tandem_tokens_total{tier="edge",type="completion"})"), 0);
  EXPECT_GT(sample(m, R"(tandem_cost_usd_total{tier="cloud"})"), 0);
  EXPECT_GT(sample(m, "tandem_cost_saved_usd_total"), 0);
  EXPECT_EQ(sample(m, R"(tandem_upstream_circuit_state{upstream="cloud",state="closed"})"), 1);
  EXPECT_EQ(sample(m, "tandem_cloud_offline"), 0);
  EXPECT_EQ(sample(m, "tandem_edge_queue_depth"), 0);
  // The same prompt three times: the second and third find it in a slot's prompt cache.
  EXPECT_GT(sample(m, R"(tandem_edge_prompt_tokens_total{source="cached"})"), 0);
  EXPECT_GT(sample(m, R"(tandem_edge_prompt_tokens_total{source="prefilled"})"), 0);
  EXPECT_EQ(sample(m, "tandem_data_left_device_total"), 1);
  EXPECT_NE(m.find("# TYPE tandem_request_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(m.find("tandem_edge_decode_tokens_per_second"), std::string::npos)
      << "the edge generations feed the decode-speed EWMA";
}

TEST(OperationsGatewayTest, StatusShowsTrafficLatencyCostModelsAndCircuits) {
  FaultUpstream fault;
  GatewayUnderTest gateway(cloud_yaml(fault.base_url(), ""));
  ASSERT_EQ(
      post(gateway.port(), "/v1/chat/completions", routed("Once upon a time"), pattern("edge"))
          .status,
      200);
  ASSERT_EQ(
      post(gateway.port(), "/v1/chat/completions", routed("Once upon a time"), pattern("cloud"))
          .status,
      200);
  const json s = status_of(gateway);
  EXPECT_EQ(s["gateway"]["ready"], true);
  EXPECT_EQ(s["gateway"]["store"], "local");
  EXPECT_EQ(s["traffic"]["total"]["requests"], 2);
  EXPECT_EQ(s["traffic"]["total"]["by_tier"]["edge"], 1);
  EXPECT_EQ(s["traffic"]["recent"]["by_tier"]["cloud"], 1);
  EXPECT_DOUBLE_EQ(s["traffic"]["recent"]["share"]["edge"].get<double>(), 0.5);
  EXPECT_EQ(s["latency_ms"]["edge"]["count"], 1);
  EXPECT_GT(s["latency_ms"]["cloud"]["p50"].get<double>(), 0);
  EXPECT_EQ(s["ttft_ms"]["edge"]["count"], 1);
  EXPECT_GT(s["cost"]["cloud_usd"].get<double>(), 0);
  EXPECT_GT(s["cost"]["all_cloud_usd"].get<double>(), s["cost"]["cloud_usd"].get<double>());
  EXPECT_EQ(s["models"]["edge"]["loaded"], true);
  EXPECT_EQ(s["models"]["edge"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(s["models"]["edge"]["allowed"], true);
  EXPECT_EQ(s["models"]["cloud"][0]["upstream"], "cloud");
  EXPECT_EQ(s["models"]["cloud"][0]["model"], "fault-ok");
  EXPECT_EQ(s["models"]["cloud"][0]["reported_model"], "fault-ok")
      << "the model the upstream's answer named is tracked for version skew";
  EXPECT_EQ(s["circuits"][0]["state"], "closed");
  EXPECT_EQ(s["offline"]["offline"], false);
  EXPECT_EQ(s["device"]["state"], "normal");
  EXPECT_EQ(s["reviews"]["pending"], 0);
  EXPECT_TRUE(s["gaming"]["flagged"].empty());
}

// The sum of one of the series' count columns.
int64_t column_sum(const json& values) {
  int64_t sum = 0;
  for (const auto& v : values) {
    sum += v.get<int64_t>();
  }
  return sum;
}

// The values of a column that are not null.
size_t measured(const json& values) {
  size_t n = 0;
  for (const auto& v : values) {
    n += v.is_null() ? 0 : 1;
  }
  return n;
}

TEST(OperationsGatewayTest, SeriesPlotTrafficLatencyCostAndCloudReachability) {
  FaultUpstream fault;
  GatewayUnderTest gateway(cloud_yaml(fault.base_url(), ""));
  for (const char* tier : {"edge", "edge", "cloud"}) {
    ASSERT_EQ(
        post(gateway.port(), "/v1/chat/completions", routed("Once upon a time"), pattern(tier))
            .status,
        200);
  }
  auto r = request(gateway.port(), "GET", "/v1/tandem/series?window_s=300");
  ASSERT_EQ(r.status, 200) << r.body;
  const json s = r.json_body();
  EXPECT_EQ(s["window_s"], 300);
  EXPECT_EQ(s["bucket_s"], 10);
  EXPECT_EQ(s["step_s"], 10);
  EXPECT_EQ(s["retention_s"], 6 * 3600);
  const size_t points = s["t"].size();
  EXPECT_GE(points, 30u);
  EXPECT_LE(points, 31u);
  EXPECT_EQ(column_sum(s["requests"]["edge"]), 2);
  EXPECT_EQ(column_sum(s["requests"]["cloud"]), 1);
  EXPECT_EQ(s["requests"]["human"].size(), points) << "every column is as long as the times";
  EXPECT_GE(measured(s["latency_ms"]["edge"]["p50"]), 1u);
  EXPECT_GE(measured(s["latency_ms"]["cloud"]["p95"]), 1u);
  EXPECT_GE(measured(s["ttft_ms"]["edge"]["p50"]), 1u);
  EXPECT_EQ(measured(s["latency_ms"]["human"]["p50"]), 0u);
  EXPECT_GE(measured(s["escalation_rate"]), 1u);
  double spend = 0;
  double saved = 0;
  for (size_t i = 0; i < points; ++i) {
    spend += s["cost_usd"]["spend"][i].get<double>();
    saved += s["cost_usd"]["saved"][i].get<double>();
  }
  EXPECT_GT(spend, 0);
  EXPECT_GT(saved, 0) << "the edge answers cost nothing against the cloud's prices";
  // The gateway samples the cloud's reachability as it starts, then every 2 s.
  EXPECT_GE(measured(s["cloud_available"]), 1u);
  EXPECT_EQ(s["gaming"]["enabled"], true);
  EXPECT_TRUE(s["gaming"]["clients"].empty());
  EXPECT_EQ(s["gaming"]["routed_cloud_share"].size(), points);

  const json six_hours =
      request(gateway.port(), "GET", "/v1/tandem/series?window_s=21600").json_body();
  EXPECT_EQ(six_hours["step_s"], 60) << "2,160 buckets merge into at most 360 points";
  EXPECT_LE(six_hours["t"].size(), 361u);
  EXPECT_EQ(column_sum(six_hours["requests"]["edge"]), 2);
  for (const char* bad : {"window_s=59", "window_s=21601", "window_s=abc"}) {
    const auto refused = request(gateway.port(), "GET", std::string("/v1/tandem/series?") + bad);
    EXPECT_EQ(refused.status, 400) << bad << ": " << refused.body;
  }
}

TEST(OperationsGatewayTest, OperatorEndpointsNeedAnAdminKeyButTheDashboardDoesNot) {
  ::setenv("TANDEM_TEST_OPERATOR_KEY", "op-key-1", 1);
  ::setenv("TANDEM_TEST_CLIENT_KEY", "client-key-1", 1);
  FaultUpstream fault;
  GatewayUnderTest gateway(
      "server:\n  api_keys:\n"
      "    - {name: ops, key_env: TANDEM_TEST_OPERATOR_KEY, admin: true}\n"
      "    - {name: app, key_env: TANDEM_TEST_CLIENT_KEY}\n" +
      cloud_yaml(fault.base_url(), ""));
  const std::map<std::string, std::string> ops = {{"Authorization", "Bearer op-key-1"}};
  const std::map<std::string, std::string> app = {{"Authorization", "Bearer client-key-1"}};
  for (const char* path :
       {"/metrics", "/v1/tandem/status", "/v1/tandem/audit", "/v1/tandem/series"}) {
    EXPECT_EQ(request(gateway.port(), "GET", path).status, 401) << path;
    EXPECT_EQ(request(gateway.port(), "GET", path, "", app).status, 403) << path;
    EXPECT_EQ(request(gateway.port(), "GET", path, "", ops).status, 200) << path;
  }
  EXPECT_EQ(post(gateway.port(), "/v1/tandem/canary", json::object(), app).status, 403);

  auto page = request(gateway.port(), "GET", "/");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.headers["Content-Type"], "text/html; charset=utf-8");
  EXPECT_NE(page.headers["Content-Security-Policy"].find("default-src 'self'"), std::string::npos);
  EXPECT_NE(page.body.find("dashboard.js"), std::string::npos);
  EXPECT_EQ(request(gateway.port(), "GET", "/dashboard/dashboard.js").status, 200);
  EXPECT_EQ(request(gateway.port(), "GET", "/dashboard/dashboard.css").status, 200);
  // The plots and their library, with its licence: compiled in, no key needed.
  for (const char* asset : {"/dashboard/plots.js", "/dashboard/vendor/uPlot.iife.min.js",
                            "/dashboard/vendor/uPlot.min.css"}) {
    const auto file = request(gateway.port(), "GET", asset);
    EXPECT_EQ(file.status, 200) << asset;
    EXPECT_GT(file.body.size(), 1000u) << asset;
  }
  const auto licence = request(gateway.port(), "GET", "/dashboard/vendor/uPlot.LICENSE.txt");
  EXPECT_EQ(licence.status, 200);
  EXPECT_NE(licence.body.find("MIT License"), std::string::npos);
  EXPECT_EQ(request(gateway.port(), "GET", "/dashboard/../../etc/passwd").status, 404);
  EXPECT_EQ(request(gateway.port(), "GET", "/dashboard/%2e%2e/secret").status, 404);
}

TEST(OperationsGatewayTest, TheAuditRecordsExactlyWhatWentToWhichCloudRedacted) {
  FaultUpstream fault;
  // Privacy routing is off, so an e-mail address does go out: the audit masks it.
  GatewayUnderTest gateway(cloud_yaml(fault.base_url(), "routing:\n  privacy: {enabled: false}\n"));
  auto r = post(gateway.port(), "/v1/chat/completions", routed("Tell jane.doe@example.com a story"),
                pattern("cloud", "alice"));
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(post(gateway.port(), "/v1/chat/completions", routed("Once"), pattern("edge")).status,
            200);
  auto audit = request(gateway.port(), "GET", "/v1/tandem/audit");
  ASSERT_EQ(audit.status, 200) << audit.body;
  const json rows = audit.json_body()["data"];
  ASSERT_EQ(rows.size(), 1u) << "only what went to the cloud is audited";
  const json& row = rows[0];
  EXPECT_EQ(row["upstream"], "cloud");
  EXPECT_EQ(row["model"], "fault-ok");
  EXPECT_EQ(row["purpose"], "answer");
  EXPECT_EQ(row["client"], "alice");
  EXPECT_EQ(row["request_id"], r.json_body()["id"]);
  EXPECT_EQ(row["sha256"].get<std::string>().size(), 64u);
  EXPECT_GT(row["bytes"].get<int>(), 0);
  EXPECT_EQ(row["content_mode"], "redacted");
  const std::string content = row["content"].get<std::string>();
  EXPECT_EQ(content.find("jane.doe@example.com"), std::string::npos);
  EXPECT_NE(content.find("[REDACTED:email]"), std::string::npos) << content;
  EXPECT_NE(content.find("a story"), std::string::npos);
  EXPECT_EQ(row["redactions"], 1);
  EXPECT_EQ(row["redacted_detectors"], json::array({"email"}));

  EXPECT_EQ(request(gateway.port(), "GET", "/v1/tandem/audit?limit=0").status, 400);
  EXPECT_EQ(request(gateway.port(), "GET", "/v1/tandem/audit?upstream=other").json_body()["data"],
            json::array());
}

TEST(OperationsGatewayTest, AuditContentNoneKeepsOnlyTheHash) {
  FaultUpstream fault;
  GatewayUnderTest gateway(cloud_yaml(fault.base_url(), "operations:\n  audit: {content: none}\n"));
  ASSERT_EQ(post(gateway.port(), "/v1/chat/completions", routed("Once"), pattern("cloud")).status,
            200);
  const json row = request(gateway.port(), "GET", "/v1/tandem/audit").json_body()["data"][0];
  EXPECT_EQ(row["content_mode"], "none");
  EXPECT_TRUE(row["content"].is_null());
  EXPECT_EQ(row["sha256"].get<std::string>().size(), 64u);
}

// What the gateway keeps per request (traces, audit rows, consistency routes, all in one
// routing database file here) must not grow with the number of requests: 2N requests leave no
// more behind than N. Counts rows and database pages, never the process's RSS.
TEST(OperationsGatewayTest, PerRequestStateStaysBoundedWhateverTheRequestCount) {
  FaultUpstream fault;
  TraceDir dir("bounded-state");
  GatewayUnderTest gateway(
      cloud_yaml(fault.base_url(),
                 "routing:\n  database: " + dir.db() +
                     "\n  privacy: {enabled: false}\n  traces: {max_rows: 40}\n"
                     "  consistency: {max_routes: 60}\noperations:\n  audit: {max_rows: 40}\n"));
  struct Held {
    int64_t traces, audit, routes, pages;
  };
  auto held = [&] {
    gateway.gateway().flush_traces();
    auto connection = gateway.gateway().database().acquire();
    auto count = [&](const char* sql) -> int64_t {
      auto n = connection.query_int64(sql);
      return n ? n.value() : -1;
    };
    return Held{count("SELECT count(*) FROM traces"), count("SELECT count(*) FROM cloud_audit"),
                count("SELECT count(*) FROM consistency_routes"),
                count("PRAGMA page_count") - count("PRAGMA freelist_count")};
  };
  int sent = 0;
  auto send = [&](int n) {
    for (int i = 0; i < n; ++i, ++sent) {
      // Words of their own: every request its own cluster keys, so every one adds routes.
      const std::string text = "tell w" + std::to_string(sent) + " x" + std::to_string(sent * 7) +
                               " y" + std::to_string(sent * 13) + " z" + std::to_string(sent * 31);
      auto r = post(gateway.port(), "/v1/chat/completions", routed(text), pattern("cloud", "app"));
      ASSERT_EQ(r.status, 200) << r.body;
    }
  };
  constexpr int kRound = static_cast<int>(store::kTrimEvery);
  send(kRound);
  const Held first = held();
  EXPECT_GT(first.routes, 0) << "the requests were meant to be remembered";
  send(2 * kRound);
  const Held later = held();
  // Retention runs every max_rows / 10 rows (traces, audit) or every kTrimEvery requests (the
  // routes, a few per request; the last request's may land after its response).
  EXPECT_LE(later.traces, 40 + 4);
  EXPECT_LE(later.audit, 40 + 4);
  EXPECT_LE(later.routes, first.routes + int64_t{store::kMaxClusterKeys});
  // Every table together: the pages in use do not follow the request count either.
  EXPECT_LE(later.pages, first.pages + first.pages / 10)
      << "first " << first.pages << " pages after " << kRound << " requests, " << later.pages
      << " after " << sent;
}

TEST(OperationsGatewayTest, AnInMemoryDatabaseKeepsAtMostTenThousandAuditRows) {
  config::GatewayConfig config;
  const auto in_memory = server::trace_writer_options(config, true);
  EXPECT_EQ(in_memory.max_audit_rows, server::kInMemoryMaxRows);
  const auto file = server::trace_writer_options(config, false);
  EXPECT_EQ(file.max_rows, config.routing.traces.max_rows);
  EXPECT_EQ(file.max_audit_rows, config.operations.audit.max_rows);
  config.operations.audit.max_rows = 100;
  EXPECT_EQ(server::trace_writer_options(config, true).max_audit_rows, 100u);
}

// Nothing in the process reads traces back (the tools that do open a database file), so an
// in-memory database keeps none; the audit, which GET /v1/tandem/audit reads, stays.
TEST(OperationsGatewayTest, TracesAreKeptInADatabaseFileAndNotInMemory) {
  FaultUpstream fault;
  auto rows_after_one_request = [&](const std::string& extra) {
    GatewayUnderTest gateway(cloud_yaml(fault.base_url(), extra));
    EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", routed("Once"), pattern("cloud")).status,
              200);
    gateway.gateway().flush_traces();
    auto connection = gateway.gateway().database().acquire();
    auto traces = connection.query_int64("SELECT count(*) FROM traces");
    auto audit = gateway.gateway().audit_log()->count();
    return std::pair<int64_t, int64_t>{traces ? *traces : -1,
                                       audit ? static_cast<int64_t>(*audit) : -1};
  };
  EXPECT_EQ(rows_after_one_request(""), (std::pair<int64_t, int64_t>{0, 1}));
  TraceDir dir("traces-file");
  EXPECT_EQ(rows_after_one_request("routing:\n  database: " + dir.db() + "\n"),
            (std::pair<int64_t, int64_t>{1, 1}));
}

TEST(OperationsGatewayTest, OfflineIsExplicitInResponsesStatusAndMetrics) {
  const uint16_t closed = free_port();  // nothing listens there
  GatewayUnderTest gateway(
      "cloud:\n  upstreams:\n    - name: cloud\n      base_url: http://127.0.0.1:" +
      std::to_string(closed) +
      "/v1\n      models: {big: fault-ok}\n"
      "      health: {interval_ms: 100, timeout_ms: 200}\n");
  ASSERT_TRUE(eventually([&] { return status_of(gateway)["offline"]["offline"] == true; }));
  const json s = status_of(gateway);
  EXPECT_NE(s["offline"]["notice"].get<std::string>().find("offline"), std::string::npos);
  EXPECT_FALSE(s["offline"]["since"].is_null());
  auto r = post(gateway.port(), "/v1/chat/completions", routed("Once upon a time"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json t = r.json_body()["tandem"];
  EXPECT_EQ(t["tier"], "edge");
  ASSERT_TRUE(t["degraded"].is_object()) << "offline is never silent";
  EXPECT_NE(t["degraded"]["reason"].get<std::string>().find("offline"), std::string::npos);
  EXPECT_EQ(sample(request(gateway.port(), "GET", "/metrics").body, "tandem_cloud_offline"), 1);
}

TEST(OperationsGatewayTest, AHotDeviceShiftsWorkToTheCloudAndBack) {
  FakeSysfs sysfs;
  FaultUpstream fault;
  GatewayUnderTest gateway(
      cloud_yaml(fault.base_url(), "operations:\n  device: {sysfs_root: " + sysfs.root() +
                                       ", interval_ms: 100, max_temp_c: 85, resume_temp_c: 80}\n"));
  ASSERT_TRUE(eventually([&] { return status_of(gateway)["device"]["max_temp_c"] == 50.0; }));
  EXPECT_EQ(status_of(gateway)["device"]["battery_percent"], 80.0);
  auto cool = post(gateway.port(), "/v1/chat/completions", routed("Once"), pattern("edge"));
  EXPECT_EQ(cool.json_body()["tandem"]["tier"], "edge");

  sysfs.set_temp_c(91);
  ASSERT_TRUE(eventually([&] { return status_of(gateway)["device"]["state"] == "throttled"; }));
  const json device = status_of(gateway)["device"];
  EXPECT_EQ(device["reasons"][0]["code"], "device.thermal");
  auto hot = post(gateway.port(), "/v1/chat/completions", routed("Once upon a time"));
  ASSERT_EQ(hot.status, 200) << hot.body;
  EXPECT_EQ(hot.json_body()["tandem"]["tier"], "cloud");
  EXPECT_EQ(hot.json_body()["tandem"]["routing"]["decision"]["reasons"][0]["code"],
            "device.throttled");
  auto private_data =
      post(gateway.port(), "/v1/chat/completions", routed("Mail jane.doe@example.com the plan"));
  EXPECT_EQ(private_data.json_body()["tandem"]["tier"], "edge") << "privacy outranks heat";
  EXPECT_EQ(sample(request(gateway.port(), "GET", "/metrics").body, "tandem_device_throttled"), 1);

  sysfs.set_temp_c(82);  // above resume_temp_c: still throttled (hysteresis)
  // Judged once the monitor has read 82 degrees (the state in the same snapshot is its verdict on
  // that reading), not after a fixed sleep that a slow poll would outlast.
  json reading;
  ASSERT_TRUE(eventually([&] {
    reading = status_of(gateway)["device"];
    return reading["max_temp_c"] == 82.0;
  })) << reading.dump();
  EXPECT_EQ(reading["state"], "throttled");
  sysfs.set_temp_c(70);
  ASSERT_TRUE(eventually([&] { return status_of(gateway)["device"]["state"] == "normal"; }));
  auto again = post(gateway.port(), "/v1/chat/completions", routed("Once upon a time"));
  EXPECT_NE(again.json_body()["tandem"]["routing"]["decision"]["reasons"][0]["code"],
            "device.throttled");
}

TEST(OperationsGatewayTest, ThrottlingOnlyReportsWhenThePolicySaysNone) {
  FakeSysfs sysfs;
  sysfs.set_temp_c(95);
  FaultUpstream fault;
  GatewayUnderTest gateway(
      cloud_yaml(fault.base_url(), "operations:\n  device: {sysfs_root: " + sysfs.root() +
                                       ", interval_ms: 100, when_throttled: none}\n"));
  ASSERT_TRUE(eventually([&] { return status_of(gateway)["device"]["state"] == "throttled"; }));
  auto r = post(gateway.port(), "/v1/chat/completions", routed("Once"), pattern("edge"));
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "edge");
}

TEST(OperationsGatewayTest, AMinimumEdgeVersionTheModelLacksSendsWorkToTheCloud) {
  FaultUpstream fault;
  GatewayUnderTest gateway(
      cloud_yaml(fault.base_url(), "operations:\n  version: {min_edge_version: '2.0'}\n"));
  const json s = status_of(gateway);
  EXPECT_EQ(s["models"]["edge"]["allowed"], false);
  EXPECT_NE(s["models"]["edge"]["problem"].get<std::string>().find("2.0"), std::string::npos);
  auto r = post(gateway.port(), "/v1/chat/completions", routed("Once upon a time"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "cloud");
  EXPECT_EQ(r.json_body()["tandem"]["routing"]["decision"]["reasons"][0]["code"],
            "edge.unavailable");
}

TEST(OperationsGatewayTest, AnAllowedEdgeSha256PassesThePolicy) {
  FaultUpstream fault;
  std::string sha;
  {
    GatewayUnderTest probe(cloud_yaml(fault.base_url(), ""));
    sha = status_of(probe)["models"]["edge"]["sha256"].get<std::string>();
  }
  GatewayUnderTest gateway(
      cloud_yaml(fault.base_url(),
                 "operations:\n  version: {allowed_edge_sha256: [" + sha.substr(0, 16) + "]}\n"));
  EXPECT_EQ(status_of(gateway)["models"]["edge"]["allowed"], true);
  auto r = post(gateway.port(), "/v1/chat/completions", routed("Once"), pattern("edge"));
  EXPECT_EQ(r.json_body()["tandem"]["tier"], "edge");
}

TEST(OperationsGatewayTest, AClientThatGamesEscalationsIsFlaggedAndCapped) {
  FaultUpstream fault;
  GatewayUnderTest gateway(cloud_yaml(
      fault.base_url(),
      "operations:\n  gaming: {min_requests: 8, min_population: 20, escalation_cap: 0.25}\n"));
  // The population: three honest clients, one request in five escalated.
  for (int i = 0; i < 30; ++i) {
    const std::string client = "honest-" + std::to_string(i % 3);
    ASSERT_EQ(post(gateway.port(), "/v1/chat/completions", routed("Once"),
                   pattern(i % 5 == 0 ? "cloud" : "edge", client))
                  .status,
              200);
  }
  // Mallory asks for the cloud every time, until the cap keeps it on the edge.
  int sent = 0;
  json capped;
  while (sent < 20 && capped.is_null()) {
    auto r =
        post(gateway.port(), "/v1/chat/completions", routed("Once"), pattern("cloud", "mallory"));
    ASSERT_EQ(r.status, 200);
    ++sent;
    const json t = r.json_body()["tandem"];
    if (t["tier"] == "edge") {
      capped = t;
    }
  }
  ASSERT_FALSE(capped.is_null()) << "mallory was never capped";
  EXPECT_GE(sent, 9) << "judged only from min_requests (8) on";
  EXPECT_EQ(capped["routing"]["decision"]["reasons"][0]["code"], "gaming.capped");
  const json gaming = status_of(gateway)["gaming"];
  ASSERT_EQ(gaming["flagged"].size(), 1u) << gaming.dump();
  EXPECT_EQ(gaming["flagged"][0]["client"], "mallory");
  EXPECT_LT(gaming["flagged"][0]["p_value"].get<double>(), 0.001);
  EXPECT_EQ(
      sample(request(gateway.port(), "GET", "/metrics").body, "tandem_gaming_flagged_clients"), 1);
  auto honest =
      post(gateway.port(), "/v1/chat/completions", routed("Once"), pattern("cloud", "honest-1"));
  EXPECT_EQ(honest.json_body()["tandem"]["tier"], "cloud") << "only the gamer is capped";
}

TEST(OperationsGatewayTest, ACanaryRunComparesBothTiersAndIsKeptInTheHistory) {
  FaultUpstream fault;
  GatewayUnderTest gateway(cloud_yaml(fault.base_url(), ""));
  auto r = post(gateway.port(), "/v1/tandem/canary", json::object());
  ASSERT_EQ(r.status, 200) << r.body;
  const json run = r.json_body();
  EXPECT_EQ(run["prompts"], 5);
  EXPECT_EQ(run["failed"], 0);
  EXPECT_EQ(run["cloud_model"], "fault-ok");
  EXPECT_EQ(run["edge_sha256"].get<std::string>().size(), 64u);
  ASSERT_TRUE(run["agreement"].is_number());
  const json canary = status_of(gateway)["models"]["skew"]["canary"];
  EXPECT_EQ(canary["runs"], 1);
  EXPECT_EQ(canary["history"][0]["prompts"], 5);
  // The tiny edge model and the fault upstream never agree: the alert says so.
  const json alerts = status_of(gateway)["models"]["skew"]["alerts"];
  bool low = false;
  for (const auto& a : alerts) {
    low = low || a["code"] == "skew.low_agreement";
  }
  EXPECT_TRUE(low) << alerts.dump();
  const auto audit = request(gateway.port(), "GET", "/v1/tandem/audit").json_body()["data"];
  ASSERT_EQ(audit.size(), 5u);
  EXPECT_EQ(audit[0]["purpose"], "canary");
}

TEST(OperationsGatewayTest, PeriodicCanariesRunWhenEnabled) {
  FaultUpstream fault;
  GatewayUnderTest gateway(cloud_yaml(
      fault.base_url(),
      "operations:\n  canary: {enabled: true, interval_s: 1, prompts: ['Once upon a time']}\n"));
  ASSERT_TRUE(eventually(
      [&] { return status_of(gateway)["models"]["skew"]["canary"]["runs"].get<int>() >= 2; },
      std::chrono::seconds(10)));
}

}  // namespace
}  // namespace tandem::test
