#pragma once
// The edge engine's options from the configuration's `edge` section: one place for
// `tandem serve` and the in-process gateways of the tests.

#include "common/result.h"
#include "config/config.h"
#include "engine/engine.h"

namespace tandem::server {

// Fails with kInvalidArgument when edge.chat_template_file cannot be read or is empty.
Result<engine::EngineOptions> edge_engine_options(const config::EdgeConfig& edge);

}  // namespace tandem::server
