// `tandem route "PROMPT"`: the routing decision for a prompt and every signal behind it,
// without generating anything (the same decision `tandem serve` makes for `model: tandem`).

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "config/config.h"
#include "routing/router.h"
#include "server/tandem_api.h"

namespace tandem::cli {
namespace {

struct RouteFlags {
  std::string prompt;
  std::string system;
  std::vector<std::string> earlier;  // earlier user messages, oldest first
  std::string config_path;
  server::RoutingHeaders headers;
  size_t turns = 1;
  bool cloud_offline = false;
  bool no_edge = false;
  bool explain = false;
  bool json = false;
};

void print_text(const nlohmann::json& e, bool explain) {
  const auto& d = e["decision"];
  const auto& s = e["signals"];
  const auto& t = e["thresholds"];
  std::printf("tier:     %s\n",
              d["tier"].is_null() ? "none" : d["tier"].get<std::string>().c_str());
  std::printf("pattern:  %s\n", d["pattern"].get<std::string>().c_str());
  std::printf("cloud:    %s\n", d["cloud_allowed"].get<bool>() ? "allowed" : "not allowed");
  std::printf("reasons:\n");
  for (const auto& r : d["reasons"]) {
    std::printf("  %-24s %s\n", r["code"].get<std::string>().c_str(),
                r["detail"].get<std::string>().c_str());
  }
  if (!d["notice"].is_null()) {
    std::printf("notice:   %s\n", d["notice"].get<std::string>().c_str());
  }
  std::printf("signals:\n");
  const auto& findings = s["privacy"]["findings"];
  std::printf("  privacy:     %s\n", findings.empty() ? "nothing found" : "");
  for (const auto& f : findings) {
    const std::string field = f.value("field", std::string("the prompt"));
    std::printf("    %-16s %s at %zu: %s\n", f["detector"].get<std::string>().c_str(),
                field.c_str(), f["offset"].get<size_t>(), f["masked"].get<std::string>().c_str());
  }
  for (const auto& o : s["privacy"]["opaque"]) {
    std::printf("    %-16s %s: unreadable (routing.privacy.opaque_content)\n",
                o["kind"].get<std::string>().c_str(), o["field"].get<std::string>().c_str());
  }
  const auto& c = s["complexity"];
  std::printf("  complexity:  %.3f (threshold %.2f, model %s)\n", c["score"].get<double>(),
              c["threshold"].get<double>(), c["model"].get<std::string>().c_str());
  if (explain && c.contains("features")) {
    std::printf("    %-28s %10s %13s\n", "feature", "value", "contribution");
    for (const auto& f : c["features"]) {
      std::printf("    %-28s %10.3f %+13.3f\n", f["feature"].get<std::string>().c_str(),
                  f["value"].get<double>(), f["contribution"].get<double>());
    }
  }
  if (s.contains("kind") && t.contains("cascade")) {
    std::printf("  kind:        %s (cascade threshold %.3f)\n",
                s["kind"].get<std::string>().c_str(), t["cascade"].get<double>());
  }
  if (!s["latency_budget_ms"].is_null()) {
    std::printf("  latency:     budget %d ms\n", s["latency_budget_ms"].get<int>());
  }
  std::printf("  cloud:       %s\n",
              !s["health"]["cloud_configured"].get<bool>()
                  ? "not configured"
                  : (s["health"]["cloud_online"].get<bool>() ? "online" : "offline"));
}

int route(const RouteFlags& flags) {
  config::GatewayConfig config;
  if (!flags.config_path.empty()) {
    auto loaded = config::load_config(flags.config_path);
    if (!loaded) {
      std::cerr << "tandem route: " << loaded.error().message << "\n";
      return 1;
    }
    config = std::move(loaded).value();
  }
  auto router = routing::Router::create(config.routing);
  if (!router) {
    std::cerr << "tandem route: " << router.error().message << "\n";
    return 1;
  }
  auto hints = server::request_hints(flags.headers, nullptr);
  if (auto* bad = std::get_if<server::ApiError>(&hints)) {
    std::cerr << "tandem route: " << bad->message << "\n";
    return 2;
  }
  // The body a client would send with these messages: privacy reads it field by field.
  nlohmann::json messages = nlohmann::json::array();
  std::string all;           // the conversation's text as the gateway joins it: each message once
  size_t content_chars = 0;  // and without the line breaks, as the gateway counts it
  auto add = [&](const char* role, const std::string& content) {
    messages.push_back({{"role", role}, {"content", content}});
    all += (all.empty() ? "" : "\n") + content;
    content_chars += content.size();
  };
  if (!flags.system.empty()) {
    add("system", flags.system);
  }
  for (const auto& earlier : flags.earlier) {
    add("user", earlier);
  }
  add("user", flags.prompt);
  const std::vector<std::string_view> earlier(flags.earlier.begin(), flags.earlier.end());
  const std::string body = nlohmann::json{{"messages", messages}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  routing::RouteInput input;
  input.text = all;
  input.body = body;
  input.prompt.system = flags.system;
  input.prompt.last_user = flags.prompt;
  input.prompt.turns = std::max(flags.turns, flags.earlier.size() + 1);
  input.prompt.earlier_user = earlier;
  input.prompt.total_chars = content_chars;
  input.hints = std::get<routing::RequestHints>(hints);
  const routing::RouteSignals signals = router.value()->signals(input);
  routing::HealthSnapshot health;
  health.edge_available = !flags.no_edge;
  health.edge_problem = "--no-edge";
  // Without a config the question is "where would this go": assume a cloud tier exists.
  health.cloud_configured = flags.config_path.empty() || !config.upstreams.empty();
  health.cloud_online = health.cloud_configured && !flags.cloud_offline;
  health.cloud_problem = "--cloud-offline";
  const routing::Decision decision = router.value()->decide(signals, health);
  const auto explained = router.value()->explain(input, signals, decision, health, flags.explain);
  if (flags.json) {
    std::cout << explained.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    print_text(explained, flags.explain);
  }
  return 0;
}

}  // namespace

std::function<int()> add_route_command(CLI::App& app) {
  auto flags = std::make_shared<RouteFlags>();
  CLI::App* cmd = app.add_subcommand(
      "route", "Show where a prompt would be routed and why, without generating anything");
  cmd->add_option("prompt", flags->prompt, "The prompt (the last user message)")->required();
  cmd->add_option("-c,--config", flags->config_path,
                  "Gateway YAML config (routing section, upstreams); without it the defaults "
                  "and a cloud tier that is online");
  cmd->add_option("--system", flags->system, "A system prompt");
  cmd->add_option("--earlier", flags->earlier,
                  "An earlier user message of the conversation (repeat, oldest first): a "
                  "follow-up is scored with the thread before it")
      ->allow_extra_args(false);  // one message per flag: the prompt may follow
  cmd->add_option("--turns", flags->turns, "Messages in the conversation")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--privacy", flags->headers.privacy, "As X-Tandem-Privacy (local-only)");
  cmd->add_option("--latency-budget-ms", flags->headers.latency_budget,
                  "As X-Tandem-Latency-Budget-Ms");
  cmd->add_option("--pattern", flags->headers.pattern,
                  "As X-Tandem-Pattern (ingress, cascade, speculative, collaborate, edge, cloud)");
  cmd->add_option("--review", flags->headers.review, "As X-Tandem-Review (required)");
  cmd->add_option("--client", flags->headers.client, "As X-Tandem-Client (a client id)");
  cmd->add_flag("--cloud-offline", flags->cloud_offline, "Route as if the cloud were offline");
  cmd->add_flag("--no-edge", flags->no_edge, "Route as if the edge model were unavailable");
  cmd->add_flag("--explain", flags->explain, "Show the classifier's feature contributions");
  cmd->add_flag("--json", flags->json, "Print the decision and signals as JSON");
  return [flags] { return route(*flags); };
}

}  // namespace tandem::cli
