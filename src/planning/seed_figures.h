#pragma once
// Every number the planner's rules use, next to the sentence of the source article it comes
// from (the project's source articles in ../shared/seeds/, translated; docs/PLANNING.md quotes the
// Chinese originals). A rule that cites nothing here is a bug.

namespace tandem::planning::seeds {

struct Citation {
  const char* seed;  // the seed file
  const char* text;  // the sentence, translated
};

inline constexpr const char* kSeed000 = "seed 000 (000_77caab5b84d205c0.txt)";
inline constexpr const char* kSeed001 = "seed 001 (001_7f3e7f40e241d577.txt)";
inline constexpr const char* kSeed003 = "seed 003 (003_2c8b7533fc448047.txt)";

// --- latency ---
inline constexpr double kCloudFirstTokenMinMs = 200;
inline constexpr double kCloudFirstTokenMaxMs = 500;
inline constexpr Citation kCloudRoundTrip = {
    kSeed000, "a cloud round trip adds 200-500ms before the first token is seen"};
inline constexpr double kVoiceFirstTokenMs = 150;
inline constexpr double kChatFirstTokenMs = 500;
inline constexpr Citation kLatencyThresholds = {
    kSeed001,
    "the thresholds that matter in practice: ~150ms for voice AI, 500ms for interactive text "
    "chat; below these, on-device generation is the only reliable option"};
inline constexpr Citation kCloudLatencyAcceptable = {
    kSeed001, "above these numbers, cloud latency becomes acceptable depending on the use case"};

// --- decode speed ---
inline constexpr double kConversationalTokensPerS = 10;
inline constexpr Citation kConversational = {
    kSeed001,
    "Snapdragon 8 Elite generates from a 3B model at about 10 tokens per second - fluent enough "
    "for conversation"};
inline constexpr double kInstantTokensPerS = 50;  // 20 ms per token
inline constexpr Citation kInstant = {
    kSeed000,
    "on-device inference generates each token in under 20ms on short contexts - fast enough "
    "that the model feels instant"};
// 690 prefill tokens/s against ~10 decode tokens/s on the same phone and model class.
inline constexpr double kPrefillToDecodeRatio = 69;
inline constexpr Citation kPrefillRatio = {
    kSeed001,
    "Snapdragon 8 Elite generates from a 3B model at about 10 tokens per second, while the "
    "Hexagon NPU reaches 690 tokens per second in prefill"};
// RTX 4090: 1 TB/s; a 4 GB 7B Q4_K_M model decodes at 80-120 tok/s. The bandwidth bound is
// 1000 / 4 = 250 tok/s; the midpoint 100 tok/s is 40% of it.
inline constexpr double kBandwidthEfficiency = 0.4;
inline constexpr Citation kBandwidthBound = {
    kSeed003,
    "autoregressive decoding is memory-bandwidth bound: every token streams the whole model's "
    "weights through memory; the RTX 4090 has 1 TB/s, and a Q4_K_M 7B model of about 4GB "
    "generates 80-120 tokens/s"};

// --- data and network ---
inline constexpr Citation kRegulated = {
    kSeed001,
    "when the data itself cannot leave the device - medical records, biometric input, "
    "protected financial data - on-device inference is not a performance optimisation but a "
    "compliance requirement"};
inline constexpr Citation kSensitive = {
    kSeed001,
    "even without a hard compliance requirement, data sensitivity shapes the architecture; for "
    "consumer apps that process personal data at scale the answer usually leans to the edge"};
inline constexpr Citation kOffline = {
    kSeed001,
    "hard offline requirement: the main use case assumes no connection; a cloud model is a "
    "liability, not an asset"};
inline constexpr Citation kIntermittent = {
    kSeed000, "route to the edge when users may be offline or on an unstable connection"};

// --- utilization ---
inline constexpr double kHighUtilization = 0.70;
inline constexpr Citation kUtilization = {
    kSeed001,
    "at high utilization (above about 70% of provisioned capacity) cloud GPU cost is amortised; "
    "at low utilization idle time is wasted spend; edge hardware has no idle cost - it is "
    "already bought"};

// --- task and model ---
inline constexpr Citation kEdgeTasks = {
    kSeed000,
    "route to the edge when the task is classification, extraction, formatting or simple "
    "question answering"};
inline constexpr Citation kCodeTasks = {
    kSeed001,
    "4-bit quantization keeps a 98.9% pass rate on code generation benchmarks, yet tasks that "
    "need 70B+ parameter reasoning - complex coding, multi-step planning - need cloud hardware"};
inline constexpr Citation kCloudTasks = {
    kSeed000,
    "multi-step reasoning, long-context synthesis and creative generation go to the cloud"};
inline constexpr double kFrontierParamsBillions = 70;
inline constexpr Citation kFrontierSize = {
    kSeed001,
    "tasks that need 70B+ parameter reasoning - complex coding, multi-step planning, creative "
    "generation - need cloud hardware"};
inline constexpr double kSmallModelParamsBillions = 3;
inline constexpr double kMinNominalBitsForSmallModels = 4;
inline constexpr Citation kSmallModelQuantization = {
    kSeed000,
    "rule of thumb: for models under 3B parameters, do not quantize below Q4 (Llama 3.2 1B at "
    "Q3_K loses about 40% accuracy)"};
inline constexpr Citation kQuantizationIsCheap = {
    kSeed003,
    "at Q5_K_M perplexity degrades by less than 1% from full precision; even at Q4_K_M it stays "
    "under 3% for most tasks"};

// --- memory ---
inline constexpr Citation kMemory = {
    kSeed003,
    "even at 4-bit quantization a 70B model needs about 35-40GB of VRAM; adding KV cache for "
    "longer contexts pushes that number up"};

// --- cost ---
inline constexpr double kFastBreakEvenMonths = 3;
inline constexpr Citation kFastBreakEven = {
    kSeed001,
    "the cost break-even of small models on a single RTX 5090 is 0.3 to 3 months of equivalent "
    "cloud spend; for medium models 2-34 months depending on utilization"};
inline constexpr Citation kWeeksBreakEven = {
    kSeed003,
    "an RTX 4090 at $1,600 serves quantized 7B-13B models for the team indefinitely; break-even "
    "arrives in weeks, not years"};
inline constexpr Citation kLowVolume = {kSeed003, "cloud API pricing looks cheap at low volume"};
inline constexpr Citation kOwnedHardware = {
    kSeed000, "on-device inference shifts the cost onto hardware the user already owns"};
// $3,000-15,000 a month for 10M tokens a day: $3,000 / (10M x 365/12 / 1M) = $9.86 ~ $10 per
// million tokens at the low end.
inline constexpr double kDefaultCloudPricePerMillion = 10;

// --- combining the factors ---
inline constexpr Citation kRoughRule = {
    kSeed001,
    "rough rule: if latency must be under 150ms, or the data is sensitive, or utilization is "
    "low, start at the edge; if the task needs complex reasoning and the model is larger than "
    "7B parameters, stay in the cloud; everything in between is hybrid"};
inline constexpr double kHybridEdgeShare = 0.6;
inline constexpr Citation kEdgeFirst = {
    kSeed000,
    "edge-first with cloud escalation works best when 60%+ of queries are within the edge "
    "model's capability"};
inline constexpr Citation kSpeculative = {
    kSeed000,
    "speculative edge with cloud verification: the edge answers optimistically, the cloud "
    "verifies high-risk queries - immediate perceived responsiveness with quality kept"};
inline constexpr Citation kStartInCloud = {
    kSeed000,
    "start in the cloud, migrate to the edge: measure the query distribution, move the 60-80% "
    "simple enough to an edge model"};
inline constexpr Citation kHumanEscalation = {
    kSeed000,
    "tiered escalation with fallback to human experts suits telecom, medical and legal "
    "applications, where a wrong answer costs more than a human review"};

}  // namespace tandem::planning::seeds
