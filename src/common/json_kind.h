#pragma once
// What a JSON value is, in words, for an error message about a field of the wrong type
// ("null", "a fraction", "a number", "a string", "an array", ...).

#include <nlohmann/json.hpp>
#include <string>

namespace tandem {

inline std::string json_kind(const nlohmann::json& value) {
  if (value.is_null()) {
    return "null";
  }
  if (value.is_number_float()) {
    return "a fraction";
  }
  if (value.is_number()) {
    return "a number";
  }
  const std::string name = value.type_name();
  return (name == "array" || name == "object" ? "an " : "a ") + name;
}

}  // namespace tandem
