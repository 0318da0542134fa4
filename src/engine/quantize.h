#pragma once
// Derives a quantized model from a full-precision GGUF through llama.cpp's quantizer, so that an
// operator can produce the edge model and measure what it lost (docs/DRIFT.md) with one binary.

#include <string>
#include <vector>

#include "common/progress.h"
#include "common/result.h"
#include "engine/model_identity.h"

namespace tandem::engine {

// The types quantize_model can write, by llama.cpp's names ("Q8_0", "Q4_K_M", ...), from the
// most precise to the least.
std::vector<std::string> quantization_type_names();

struct QuantizeOptions {
  std::string input_path;   // an F32, F16 or BF16 GGUF
  std::string output_path;  // replaced if it exists
  std::string type;         // one of quantization_type_names(), case-insensitive
  int threads = 0;          // 0: one per hardware thread
};

// Writes the quantized model to a temporary file beside `output_path` and renames it into place:
// `output_path` is the old file or the complete new one, never a partial write. Tensors whose
// rows do not fit the type's block size fall back to a wider type, as llama.cpp decides.
// Returns the new file's identity. Reports two phases: one step per tensor quantized (read from
// llama.cpp's log, its only report of progress; so one quantization at a time per process), then
// hashing the written file.
// Errors: kInvalidArgument (unknown type, input already quantized, output is a directory),
// kNotFound (input missing; output directory missing or not writable), kInvalidModel (input is
// not a GGUF, or llama.cpp cannot read its architecture or tensors), kInternal (rename failed).
Result<ModelIdentity> quantize_model(const QuantizeOptions& options,
                                     Progress& progress = no_progress());

}  // namespace tandem::engine
