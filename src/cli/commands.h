#pragma once
// The subcommands of `tandem`. Each registers its flags on the CLI11 app and returns the
// process exit code when run: 0 success, 1 the work failed (the message says why).

#include <CLI/CLI.hpp>

namespace tandem::cli {

// Registers `tandem run`; the returned callback runs it after parsing.
std::function<int()> add_run_command(CLI::App& app);

// Registers `tandem serve`.
std::function<int()> add_serve_command(CLI::App& app);

// Registers `tandem models inspect|quantize`.
std::function<int()> add_models_command(CLI::App& app);

// Registers `tandem models quantize` under `models` (called by add_models_command).
std::function<int()> add_models_quantize_command(CLI::App& models);

// Registers `tandem drift` (quantization drift against a reference model; exit 3 when drifted).
std::function<int()> add_drift_command(CLI::App& app);

// Registers `tandem router train|eval|explain` (the ingress complexity classifier).
std::function<int()> add_router_command(CLI::App& app);

// Registers `tandem router train-task` and `tandem router pairs` under `router` (the task
// model, and common sense measured on prompt pairs; called by add_router_command). The callback
// returns -1 when another router subcommand was chosen.
std::function<int()> add_router_task_commands(CLI::App& router);

// Registers `tandem route` (the routing decision for a prompt, without generating).
std::function<int()> add_route_command(CLI::App& app);

// Registers `tandem review list|show|answer|reject` (the human review queue).
std::function<int()> add_review_command(CLI::App& app);

// Registers `tandem replay` (recorded traffic decided again under a new configuration).
std::function<int()> add_replay_command(CLI::App& app);

// Registers `tandem plan` (the deployment decision matrix: edge, cloud or hybrid, break-even).
std::function<int()> add_plan_command(CLI::App& app);

// Registers `tandem shadow report` (shadow mode: edge-cloud agreement and verdict per kind).
std::function<int()> add_shadow_command(CLI::App& app);

// Registers `tandem eval` (policies replayed over labelled traces: APGR, CPT, baselines).
std::function<int()> add_eval_command(CLI::App& app);

// Registers `tandem calibrate` (cascade weights and thresholds for a target quality or share).
std::function<int()> add_calibrate_command(CLI::App& app);

// Registers `tandem status` (a running gateway's status document, GET /v1/tandem/status).
std::function<int()> add_status_command(CLI::App& app);

}  // namespace tandem::cli
