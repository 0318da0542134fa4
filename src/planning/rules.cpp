#include "planning/rules.h"

#include "planning/format.h"
#include "planning/seed_figures.h"

namespace tandem::planning {
namespace {

using seeds::Citation;

std::string fixed(double value, int decimals) {
  return format_fixed(value, decimals);
}
std::string ms(double value) {
  return format_ms(value);
}
std::string bytes(double value) {
  return format_bytes(value);
}
std::string usd(double value) {
  return format_usd(value);
}
std::string percent(double share) {
  return format_percent(share);
}

std::string cite(const Citation& citation) {
  return std::string(citation.seed) + ": \"" + citation.text + "\"";
}

Reason reason(const char* factor, const char* code, Lean lean, std::string text,
              const Citation& source) {
  Reason r;
  r.factor = factor;
  r.code = code;
  r.lean = lean;
  r.text = std::move(text);
  r.source = cite(source);
  return r;
}

Reason first_token(const PlanInputs& in, const SpeedEstimate& speed) {
  if (!in.first_token_ms) {
    return reason("first_token", "first_token.no_target", Lean::kNeutral,
                  "no first-token target; the edge needs " + ms(speed.edge_first_token_ms) +
                      ", the cloud " + ms(speed.cloud_first_token_min_ms) + "-" +
                      ms(speed.cloud_first_token_max_ms),
                  seeds::kCloudRoundTrip);
  }
  const double target = *in.first_token_ms;
  const bool edge_meets = speed.edge_first_token_ms <= target;
  const bool cloud_at_best = speed.cloud_first_token_min_ms <= target;
  const bool cloud_at_worst = speed.cloud_first_token_max_ms <= target;
  const std::string numbers = "target " + ms(target) + "; edge " + ms(speed.edge_first_token_ms) +
                              " (prefill of " + std::to_string(in.input_tokens) +
                              " tokens), cloud " + ms(speed.cloud_first_token_min_ms) + "-" +
                              ms(speed.cloud_first_token_max_ms);
  if (!edge_meets && !cloud_at_best) {
    Reason r =
        reason("first_token", "first_token.unreachable", Lean::kNeutral,
               "neither tier meets the first-token target: " + numbers, seeds::kCloudRoundTrip);
    r.blocking = true;
    return r;
  }
  if (edge_meets && !cloud_at_best) {
    return reason("first_token", "first_token.below_cloud_round_trip", Lean::kEdgeRequired,
                  "only the edge meets the first-token target, which is below the cloud's "
                  "round trip: " +
                      numbers,
                  seeds::kCloudRoundTrip);
  }
  if (edge_meets && !cloud_at_worst) {
    return reason(
        "first_token", "first_token.cloud_may_miss", Lean::kEdge,
        "the cloud misses the first-token target at its worst, the edge meets it: " + numbers,
        seeds::kLatencyThresholds);
  }
  if (edge_meets) {
    return reason("first_token", "first_token.both_meet", Lean::kNeutral,
                  "both tiers meet the first-token target: " + numbers,
                  seeds::kCloudLatencyAcceptable);
  }
  return reason("first_token", "first_token.edge_too_slow", Lean::kCloud,
                "the edge's prompt processing misses the first-token target, the cloud meets "
                "it: " +
                    numbers,
                seeds::kCloudLatencyAcceptable);
}

Reason answer_time(const PlanInputs& in, const SpeedEstimate& speed) {
  const std::string numbers = "edge " + ms(speed.edge_answer_ms) + ", cloud " +
                              ms(speed.cloud_answer_min_ms) + "-" + ms(speed.cloud_answer_max_ms) +
                              " for " + std::to_string(in.output_tokens) + " output tokens";
  if (!in.answer_ms) {
    return reason("answer_time", "answer_time.no_target", Lean::kNeutral,
                  "no answer-time target; " + numbers, seeds::kBandwidthBound);
  }
  const double target = *in.answer_ms;
  const bool edge_meets = speed.edge_answer_ms <= target;
  const bool cloud_meets = speed.cloud_answer_max_ms <= target;
  const std::string detail = "target " + ms(target) + "; " + numbers;
  if (edge_meets && cloud_meets) {
    return reason("answer_time", "answer_time.both_meet", Lean::kNeutral,
                  "both tiers meet the answer-time target: " + detail, seeds::kBandwidthBound);
  }
  if (edge_meets) {
    return reason("answer_time", "answer_time.cloud_too_slow", Lean::kEdge,
                  "only the edge meets the answer-time target at the cloud's worst: " + detail,
                  seeds::kCloudRoundTrip);
  }
  if (speed.cloud_answer_min_ms <= target) {
    return reason("answer_time", "answer_time.edge_too_slow", Lean::kCloud,
                  "the edge decodes too slowly for the answer-time target: " + detail,
                  seeds::kBandwidthBound);
  }
  Reason r = reason("answer_time", "answer_time.unreachable", Lean::kNeutral,
                    "neither tier meets the answer-time target: " + detail, seeds::kBandwidthBound);
  r.blocking = true;
  return r;
}

// Tasks whose output a person reads as it streams; classification or extraction feeds a program.
bool read_as_it_streams(TaskType task) {
  return task != TaskType::kClassification && task != TaskType::kExtraction &&
         task != TaskType::kFormatting;
}

Reason decode_speed(const PlanInputs& in, const SpeedEstimate& speed) {
  const std::string numbers = fixed(speed.decode_tokens_per_s, 1) +
                              " tokens/s = " + fixed(in.bandwidth_efficiency, 2) + " x " +
                              fixed(in.memory_bandwidth_gbps, 0) + " GB/s / " +
                              bytes(speed.bytes_read_per_token) + " read per token";
  if (speed.decode_tokens_per_s >= seeds::kInstantTokensPerS) {
    return reason("decode_speed", "decode_speed.instant", Lean::kNeutral,
                  "the edge decodes fast enough to feel instant: " + numbers, seeds::kInstant);
  }
  if (speed.decode_tokens_per_s >= seeds::kConversationalTokensPerS) {
    return reason("decode_speed", "decode_speed.conversational", Lean::kNeutral,
                  "the edge decodes at a conversational pace: " + numbers, seeds::kConversational);
  }
  if (!read_as_it_streams(in.task)) {
    return reason("decode_speed", "decode_speed.slow_but_not_read_live", Lean::kNeutral,
                  "the edge decodes below a conversational pace, but nobody reads a " +
                      std::string(task_name(in.task)) + " answer as it streams: " + numbers,
                  seeds::kConversational);
  }
  return reason("decode_speed", "decode_speed.below_conversational", Lean::kCloud,
                "the edge decodes below a conversational pace (" +
                    fixed(seeds::kConversationalTokensPerS, 0) + " tokens/s): " + numbers,
                seeds::kConversational);
}

Reason memory_fit(const PlanInputs& in, const MemoryEstimate& memory) {
  const std::string numbers =
      bytes(memory.required_bytes) + " needed (weights " + bytes(memory.weights_bytes) +
      " + KV cache " + bytes(memory.kv_cache_bytes) + " at " + std::to_string(in.context_length) +
      " tokens + overhead " + bytes(memory.overhead_bytes) + ") of " +
      bytes(memory.available_bytes);
  if (memory.fits) {
    return reason("memory", "memory.fits", Lean::kNeutral, "the model fits: " + numbers,
                  seeds::kMemory);
  }
  return reason("memory", "memory.does_not_fit", Lean::kEdgeImpossible,
                "the model does not fit the device: " + numbers + ", short by " +
                    bytes(memory.required_bytes - memory.available_bytes),
                seeds::kMemory);
}

Reason privacy(const PlanInputs& in) {
  switch (in.sensitivity) {
    case Sensitivity::kRegulated:
      return reason("privacy", "privacy.regulated", Lean::kEdgeRequired,
                    "regulated data must not leave the device", seeds::kRegulated);
    case Sensitivity::kConfidential:
      return reason("privacy", "privacy.sensitive", Lean::kEdge,
                    "confidential data: keeping it on the device removes the leak risk",
                    seeds::kSensitive);
    case Sensitivity::kPublic:
    case Sensitivity::kInternal:
      break;
  }
  return reason("privacy", "privacy.cloud_allowed", Lean::kNeutral,
                std::string(sensitivity_name(in.sensitivity)) + " data may be sent to the cloud",
                seeds::kSensitive);
}

Reason connectivity(const PlanInputs& in) {
  switch (in.connectivity) {
    case Connectivity::kOffline:
      return reason("connectivity", "connectivity.offline", Lean::kEdgeRequired,
                    "the device works without a network", seeds::kOffline);
    case Connectivity::kIntermittent:
      return reason("connectivity", "connectivity.intermittent", Lean::kEdge,
                    "the device is often offline: the edge keeps answering", seeds::kIntermittent);
    case Connectivity::kOnline:
      break;
  }
  return reason("connectivity", "connectivity.online", Lean::kNeutral,
                "the device can count on the network", seeds::kIntermittent);
}

Reason utilization(const PlanInputs& in) {
  if (!in.utilization) {
    return reason("utilization", "utilization.unknown", Lean::kNeutral,
                  "utilization not given; the factor is skipped", seeds::kUtilization);
  }
  const std::string numbers =
      percent(*in.utilization) + " (threshold " + percent(seeds::kHighUtilization) + ")";
  if (*in.utilization < seeds::kHighUtilization) {
    return reason("utilization", "utilization.low", Lean::kEdge,
                  "low utilization: provisioned cloud capacity would sit idle, edge hardware "
                  "has no idle cost: " +
                      numbers,
                  seeds::kUtilization);
  }
  return reason("utilization", "utilization.high", Lean::kNeutral,
                "high utilization: cloud capacity is amortised, cost decides: " + numbers,
                seeds::kUtilization);
}

Reason task(const PlanInputs& in) {
  const std::string name = task_name(in.task);
  switch (task_quality_risk(in.task)) {
    case QualityRisk::kLow:
      return reason("task", "task.edge_capable", Lean::kNeutral,
                    name + ": low quality risk on a small quantized model", seeds::kEdgeTasks);
    case QualityRisk::kMedium:
      return reason("task", "task.mixed_difficulty", Lean::kHybrid,
                    name +
                        ": medium quality risk; simple requests suit the edge, complex ones "
                        "need a frontier model",
                    seeds::kCodeTasks);
    case QualityRisk::kHigh:
      break;
  }
  if (in.params_billions >= seeds::kFrontierParamsBillions) {
    return reason("task", "task.frontier_size_on_edge", Lean::kNeutral,
                  name + ": high quality risk, but the edge model has " +
                      fixed(in.params_billions, 0) + "B parameters (at least " +
                      fixed(seeds::kFrontierParamsBillions, 0) + "B)",
                  seeds::kFrontierSize);
  }
  return reason("task", "task.needs_frontier_model", Lean::kCloud,
                name + ": high quality risk; it needs a model of " +
                    fixed(seeds::kFrontierParamsBillions, 0) + "B+ parameters, the edge has " +
                    fixed(in.params_billions, in.params_billions < 1 ? 3 : 1) + "B",
                seeds::kCloudTasks);
}

Reason quantization(const PlanInputs& in, const MemoryEstimate& memory) {
  const std::string numbers = fixed(in.params_billions, in.params_billions < 1 ? 3 : 1) + "B at " +
                              in.quantization + " (" + fixed(memory.nominal_bits, 1) +
                              " nominal bits, " + fixed(memory.bits_per_weight, 2) +
                              " bits per weight)";
  if (in.params_billions < seeds::kSmallModelParamsBillions &&
      memory.nominal_bits < seeds::kMinNominalBitsForSmallModels) {
    return reason(
        "quantization", "quantization.too_aggressive", Lean::kHybrid,
        "a model under 3B parameters quantized below 4 bits loses accuracy fast: " + numbers,
        seeds::kSmallModelQuantization);
  }
  return reason("quantization", "quantization.ok", Lean::kNeutral,
                "the quantization costs little quality: " + numbers, seeds::kQuantizationIsCheap);
}

Reason cost(const PlanInputs& in, const CostEstimate& estimate) {
  const std::string numbers = "cloud " + usd(estimate.cloud_monthly_usd) +
                              "/month; edge hardware " + usd(estimate.hardware_usd) + " + " +
                              usd(estimate.edge_monthly_usd) + "/month";
  if (!estimate.break_even_months) {
    return reason("cost", "cost.cloud_cheaper", Lean::kCloud,
                  "the edge never pays back, its running costs exceed the cloud's bill: " + numbers,
                  seeds::kLowVolume);
  }
  const double months = *estimate.break_even_months;
  if (estimate.hardware_usd == 0) {
    return reason("cost", "cost.hardware_owned", Lean::kEdge,
                  "no hardware to buy, the edge saves " + usd(estimate.monthly_saving_usd) +
                      "/month: " + numbers,
                  seeds::kOwnedHardware);
  }
  const std::string pays_back = "pays back in " + fixed(months, months < 10 ? 2 : 1) + " months";
  if (months <= seeds::kFastBreakEvenMonths) {
    return reason("cost", "cost.pays_back_fast", Lean::kEdge,
                  "the hardware " + pays_back + " (at most " +
                      fixed(seeds::kFastBreakEvenMonths, 0) + "): " + numbers,
                  seeds::kFastBreakEven);
  }
  if (months <= in.amortization_months) {
    return reason("cost", "cost.pays_back_within_life", Lean::kEdge,
                  "the hardware " + pays_back + ", within its " + fixed(in.amortization_months, 0) +
                      "-month life: " + numbers,
                  seeds::kFastBreakEven);
  }
  return reason("cost", "cost.pays_back_after_life", Lean::kCloud,
                "the hardware " + pays_back + ", after its " + fixed(in.amortization_months, 0) +
                    "-month life: " + numbers,
                seeds::kLowVolume);
}

Reason capacity(const SpeedEstimate& speed) {
  const std::string busy = "one device answering one request at a time is busy " +
                           percent(speed.edge_busy_share) + " of the day";
  if (speed.edge_devices_needed <= 1) {
    return reason("capacity", "capacity.one_device", Lean::kNeutral, busy, seeds::kBandwidthBound);
  }
  return reason("capacity", "capacity.more_devices", Lean::kNeutral,
                busy + ": the volume needs " + std::to_string(speed.edge_devices_needed) +
                    " devices (or batching); hardware and operations are counted for all",
                seeds::kBandwidthBound);
}

}  // namespace

const char* lean_name(Lean lean) {
  switch (lean) {
    case Lean::kEdgeRequired:
      return "edge_required";
    case Lean::kEdge:
      return "edge";
    case Lean::kNeutral:
      return "neutral";
    case Lean::kHybrid:
      return "hybrid";
    case Lean::kCloud:
      return "cloud";
    case Lean::kEdgeImpossible:
      return "edge_impossible";
  }
  return "unknown";
}

std::vector<Reason> evaluate_factors(const PlanInputs& inputs, const MemoryEstimate& memory,
                                     const SpeedEstimate& speed,
                                     const CostEstimate& cost_estimate) {
  return {
      first_token(inputs, speed),
      answer_time(inputs, speed),
      decode_speed(inputs, speed),
      memory_fit(inputs, memory),
      privacy(inputs),
      connectivity(inputs),
      utilization(inputs),
      task(inputs),
      quantization(inputs, memory),
      cost(inputs, cost_estimate),
      capacity(speed),
  };
}

}  // namespace tandem::planning
