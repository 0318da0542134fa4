// `tandem serve`: the gateway. Loads the configuration, opens the edge model and the cloud
// upstreams, and serves the OpenAI-compatible API until SIGINT or SIGTERM.

#include <filesystem>
#include <iostream>
#include <memory>

#include <sys/resource.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/allocator.h"
#include "engine/generate.h"
#include "engine/llama_backend.h"
#include "net/asio.h"
#include "routing/router.h"
#include "server/edge_options.h"
#include "server/http_server.h"

namespace tandem::cli {
namespace {

struct ServeFlags {
  std::string config_path;
  std::optional<std::string> host;
  std::optional<uint16_t> port;
  std::optional<std::string> model;
  bool verbose = false;
};

// The shipped model, found relative to the binary (build/tandem -> models/), then the
// working directory.
std::string shipped_model() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const auto& candidate : {exe.parent_path() / ".." / "models" / "stories260K.gguf",
                                exe.parent_path() / "models" / "stories260K.gguf",
                                std::filesystem::path("models") / "stories260K.gguf"}) {
    if (!ec && std::filesystem::exists(candidate)) {
      return std::filesystem::weakly_canonical(candidate).string();
    }
  }
  return "models/stories260K.gguf";
}

// Every client connection is a descriptor, and so is every upstream connection it needs: a
// thousand concurrent streams take two thousand. A soft limit below the hard one (often 1024) is
// raised to it, and said so; one that stays too low is said too.
void raise_descriptor_limit(size_t max_connections) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return;
  }
  const rlim_t before = limit.rlim_cur;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      limit.rlim_cur = before;
    } else {
      std::cerr << "tandem serve: raised the open-file limit from " << before << " to "
                << limit.rlim_cur << " (RLIMIT_NOFILE)\n";
    }
  }
  const rlim_t needed = 2 * static_cast<rlim_t>(max_connections) + 64;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < needed) {
    std::cerr << "tandem serve: the open-file limit is " << limit.rlim_cur << " (hard limit "
              << limit.rlim_max << "); server.max_connections " << max_connections
              << " streamed through to the cloud needs about " << needed
              << ": raise it (ulimit -n, LimitNOFILE=) or lower server.max_connections\n";
  }
}

// The configuration file (or the defaults) with the command line's overrides applied.
Result<config::GatewayConfig> serve_config(const ServeFlags& flags) {
  config::GatewayConfig config;
  if (!flags.config_path.empty()) {
    auto loaded = config::load_config(flags.config_path);
    if (!loaded) {
      return loaded.error();
    }
    config = std::move(loaded).value();
  }
  if (flags.host) {
    config.server.host = *flags.host;
  }
  if (flags.port) {
    config.server.port = *flags.port;
  }
  if (const std::string problem = config::exposure_problem(config.server); !problem.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "server.host: " + problem);
  }
  if (flags.model) {
    config.edge.model = *flags.model;
    config.edge.enabled = true;
  }
  if (config.edge.model.empty()) {
    config.edge.model = shipped_model();
  }
  return config;
}

// The edge engine, warmed up; null when the edge is disabled or fails to open while a cloud
// can still answer (`edge_problem` then says why). An error when nothing could answer.
Result<std::unique_ptr<engine::Engine>> open_edge(const config::GatewayConfig& config,
                                                  std::string& edge_problem) {
  edge_problem = "disabled in the configuration (edge.enabled: false)";
  if (!config.edge.enabled) {
    return std::unique_ptr<engine::Engine>();
  }
  auto options = server::edge_engine_options(config.edge);
  if (!options) {
    return options.error();
  }
  auto opened = engine::Engine::open(options.value());
  if (!opened) {
    if (config.upstreams.empty()) {
      return opened.error();
    }
    // The cloud can still answer; the gateway reports the edge as unavailable.
    edge_problem = opened.error().message;
    std::cerr << "tandem serve: edge model unavailable, serving the cloud only: " << edge_problem
              << "\n";
    return std::unique_ptr<engine::Engine>();
  }
  auto engine = std::move(opened).value();
  // One token now, so the first client does not pay for llama.cpp's first-run set-up
  // (thread pools, graph allocation: hundreds of milliseconds).
  engine::GenerationRequest warm_up;
  warm_up.prompt = "Hello";
  warm_up.sampling.max_tokens = 1;
  (void)engine::generate(*engine, std::move(warm_up));
  return engine;
}

