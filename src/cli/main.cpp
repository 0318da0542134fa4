// `tandem`: one binary, one subcommand per job. The work lives in the component libraries.

#include <exception>
#include <iostream>

#include "cli/commands.h"
#include "common/version.h"

namespace {

int run_cli(int argc, char** argv) {
  CLI::App app{
      "Tandem: a hybrid edge-cloud LLM inference gateway. A small model runs on this device "
      "through llama.cpp; frontier models run in the cloud; Tandem decides where each query goes.",
      "tandem"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tandem ") + tandem::kTandemVersion);

  const auto run = tandem::cli::add_run_command(app);
  const auto models = tandem::cli::add_models_command(app);
  const auto serve = tandem::cli::add_serve_command(app);
  const auto router = tandem::cli::add_router_command(app);
  const auto route = tandem::cli::add_route_command(app);
  const auto review = tandem::cli::add_review_command(app);
  const auto replay = tandem::cli::add_replay_command(app);
  const auto plan = tandem::cli::add_plan_command(app);
  const auto shadow = tandem::cli::add_shadow_command(app);
  const auto drift = tandem::cli::add_drift_command(app);
  const auto evaluate = tandem::cli::add_eval_command(app);
  const auto calibrate = tandem::cli::add_calibrate_command(app);
  const auto status = tandem::cli::add_status_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (app.got_subcommand("run")) {
    return run();
  }
  if (app.got_subcommand("models")) {
    return models();
  }
  if (app.got_subcommand("serve")) {
    return serve();
  }
  if (app.got_subcommand("router")) {
    return router();
  }
  if (app.got_subcommand("route")) {
    return route();
  }
  if (app.got_subcommand("review")) {
    return review();
  }
  if (app.got_subcommand("replay")) {
    return replay();
  }
  if (app.got_subcommand("plan")) {
    return plan();
  }
  if (app.got_subcommand("shadow")) {
    return shadow();
  }
  if (app.got_subcommand("status")) {
    return status();
  }
  if (app.got_subcommand("drift")) {
    return drift();
  }
  if (app.got_subcommand("eval")) {
    return evaluate();
  }
  if (app.got_subcommand("calibrate")) {
    return calibrate();
  }
  std::cerr << app.help();
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    // Expected failures are Result values; this is the last line against the unexpected.
    std::cerr << "tandem: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "tandem: internal error\n";
  }
  return 1;
}
