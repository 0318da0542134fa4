#pragma once
// Fills the model fields of PlanInputs from a GGUF file's header, without loading weights:
// parameters, quantization, exact tensor bytes, layers, KV heads, head size and the context
// the model was trained with.

#include <string>

#include "common/result.h"
#include "planning/plan_inputs.h"

namespace tandem::planning {

// Errors: kNotFound (missing or unreadable file), kInvalidModel (not a GGUF, truncated, or
// without the attention geometry the KV cache estimate needs; the message names the key).
Status apply_gguf_model(PlanInputs& inputs, const std::string& path);

}  // namespace tandem::planning
