#pragma once
// The subcommands of `tandem`. Each registers its flags on the CLI11 app and returns the
// process exit code when run: 0 success, 1 the work failed (the message says why).

#include <CLI/CLI.hpp>

namespace tandem::cli {

// Registers `tandem run`; the returned callback runs it after parsing.
std::function<int()> add_run_command(CLI::App& app);

// Registers `tandem serve`.
std::function<int()> add_serve_command(CLI::App& app);

// Registers `tandem models inspect`.
std::function<int()> add_models_command(CLI::App& app);

// Registers `tandem router train|eval|explain` (the ingress complexity classifier).
std::function<int()> add_router_command(CLI::App& app);

// Registers `tandem route` (the routing decision for a prompt, without generating).
std::function<int()> add_route_command(CLI::App& app);

// Registers `tandem review list|show|answer|reject` (the human review queue).
std::function<int()> add_review_command(CLI::App& app);

}  // namespace tandem::cli
