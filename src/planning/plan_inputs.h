#pragma once
// What `tandem plan` decides from: the workload, the model, the device, the cloud's prices and
// the hardware's cost. Every default is written next to its field and justified in
// docs/PLANNING.md (the seed figure it comes from, or "assumption" where the seeds are silent).
//
// Units are those of spec sheets: memory in GiB (what "24 GB VRAM" means), bandwidth in GB/s
// (10^9 bytes per second), parameters in billions, prices in US dollars.

#include <cstdint>
#include <optional>
#include <string>

#include "planning/seed_figures.h"

namespace tandem::planning {

// How sensitive the data in the prompts is. The rule for each is in rules.cpp.
enum class Sensitivity {
  // Anything may be sent anywhere.
  kPublic,
  // Company-internal, covered by the cloud provider's contract: no constraint on placement.
  kInternal,
  // Personal or confidential data, not strictly regulated: leans to the edge (seed 001).
  kConfidential,
  // Medical, biometric, protected financial data (GDPR, HIPAA...): must stay on the device.
  kRegulated,
};

// The kind of work the model does; each maps to the quality risk of a small quantized model.
enum class TaskType {
  kClassification,
  kExtraction,
  kFormatting,
  kSimpleQa,
  kChat,
  kSummarization,
  kAutocomplete,  // code or text completion
  kCode,          // code generation beyond completion
  kReasoning,     // multi-step reasoning and planning
  kCreative,      // nuanced creative writing
  kLongContext,   // synthesis over long documents
};

// How likely a quantized small model is to fall short on a task type (see rules.cpp).
enum class QualityRisk {
  kLow,     // the seeds list the task as one small models handle well
  kMedium,  // fine when simple, needs a frontier model when complex
  kHigh,    // the seeds send it to the cloud
};

// Whether the device can count on reaching the cloud.
enum class Connectivity {
  kOnline,        // reliable network
  kIntermittent,  // often offline or on a poor link (seed 000)
  kOffline,       // the main use case has no network at all (seed 001)
};

// Element type of the KV cache; llama.cpp's default is F16.
enum class KvCacheType { kF16, kQ8_0, kQ4_0 };

struct PlanInputs {
  // --- workload ---
  std::optional<double> first_token_ms;  // latency target for the first token; none: no target
  std::optional<double> answer_ms;       // latency target for the whole answer; none: no target
  double requests_per_day = 1000;        // assumption: a small product's daily traffic
  uint64_t input_tokens = 500;           // prompt tokens per request (assumption)
  uint64_t output_tokens = 200;          // generated tokens per request (assumption)
  // Share of the provisioned capacity the traffic keeps busy, in (0, 1]; none: not known, the
  // factor is skipped. Steady traffic is high; background, occasional or user-triggered is low.
  std::optional<double> utilization;
  Sensitivity sensitivity = Sensitivity::kInternal;
  TaskType task = TaskType::kChat;
  Connectivity connectivity = Connectivity::kOnline;
  // Share of requests the edge serves in a hybrid deployment (seed 000: 60% or more).
  double edge_share = seeds::kHybridEdgeShare;

  // --- model ---
  std::string model_name;  // for people only: the GGUF's name; empty: described by the fields
  std::string model_file;  // the GGUF the model fields came from, if any
  double params_billions = 7;
  std::string quantization = "Q4_K_M";  // seed 000: "Q4_K_M ... the pragmatic default"
  // Set: overrides the quantization's bits per weight (and the quality rule's nominal bits).
  std::optional<double> bits_per_weight;
  // Set when read from a GGUF file: the exact bytes of all tensors. Cleared when the user
  // changes the parameters or the quantization afterwards.
  std::optional<uint64_t> exact_weights_bytes;
  uint64_t context_length = 4096;  // the context window the runtime allocates
  uint64_t layers = 32;            // Mistral 7B's geometry (assumption, not from the seeds)
  uint64_t kv_heads = 8;
  uint64_t head_dim = 128;
  KvCacheType kv_cache_type = KvCacheType::kF16;

  // --- device ---
  double memory_gib = 16;              // memory the model may use (seed 003: 16 GB MacBook)
  double memory_bandwidth_gbps = 100;  // assumption: a laptop (seed 001: phones 50-90 GB/s)
  double bandwidth_efficiency = seeds::kBandwidthEfficiency;  // seed 003 (see there)
  std::optional<double> prefill_tokens_per_s;  // none: 69 x the decode rate (seed 001)
  double overhead_gib = 0.5;                   // runtime buffers, graph, activations (assumption)

  // --- cloud ---
  double cloud_input_usd_per_million = seeds::kDefaultCloudPricePerMillion;  // seed 003
  double cloud_output_usd_per_million = seeds::kDefaultCloudPricePerMillion;
  double cloud_first_token_min_ms = seeds::kCloudFirstTokenMinMs;  // the round trip (seeds)
  double cloud_first_token_max_ms = seeds::kCloudFirstTokenMaxMs;
  double cloud_tokens_per_s = 100;  // assumption: a cloud API's streaming rate per answer

  // --- edge costs ---
  double hardware_usd = 0;          // 0: the device is already owned (seed 000)
  double edge_monthly_usd = 0;      // power and operations per device per month
  double amortization_months = 36;  // the hardware's useful life (assumption: 3 years)
};

// Stable lower-case names, used in flags, files and JSON.
const char* sensitivity_name(Sensitivity value);
const char* task_name(TaskType value);
const char* quality_risk_name(QualityRisk value);
const char* connectivity_name(Connectivity value);
const char* kv_cache_type_name(KvCacheType value);

std::optional<Sensitivity> parse_sensitivity(const std::string& name);
std::optional<TaskType> parse_task(const std::string& name);
std::optional<Connectivity> parse_connectivity(const std::string& name);
std::optional<KvCacheType> parse_kv_cache_type(const std::string& name);

// The quality risk of a task type on a small quantized model; the seed sentences behind each
// are next to the table in plan_inputs.cpp and in docs/PLANNING.md.
QualityRisk task_quality_risk(TaskType task);

// "classification, extraction, ..." for error messages.
std::string task_names();
std::string sensitivity_names();
std::string connectivity_names();
std::string kv_cache_type_names();

// Bytes per element of the KV cache type (F16 2, Q8_0 34/32, Q4_0 18/32).
double kv_cache_bytes_per_element(KvCacheType value);

}  // namespace tandem::planning
