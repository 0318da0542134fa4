#include "planning/estimates.h"

#include <algorithm>
#include <cmath>

#include "planning/quantization.h"
#include "planning/seed_figures.h"

namespace tandem::planning {
namespace {

constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
constexpr double kBytesPerGb = 1e9;  // bandwidth is quoted in decimal gigabytes
constexpr double kSecondsPerDay = 86400;

// What the edge saves a month pays the hardware back; none when it saves nothing.
std::optional<double> months_to_pay_back(double hardware_usd, double monthly_saving_usd) {
  if (monthly_saving_usd <= 0) {
    return std::nullopt;
  }
  return hardware_usd / monthly_saving_usd;
}

}  // namespace

MemoryEstimate estimate_memory(const PlanInputs& inputs) {
  MemoryEstimate memory;
  const double parameters = inputs.params_billions * 1e9;
  const auto type = find_quantization(inputs.quantization);
  if (inputs.exact_weights_bytes) {
    memory.weights_bytes = static_cast<double>(*inputs.exact_weights_bytes);
    memory.bits_per_weight = memory.weights_bytes * 8 / parameters;
  } else {
    // validate_inputs() guarantees one of the two.
    memory.bits_per_weight = inputs.bits_per_weight.value_or(type ? type->bits_per_weight : 16);
    memory.weights_bytes = parameters * memory.bits_per_weight / 8;
  }
  if (inputs.bits_per_weight) {
    memory.nominal_bits = *inputs.bits_per_weight;
  } else {
    memory.nominal_bits = type ? type->nominal_bits : std::floor(memory.bits_per_weight);
  }
  // K and V for every layer: 2 x layers x kv_heads x head_dim elements a token.
  memory.kv_bytes_per_token =
      2.0 * static_cast<double>(inputs.layers) * static_cast<double>(inputs.kv_heads) *
      static_cast<double>(inputs.head_dim) * kv_cache_bytes_per_element(inputs.kv_cache_type);
  // llama.cpp allocates the cache for the whole window when the context is created.
  memory.kv_cache_bytes = memory.kv_bytes_per_token * static_cast<double>(inputs.context_length);
  memory.overhead_bytes = inputs.overhead_gib * kBytesPerGib;
  memory.required_bytes = memory.weights_bytes + memory.kv_cache_bytes + memory.overhead_bytes;
  memory.available_bytes = inputs.memory_gib * kBytesPerGib;
  memory.fits = memory.required_bytes <= memory.available_bytes;
  return memory;
}

SpeedEstimate estimate_speed(const PlanInputs& inputs, const MemoryEstimate& memory) {
  SpeedEstimate speed;
  speed.attended_tokens = inputs.input_tokens + inputs.output_tokens;
  speed.bytes_read_per_token =
      memory.weights_bytes + memory.kv_bytes_per_token * static_cast<double>(speed.attended_tokens);
  speed.decode_tokens_per_s = inputs.bandwidth_efficiency * inputs.memory_bandwidth_gbps *
                              kBytesPerGb / speed.bytes_read_per_token;
  speed.prefill_measured = inputs.prefill_tokens_per_s.has_value();
  speed.prefill_tokens_per_s = inputs.prefill_tokens_per_s.value_or(speed.decode_tokens_per_s *
                                                                    seeds::kPrefillToDecodeRatio);

  const double input_tokens = static_cast<double>(inputs.input_tokens);
  const double output_tokens = static_cast<double>(inputs.output_tokens);
  speed.edge_first_token_ms = 1000 * input_tokens / speed.prefill_tokens_per_s;
  speed.edge_answer_ms =
      speed.edge_first_token_ms + 1000 * output_tokens / speed.decode_tokens_per_s;
  const double cloud_generation_ms = 1000 * output_tokens / inputs.cloud_tokens_per_s;
  speed.cloud_first_token_min_ms = inputs.cloud_first_token_min_ms;
  speed.cloud_first_token_max_ms = inputs.cloud_first_token_max_ms;
  speed.cloud_answer_min_ms = inputs.cloud_first_token_min_ms + cloud_generation_ms;
  speed.cloud_answer_max_ms = inputs.cloud_first_token_max_ms + cloud_generation_ms;

  speed.edge_busy_share = inputs.requests_per_day * (speed.edge_answer_ms / 1000) / kSecondsPerDay;
  // Absurd inputs (a huge model at a huge volume) must not overflow the count; past 1e15
  // devices the plan is no less absurd.
  speed.edge_devices_needed =
      static_cast<uint64_t>(std::clamp(std::ceil(speed.edge_busy_share), 1.0, 1e15));
  return speed;
}

CostEstimate estimate_cost(const PlanInputs& inputs, const SpeedEstimate& speed) {
  CostEstimate cost;
  cost.cloud_usd_per_request =
      (static_cast<double>(inputs.input_tokens) * inputs.cloud_input_usd_per_million +
       static_cast<double>(inputs.output_tokens) * inputs.cloud_output_usd_per_million) /
      1e6;
  cost.cloud_monthly_usd = inputs.requests_per_day * kDaysPerMonth * cost.cloud_usd_per_request;
  const double devices = static_cast<double>(speed.edge_devices_needed);
  cost.hardware_usd = inputs.hardware_usd * devices;
  cost.edge_monthly_usd = inputs.edge_monthly_usd * devices;
  cost.monthly_saving_usd = cost.cloud_monthly_usd - cost.edge_monthly_usd;
  cost.break_even_months = months_to_pay_back(cost.hardware_usd, cost.monthly_saving_usd);
  cost.edge_monthly_amortized_usd =
      cost.hardware_usd / inputs.amortization_months + cost.edge_monthly_usd;
  // In a hybrid the edge takes its share of the requests (and of the busy time, so the
  // devices above are enough); the cloud bills the rest.
  cost.hybrid_cloud_monthly_usd = (1 - inputs.edge_share) * cost.cloud_monthly_usd;
  cost.hybrid_break_even_months = months_to_pay_back(
      cost.hardware_usd, inputs.edge_share * cost.cloud_monthly_usd - cost.edge_monthly_usd);
  return cost;
}

}  // namespace tandem::planning
