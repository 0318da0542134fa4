#pragma once
// GGUF quantization types as the planner sees them: how many bits a weight costs on average in
// a whole file (what the memory and bandwidth figures need) and the nominal bit width of the
// format (what seed 000's "do not quantize below Q4 under 3B parameters" is about).

#include <optional>
#include <string>

namespace tandem::planning {

struct QuantizationType {
  const char* name;        // llama.cpp's name, e.g. "Q4_K_M"
  double bits_per_weight;  // average over a whole file, embeddings and output included
  double nominal_bits;     // the format's class: 4 for every Q4_*, 3 for Q3_K_M, ...
};

// Looks a type up by name, case-insensitively; accepts llama.cpp's aliases (Q4_K = Q4_K_M) and
// the names llama.cpp gives a GGUF file's type ("Q4_K - Medium", "all F32", "IQ4_XS - 4.25 bpw").
std::optional<QuantizationType> find_quantization(const std::string& name);

// "F32, F16, BF16, Q8_0, ..." for error messages and help.
std::string quantization_names();

}  // namespace tandem::planning
