#pragma once
// Flags that take a number or a word ("--l2 auto|prior-only|X"): the number, if the whole text
// is one.

#include <optional>
#include <stdexcept>
#include <string>

namespace tandem::cli {

inline std::optional<double> parse_number(const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) {
      return value;
    }
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace tandem::cli
