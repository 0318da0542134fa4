#include "planning/plan_inputs.h"

#include <array>
#include <utility>

namespace tandem::planning {
namespace {

template <typename Enum, size_t N>
using NameTable = std::array<std::pair<Enum, const char*>, N>;

constexpr NameTable<Sensitivity, 4> kSensitivities = {{
    {Sensitivity::kPublic, "public"},
    {Sensitivity::kInternal, "internal"},
    {Sensitivity::kConfidential, "confidential"},
    {Sensitivity::kRegulated, "regulated"},
}};

constexpr NameTable<TaskType, 11> kTasks = {{
    {TaskType::kClassification, "classification"},
    {TaskType::kExtraction, "extraction"},
    {TaskType::kFormatting, "formatting"},
    {TaskType::kSimpleQa, "simple_qa"},
    {TaskType::kChat, "chat"},
    {TaskType::kSummarization, "summarization"},
    {TaskType::kAutocomplete, "autocomplete"},
    {TaskType::kCode, "code"},
    {TaskType::kReasoning, "reasoning"},
    {TaskType::kCreative, "creative"},
    {TaskType::kLongContext, "long_context"},
}};

constexpr NameTable<Connectivity, 3> kConnectivities = {{
    {Connectivity::kOnline, "online"},
    {Connectivity::kIntermittent, "intermittent"},
    {Connectivity::kOffline, "offline"},
}};

constexpr NameTable<KvCacheType, 3> kKvCacheTypes = {{
    {KvCacheType::kF16, "f16"},
    {KvCacheType::kQ8_0, "q8_0"},
    {KvCacheType::kQ4_0, "q4_0"},
}};

template <typename Enum, size_t N>
const char* name_of(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [entry, name] : table) {
    if (entry == value) {
      return name;
    }
  }
  return "unknown";
}

template <typename Enum, size_t N>
std::optional<Enum> parse_name(const NameTable<Enum, N>& table, const std::string& name) {
  for (const auto& [entry, entry_name] : table) {
    if (name == entry_name) {
      return entry;
    }
  }
  return std::nullopt;
}

template <typename Enum, size_t N>
std::string all_names(const NameTable<Enum, N>& table) {
  std::string out;
  for (const auto& entry : table) {
    out += out.empty() ? "" : ", ";
    out += entry.second;
  }
  return out;
}

}  // namespace

const char* sensitivity_name(Sensitivity value) {
  return name_of(kSensitivities, value);
}
const char* task_name(TaskType value) {
  return name_of(kTasks, value);
}
const char* connectivity_name(Connectivity value) {
  return name_of(kConnectivities, value);
}
const char* kv_cache_type_name(KvCacheType value) {
  return name_of(kKvCacheTypes, value);
}

const char* quality_risk_name(QualityRisk value) {
  switch (value) {
    case QualityRisk::kLow:
      return "low";
    case QualityRisk::kMedium:
      return "medium";
    case QualityRisk::kHigh:
      return "high";
  }
  return "unknown";
}

std::optional<Sensitivity> parse_sensitivity(const std::string& name) {
  return parse_name(kSensitivities, name);
}
std::optional<TaskType> parse_task(const std::string& name) {
  return parse_name(kTasks, name);
}
std::optional<Connectivity> parse_connectivity(const std::string& name) {
  return parse_name(kConnectivities, name);
}
std::optional<KvCacheType> parse_kv_cache_type(const std::string& name) {
  return parse_name(kKvCacheTypes, name);
}

std::string task_names() {
  return all_names(kTasks);
}
std::string sensitivity_names() {
  return all_names(kSensitivities);
}
std::string connectivity_names() {
  return all_names(kConnectivities);
}
std::string kv_cache_type_names() {
  return all_names(kKvCacheTypes);
}

QualityRisk task_quality_risk(TaskType task) {
  switch (task) {
    // Seed 000: "the task is classification, extraction, formatting or simple QA" -> edge;
    // small models handle "classification, summarization, extraction and simple QA".
    // Seed 001: "routine classification, QA, extraction and dialogue are essentially
    // unaffected" by quantization; autocomplete is one of its "good candidates".
    case TaskType::kClassification:
    case TaskType::kExtraction:
    case TaskType::kFormatting:
    case TaskType::kSimpleQa:
    case TaskType::kChat:
    case TaskType::kSummarization:
    case TaskType::kAutocomplete:
      return QualityRisk::kLow;
    // Seed 001: 4-bit keeps 98.9% of the code-generation pass rate, yet "complex coding"
    // needs 70B+ parameters: simple code on the edge, hard code in the cloud.
    case TaskType::kCode:
      return QualityRisk::kMedium;
    // Seed 000: "multi-step reasoning, long-context synthesis and creative generation go to
    // the cloud"; seed 001: they "degrade more at 4 bits".
    case TaskType::kReasoning:
    case TaskType::kCreative:
    case TaskType::kLongContext:
      return QualityRisk::kHigh;
  }
  return QualityRisk::kHigh;
}

double kv_cache_bytes_per_element(KvCacheType value) {
  switch (value) {
    case KvCacheType::kF16:
      return 2.0;
    case KvCacheType::kQ8_0:
      return 34.0 / 32.0;  // ggml block: 32 int8 values and one F16 scale
    case KvCacheType::kQ4_0:
      return 18.0 / 32.0;  // ggml block: 32 4-bit values and one F16 scale
  }
  return 2.0;
}

}  // namespace tandem::planning
