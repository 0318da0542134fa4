#include "planning/quantization.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace tandem::planning {
namespace {

// Bits per weight of the whole file. For the classic and K-quant types they are llama.cpp's
// own measurements (tools/quantize/quantize.cpp: "Q4_K_M 4.58G @ Llama-3-8B", 8.03B
// parameters, so 4.58 GiB x 8 / 8.03e9 = 4.90 bits): the figure includes the output and
// embedding tensors that llama.cpp keeps at a higher precision, so a whole file costs more
// than its block format alone (Q4_0 blocks are 4.5 bits, a Q4_0 file 4.64). The seeds agree:
// "a Q4_K_M 7B model takes about 4GB" (003: 7e9 x 4.90 / 8 = 4.0 GiB) and "Llama 2 13B drops
// to 7.9GB at Q4_K_M" (003: 13e9 x 4.90 / 8 = 7.96 GB). IQ types carry the bpw llama.cpp
// states for them; floating-point types are exact.
constexpr std::array<QuantizationType, 31> kTypes = {{
    {"F32", 32.0, 32},   {"F16", 16.0, 16},    {"BF16", 16.0, 16},  {"Q8_0", 8.52, 8},
    {"Q6_K", 6.57, 6},   {"Q5_K_M", 5.70, 5},  {"Q5_K_S", 5.57, 5}, {"Q5_1", 6.04, 5},
    {"Q5_0", 5.57, 5},   {"Q4_K_M", 4.90, 4},  {"Q4_K_S", 4.67, 4}, {"Q4_1", 5.11, 4},
    {"Q4_0", 4.64, 4},   {"IQ4_NL", 4.50, 4},  {"IQ4_XS", 4.25, 4}, {"Q3_K_L", 4.31, 3},
    {"Q3_K_M", 4.00, 3}, {"Q3_K_S", 3.65, 3},  {"IQ3_M", 3.66, 3},  {"IQ3_S", 3.44, 3},
    {"IQ3_XS", 3.30, 3}, {"IQ3_XXS", 3.06, 3}, {"Q2_K", 3.17, 2},   {"Q2_K_S", 3.17, 2},
    {"IQ2_M", 2.70, 2},  {"IQ2_S", 2.50, 2},   {"IQ2_XS", 2.31, 2}, {"IQ2_XXS", 2.06, 2},
    {"IQ1_M", 1.75, 1},  {"IQ1_S", 1.56, 1},   {"TQ1_0", 1.69, 1},
}};

struct Alias {
  const char* alias;
  const char* name;
};
// llama-quantize's aliases, and the names llama_ftype_name() gives a file's type.
constexpr std::array<Alias, 14> kAliases = {{
    {"Q4_K", "Q4_K_M"},
    {"Q5_K", "Q5_K_M"},
    {"Q3_K", "Q3_K_M"},
    {"ALL F32", "F32"},
    {"Q2_K - MEDIUM", "Q2_K"},
    {"Q2_K - SMALL", "Q2_K_S"},
    {"Q3_K - SMALL", "Q3_K_S"},
    {"Q3_K - MEDIUM", "Q3_K_M"},
    {"Q3_K - LARGE", "Q3_K_L"},
    {"Q4_K - SMALL", "Q4_K_S"},
    {"Q4_K - MEDIUM", "Q4_K_M"},
    {"Q5_K - SMALL", "Q5_K_S"},
    {"Q5_K - MEDIUM", "Q5_K_M"},
    {"IQ3_S MIX - 3.66 BPW", "IQ3_M"},
}};

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

std::optional<QuantizationType> find_exact(const std::string& upper_name) {
  for (const auto& type : kTypes) {
    if (upper_name == type.name) {
      return type;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<QuantizationType> find_quantization(const std::string& name) {
  std::string key = upper(name);
  for (const auto& alias : kAliases) {
    if (key == alias.alias) {
      key = alias.name;
    }
  }
  if (auto type = find_exact(key)) {
    return type;
  }
  // "IQ4_XS - 4.25 bpw", "TQ1_0 - 1.69 bpw ternary": the type is the first word.
  const size_t space = key.find(' ');
  if (space != std::string::npos) {
    return find_exact(key.substr(0, space));
  }
  return std::nullopt;
}

std::string quantization_names() {
  std::string out;
  for (const auto& type : kTypes) {
    out += out.empty() ? "" : ", ";
    out += type.name;
  }
  return out;
}

}  // namespace tandem::planning
