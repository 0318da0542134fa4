#pragma once
// The numbers behind a plan: memory, decode speed, latency, capacity and cost. Pure
// arithmetic over validated inputs; every formula is written out in docs/PLANNING.md.

#include <cstdint>
#include <optional>

#include "planning/plan_inputs.h"

namespace tandem::planning {

struct MemoryEstimate {
  double bits_per_weight = 0;  // effective: exact bytes x 8 / parameters when read from a GGUF
  double nominal_bits = 0;     // the format's class, for the small-model quantization rule
  double weights_bytes = 0;
  double kv_bytes_per_token = 0;  // K and V, all layers, one token
  double kv_cache_bytes = 0;      // at the full context window
  double overhead_bytes = 0;
  double required_bytes = 0;  // weights + KV cache + overhead
  double available_bytes = 0;
  bool fits = false;
};

struct SpeedEstimate {
  // Decoding reads every weight once per token plus the KV cache of the tokens attended to;
  // the last token of an answer attends to the whole request, the slowest point.
  uint64_t attended_tokens = 0;
  double bytes_read_per_token = 0;
  double decode_tokens_per_s = 0;
  double prefill_tokens_per_s = 0;
  bool prefill_measured = false;  // given by the user, not derived from the decode rate
  double edge_first_token_ms = 0;
  double edge_answer_ms = 0;
  double cloud_first_token_min_ms = 0;
  double cloud_first_token_max_ms = 0;
  double cloud_answer_min_ms = 0;
  double cloud_answer_max_ms = 0;
  // Share of a day one device spends answering the volume, one request at a time. Above 1 one
  // device cannot keep up; batching (llama.cpp serves several sequences per weight read) makes
  // this an upper bound.
  double edge_busy_share = 0;
  uint64_t edge_devices_needed = 1;
};

struct CostEstimate {
  double cloud_usd_per_request = 0;
  double cloud_monthly_usd = 0;             // every request in the cloud
  double hardware_usd = 0;                  // all devices needed
  double edge_monthly_usd = 0;              // power and operations of all devices
  double monthly_saving_usd = 0;            // cloud - edge operations
  std::optional<double> break_even_months;  // none: the edge never pays back
  double edge_monthly_amortized_usd = 0;    // hardware over its life + operations
  // Hybrid: the edge serves edge_share of requests, the cloud the rest.
  double hybrid_cloud_monthly_usd = 0;
  std::optional<double> hybrid_break_even_months;
};

inline constexpr double kDaysPerMonth = 365.0 / 12.0;

MemoryEstimate estimate_memory(const PlanInputs& inputs);
SpeedEstimate estimate_speed(const PlanInputs& inputs, const MemoryEstimate& memory);
CostEstimate estimate_cost(const PlanInputs& inputs, const SpeedEstimate& speed);

}  // namespace tandem::planning
