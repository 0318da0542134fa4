#include "planning/plan_json.h"

#include <cmath>

#include "planning/input_fields.h"

namespace tandem::planning {
namespace {

using Json = nlohmann::ordered_json;

// Integers while they fit in one (every real device); beyond, the double itself.
Json bytes(double value) {
  if (value < 9.0e18) {
    return static_cast<uint64_t>(std::llround(value));
  }
  return value;
}

Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json reason_to_json(const Reason& reason) {
  Json out;
  out["factor"] = reason.factor;
  out["code"] = reason.code;
  out["lean"] = lean_name(reason.lean);
  out["text"] = reason.text;
  out["source"] = reason.source;
  out["blocking"] = reason.blocking;
  return out;
}

Json memory_to_json(const PlanInputs& inputs, const MemoryEstimate& memory) {
  Json out;
  out["bits_per_weight"] = memory.bits_per_weight;
  out["nominal_bits"] = memory.nominal_bits;
  out["weights_bytes"] = bytes(memory.weights_bytes);
  out["weights_exact"] = inputs.exact_weights_bytes.has_value();
  out["kv_bytes_per_token"] = bytes(memory.kv_bytes_per_token);
  out["kv_cache_bytes"] = bytes(memory.kv_cache_bytes);
  out["overhead_bytes"] = bytes(memory.overhead_bytes);
  out["required_bytes"] = bytes(memory.required_bytes);
  out["available_bytes"] = bytes(memory.available_bytes);
  out["fits"] = memory.fits;
  return out;
}

Json speed_to_json(const SpeedEstimate& speed) {
  Json out;
  out["attended_tokens"] = speed.attended_tokens;
  out["bytes_read_per_token"] = bytes(speed.bytes_read_per_token);
  out["decode_tokens_per_s"] = speed.decode_tokens_per_s;
  out["prefill_tokens_per_s"] = speed.prefill_tokens_per_s;
  out["prefill_source"] = speed.prefill_measured ? "given" : "69 x decode (seed 001)";
  out["edge_first_token_ms"] = speed.edge_first_token_ms;
  out["edge_answer_ms"] = speed.edge_answer_ms;
  out["cloud_first_token_ms"] = {speed.cloud_first_token_min_ms, speed.cloud_first_token_max_ms};
  out["cloud_answer_ms"] = {speed.cloud_answer_min_ms, speed.cloud_answer_max_ms};
  out["edge_busy_share"] = speed.edge_busy_share;
  out["edge_devices_needed"] = speed.edge_devices_needed;
  return out;
}

Json cost_to_json(const CostEstimate& cost, double amortization_months) {
  Json out;
  out["cloud_usd_per_request"] = cost.cloud_usd_per_request;
  out["cloud_monthly_usd"] = cost.cloud_monthly_usd;
  out["hardware_usd"] = cost.hardware_usd;
  out["edge_monthly_usd"] = cost.edge_monthly_usd;
  out["monthly_saving_usd"] = cost.monthly_saving_usd;
  out["break_even_months"] = optional_number(cost.break_even_months);
  out["pays_back_within_life"] =
      cost.break_even_months.has_value() && *cost.break_even_months <= amortization_months;
  out["edge_monthly_amortized_usd"] = cost.edge_monthly_amortized_usd;
  out["hybrid_cloud_monthly_usd"] = cost.hybrid_cloud_monthly_usd;
  out["hybrid_break_even_months"] = optional_number(cost.hybrid_break_even_months);
  return out;
}

}  // namespace

Json inputs_to_json(const PlanInputs& inputs) {
  Json out;
  out["model_name"] = inputs.model_name.empty() ? Json(nullptr) : Json(inputs.model_name);
  out["model_file"] = inputs.model_file.empty() ? Json(nullptr) : Json(inputs.model_file);
  for (const auto& field : input_fields()) {
    const InputValue value = field.get(inputs);
    if (const auto* number = std::get_if<double>(&value)) {
      // Whole numbers as integers: token counts read as 500, not 500.0.
      if (*number == std::floor(*number) && std::fabs(*number) < 9007199254740992.0) {
        out[field.key] = static_cast<int64_t>(*number);
      } else {
        out[field.key] = *number;
      }
    } else if (const auto* name = std::get_if<std::string>(&value)) {
      out[field.key] = *name;
    } else {
      out[field.key] = nullptr;
    }
  }
  return out;
}

Json plan_to_json(const Plan& plan) {
  Json out;
  out["verdict"] = verdict_name(plan.verdict);
  out["feasible"] = plan.feasible();
  out["decision"] = {
      {"code", plan.decision.code}, {"text", plan.decision.text}, {"source", plan.decision.source}};
  out["recommendation"] = plan.recommendation;
  out["blockers"] = plan.blockers;
  out["reasons"] = Json::array();
  for (const auto& reason : plan.factors) {
    out["reasons"].push_back(reason_to_json(reason));
  }
  out["memory"] = memory_to_json(plan.inputs, plan.memory);
  out["speed"] = speed_to_json(plan.speed);
  out["cost"] = cost_to_json(plan.cost, plan.inputs.amortization_months);
  out["inputs"] = inputs_to_json(plan.inputs);
  return out;
}

}  // namespace tandem::planning