// Where the gateway listens, what serves behind it, and a request to try.
void print_banner(const server::Gateway& gateway, const server::HttpServer& http_server) {
  const auto& cfg = gateway.config();
  std::cout << "tandem serve: listening on http://" << cfg.server.host << ":" << http_server.port()
            << "\n  allocator: " << allocator_name() << "\n  edge:  "
            << (gateway.engine() ? gateway.edge_name() + " (" + cfg.edge.model + ")"
                                 : "unavailable: " + gateway.edge_problem())
            << "\n  cloud: ";
  if (gateway.upstreams().empty()) {
    std::cout << "none configured";
  }
  for (const auto& u : gateway.upstreams()) {
    std::cout << u->name() << " (" << u->config().base_url << ") ";
  }
  std::cout << "\n\ntry:\n  curl http://" << cfg.server.host << ":" << http_server.port()
            << "/v1/chat/completions -H 'Content-Type: application/json' \\\n"
               "    -d '{\"model\": \"tandem\", \"messages\": [{\"role\": \"user\", "
               "\"content\": \"Once upon a time\"}], \"max_tokens\": 48}'\n"
            << std::endl;
}

// Serves until SIGINT or SIGTERM, then lets in-flight requests finish. Signals are handled on
// a thread of their own so that shutdown never waits for a busy I/O thread.
void serve_until_signalled(server::HttpServer& http_server, uint32_t shutdown_grace_ms) {
  net::asio::io_context signals_context;
  net::asio::signal_set signals(signals_context, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (!ec) {
      std::cerr << "tandem serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
                << ": finishing in-flight requests (up to " << shutdown_grace_ms << " ms)\n";
      http_server.shutdown();
    }
  });
  std::thread signal_thread([&] { signals_context.run(); });
  http_server.run();
  signals_context.stop();
  signal_thread.join();
}

int serve(const ServeFlags& flags) {
  engine::set_llama_log_level(flags.verbose ? engine::LlamaLogLevel::kVerbose
                                            : engine::LlamaLogLevel::kQuiet);
  auto configured = serve_config(flags);
  if (!configured) {
    std::cerr << "tandem serve: " << configured.error().message << "\n";
    return 1;
  }
  config::GatewayConfig config = std::move(configured).value();
  raise_descriptor_limit(config.server.max_connections);
  // A bad routing pattern or weights file fails now, not after the model has loaded.
  if (auto router = routing::Router::create(config.routing); !router) {
    std::cerr << "tandem serve: " << router.error().message << "\n";
    return 1;
  }
  std::string edge_problem;
  auto engine = open_edge(config, edge_problem);
  if (!engine) {
    std::cerr << "tandem serve: " << engine.error().message << "\n";
    return 1;
  }

  auto made = server::Gateway::create(std::move(config), std::move(engine).value(),
                                      std::move(edge_problem));
  if (!made) {
    std::cerr << "tandem serve: " << made.error().message << "\n";
    return 1;
  }
  auto gateway = std::move(made).value();
  auto created = server::HttpServer::create(gateway);
  if (!created) {
    std::cerr << "tandem serve: " << created.error().message << "\n";
    return 1;
  }
  auto& http_server = *created.value();
  print_banner(*gateway, http_server);
  serve_until_signalled(http_server, gateway->config().server.shutdown_grace_ms);
  gateway->flush_traces();  // the last requests' traces, before the process exits
  std::cerr << "tandem serve: stopped\n";
  return 0;
}

}  // namespace

std::function<int()> add_serve_command(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve the OpenAI-compatible API over the edge model and cloud upstreams");
  cmd->add_option("-c,--config", flags->config_path,
                  "YAML configuration (docs/CONFIG.md); without it: the shipped model on "
                  "127.0.0.1:8080, no cloud");
  cmd->add_option("--host", flags->host, "Address to bind (overrides server.host)");
  cmd->add_option("--port", flags->port,
                  "Port to bind, 0 for any free one (overrides server.port)");
  cmd->add_option("-m,--model", flags->model, "Edge GGUF model (overrides edge.model)");
  cmd->add_flag("-v,--verbose", flags->verbose, "Show llama.cpp's own log");
  return [flags] { return serve(*flags); };
}

}  // namespace tandem::cli
