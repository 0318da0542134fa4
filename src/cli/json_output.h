#pragma once
// JSON renderings of engine results for the CLI's --json modes.

#include <nlohmann/json.hpp>

#include "engine/generate.h"
#include "engine/model_identity.h"

namespace tandem::cli {

nlohmann::ordered_json to_json(const engine::ModelIdentity& identity);

// {text, finish_reason, usage, tokens: [{text, logprob, entropy, top: [{text, logprob}]}], ...}
nlohmann::ordered_json to_json(const engine::Completion& completion,
                               const engine::ModelIdentity& model);

}  // namespace tandem::cli
