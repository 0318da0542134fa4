#include "routing/task_stand_in.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tandem::routing {
namespace {

// "t.json: stand_in.weights.x: no such feature" (an empty field: the stand-in itself).
Error parse_error(std::string_view source, const std::string& field, const std::string& what) {
  return make_error(
      ErrorCode::kInvalidArgument,
      std::string(source) + ": stand_in" + (field.empty() ? "" : "." + field) + ": " + what);
}

Result<double> finite_field(const nlohmann::json& object, const char* name,
                            std::string_view source) {
  const auto field = object.find(name);
  if (field == object.end() || !field->is_number() || !std::isfinite(field->get<double>())) {
    return parse_error(source, name, "must be a finite number");
  }
  return field->get<double>();
}

}  // namespace

double TaskStandIn::predict(const std::array<float, kFeatureCount>& values) const {
  double sum = bias;
  for (const auto& [feature, weight] : weights) {
    sum += weight * static_cast<double>(values[feature]);
  }
  return sum;
}

double TaskStandIn::reading(double read_share) const {
  return std::clamp((read_share - chance) / (full - chance), 0.0, 1.0);
}

nlohmann::ordered_json TaskStandIn::to_json() const {
  nlohmann::ordered_json out;
  out["chance"] = chance;
  out["full"] = full;
  out["bias"] = bias;
  nlohmann::ordered_json named = nlohmann::ordered_json::object();
  for (const auto& [feature, weight] : weights) {
    named[std::string(feature_names()[feature])] = weight;
  }
  out["weights"] = std::move(named);
  return out;
}

Result<TaskStandIn> TaskStandIn::parse(const nlohmann::json& value, std::string_view source) {
  if (!value.is_object()) {
    return parse_error(source, "", "must be an object {chance, full, bias, weights}");
  }
  TaskStandIn out;
  auto chance = finite_field(value, "chance", source);
  auto full = finite_field(value, "full", source);
  auto bias = finite_field(value, "bias", source);
  for (const auto* field : {&chance, &full, &bias}) {
    if (!*field) {
      return field->error();
    }
  }
  out.chance = chance.value();
  out.full = full.value();
  out.bias = bias.value();
  if (!(out.chance >= 0 && out.chance < out.full && out.full <= 1)) {
    return parse_error(source, "chance", "must satisfy 0 <= chance < full <= 1");
  }
  const auto weights = value.find("weights");
  if (weights == value.end() || !weights->is_object()) {
    return parse_error(source, "weights", "must be an object {feature: weight}");
  }
  for (const auto& [name, weight] : weights->items()) {
    const size_t feature = feature_index(name);
    if (feature == kFeatureCount) {
      return parse_error(source, "weights." + name, "no such feature");
    }
    if (!weight.is_number() || !std::isfinite(weight.get<double>())) {
      return parse_error(source, "weights." + name, "must be a finite number");
    }
    out.weights.emplace_back(static_cast<uint8_t>(feature), weight.get<double>());
  }
  return out;
}

}  // namespace tandem::routing
