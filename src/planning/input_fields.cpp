#include "planning/input_fields.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "planning/quantization.h"

namespace tandem::planning {
namespace {

// The range a number must fall in; the names are the messages' wording.
enum class Bound {
  kPositive,     // > 0
  kNonNegative,  // >= 0
  kFraction,     // (0, 1]
  kShare,        // [0, 1]
};

constexpr double kMaxInputValue = 1e12;

Error invalid(const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument, message);
}

Result<double> parse_number(const std::string& text, Bound bound) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || stop != end || !std::isfinite(value)) {
    return invalid("must be a number, not '" + text + "'");
  }
  // No real deployment needs more; the cap keeps every product in the estimates finite.
  if (std::fabs(value) > kMaxInputValue) {
    return invalid("must be at most 1e12, not '" + text + "'");
  }
  switch (bound) {
    case Bound::kPositive:
      if (value <= 0) {
        return invalid("must be greater than 0, not '" + text + "'");
      }
      break;
    case Bound::kNonNegative:
      if (value < 0) {
        return invalid("must be 0 or more, not '" + text + "'");
      }
      break;
    case Bound::kFraction:
      if (value <= 0 || value > 1) {
        return invalid("must be greater than 0 and at most 1, not '" + text + "'");
      }
      break;
    case Bound::kShare:
      if (value < 0 || value > 1) {
        return invalid("must be between 0 and 1, not '" + text + "'");
      }
      break;
  }
  return value;
}

// Whole numbers above zero (token counts, layers, heads). 2^53 keeps every value exact in the
// double arithmetic of the estimates.
Result<uint64_t> parse_count(const std::string& text) {
  auto value = parse_number(text, Bound::kPositive);
  if (!value || value.value() != std::floor(value.value()) || value.value() > 9007199254740992.0) {
    return invalid("must be a whole number greater than 0, not '" + text + "'");
  }
  return static_cast<uint64_t>(value.value());
}

template <auto Member, Bound kBound>
Status set_number(PlanInputs& inputs, const std::string& text) {
  auto value = parse_number(text, kBound);
  if (!value) {
    return value.error();
  }
  inputs.*Member = value.value();
  return {};
}

// Optional inputs accept "none" to clear a value an inputs file set.
template <auto Member, Bound kBound>
Status set_optional_number(PlanInputs& inputs, const std::string& text) {
  if (text == "none") {
    (inputs.*Member).reset();
    return {};
  }
  auto value = parse_number(text, kBound);
  if (!value) {
    return invalid(value.error().message + " (or 'none')");
  }
  inputs.*Member = value.value();
  return {};
}

template <auto Member>
Status set_count(PlanInputs& inputs, const std::string& text) {
  auto value = parse_count(text);
  if (!value) {
    return value.error();
  }
  inputs.*Member = value.value();
  return {};
}

template <auto Member>
InputValue get_number(const PlanInputs& inputs) {
  return static_cast<double>(inputs.*Member);
}

template <auto Member>
InputValue get_optional(const PlanInputs& inputs) {
  const auto& value = inputs.*Member;
  return value ? InputValue(*value) : InputValue();
}

template <typename Enum>
Status set_enum(Enum& out, const std::string& text,
                std::optional<Enum> (*parse)(const std::string&), const std::string& names) {
  auto value = parse(text);
  if (!value) {
    return invalid("unknown value '" + text + "'; one of: " + names);
  }
  out = *value;
  return {};
}

// The model fields below describe a different model than a GGUF file read before them, so
// its exact tensor bytes no longer apply. Restating the same value (a plan's echoed inputs
// used as an inputs file) changes nothing.
Status set_params(PlanInputs& inputs, const std::string& text) {
  auto value = parse_number(text, Bound::kPositive);
  if (!value) {
    return value.error();
  }
  if (value.value() != inputs.params_billions) {
    inputs.params_billions = value.value();
    inputs.exact_weights_bytes.reset();
  }
  return {};
}

Status set_quantization(PlanInputs& inputs, const std::string& text) {
  if (text == inputs.quantization) {
    return {};  // also a GGUF's type the table does not know, such as "MXFP4 MoE"
  }
  auto type = find_quantization(text);
  if (!type) {
    return invalid("unknown quantization '" + text + "'; one of: " + quantization_names() +
                   " (or give bits_per_weight)");
  }
  if (inputs.quantization != type->name) {
    inputs.quantization = type->name;
    inputs.exact_weights_bytes.reset();
  }
  return {};
}

Status set_bits_per_weight(PlanInputs& inputs, const std::string& text) {
  if (text == "none") {
    if (inputs.bits_per_weight) {
      inputs.bits_per_weight.reset();
      inputs.exact_weights_bytes.reset();
    }
    return {};
  }
  auto value = parse_number(text, Bound::kPositive);
  if (!value || value.value() > 32) {
    return invalid("must be a number above 0 and at most 32, not '" + text + "' (or 'none')");
  }
  if (inputs.bits_per_weight != value.value()) {
    inputs.bits_per_weight = value.value();
    inputs.exact_weights_bytes.reset();
  }
  return {};
}

constexpr std::array kFields = {
    // --- workload ---
    InputField{"first_token_ms", "workload",
               "Latency target for the first token, ms (none: no target)",
               set_optional_number<&PlanInputs::first_token_ms, Bound::kPositive>,
               get_optional<&PlanInputs::first_token_ms>},
    InputField{"answer_ms", "workload", "Latency target for the whole answer, ms (none: no target)",
               set_optional_number<&PlanInputs::answer_ms, Bound::kPositive>,
               get_optional<&PlanInputs::answer_ms>},
    InputField{"requests_per_day", "workload", "Requests a day the deployment serves",
               set_number<&PlanInputs::requests_per_day, Bound::kPositive>,
               get_number<&PlanInputs::requests_per_day>},
    InputField{"input_tokens", "workload", "Prompt tokens per request",
               set_count<&PlanInputs::input_tokens>, get_number<&PlanInputs::input_tokens>},
    InputField{"output_tokens", "workload", "Generated tokens per request",
               set_count<&PlanInputs::output_tokens>, get_number<&PlanInputs::output_tokens>},
    InputField{"utilization", "workload",
               "Share of provisioned capacity the traffic keeps busy, (0, 1]; steady traffic is "
               "high, occasional or background work low (none: unknown)",
               set_optional_number<&PlanInputs::utilization, Bound::kFraction>,
               get_optional<&PlanInputs::utilization>},
    InputField{"sensitivity", "workload",
               "Data sensitivity: public, internal, confidential, regulated",
               [](PlanInputs& in, const std::string& text) {
                 return set_enum(in.sensitivity, text, parse_sensitivity, sensitivity_names());
               },
               [](const PlanInputs& in) { return InputValue(sensitivity_name(in.sensitivity)); }},
    InputField{"task", "workload",
               "Task type: classification, extraction, formatting, simple_qa, chat, "
               "summarization, autocomplete, code, reasoning, creative, long_context",
               [](PlanInputs& in, const std::string& text) {
                 return set_enum(in.task, text, parse_task, task_names());
               },
               [](const PlanInputs& in) { return InputValue(task_name(in.task)); }},
    InputField{"connectivity", "workload",
               "Network the device can count on: online, "
               "intermittent, offline",
               [](PlanInputs& in, const std::string& text) {
                 return set_enum(in.connectivity, text, parse_connectivity, connectivity_names());
               },
               [](const PlanInputs& in) { return InputValue(connectivity_name(in.connectivity)); }},
    InputField{"edge_share", "workload",
               "Share of requests the edge serves in a hybrid deployment, [0, 1]",
               set_number<&PlanInputs::edge_share, Bound::kShare>,
               get_number<&PlanInputs::edge_share>},
    // --- model ---
    InputField{"params_billions", "model", "Model parameters, billions", set_params,
               get_number<&PlanInputs::params_billions>},
    InputField{"quantization", "model", "GGUF quantization type: F16, Q8_0, Q4_0, Q4_K_M, ...",
               set_quantization, [](const PlanInputs& in) { return InputValue(in.quantization); }},
    InputField{"bits_per_weight", "model",
               "Bits per weight, overriding the quantization's average (none: from the "
               "quantization)",
               set_bits_per_weight, get_optional<&PlanInputs::bits_per_weight>},
    InputField{"context_length", "model", "Context window the runtime allocates, tokens",
               set_count<&PlanInputs::context_length>, get_number<&PlanInputs::context_length>},
    InputField{"layers", "model", "Transformer layers (blocks)", set_count<&PlanInputs::layers>,
               get_number<&PlanInputs::layers>},
    InputField{"kv_heads", "model", "Key/value attention heads (fewer than heads with GQA)",
               set_count<&PlanInputs::kv_heads>, get_number<&PlanInputs::kv_heads>},
    InputField{"head_dim", "model", "Dimension of one attention head",
               set_count<&PlanInputs::head_dim>, get_number<&PlanInputs::head_dim>},
    InputField{
        "kv_cache_type", "model", "KV cache element type: f16, q8_0, q4_0",
        [](PlanInputs& in, const std::string& text) {
          return set_enum(in.kv_cache_type, text, parse_kv_cache_type, kv_cache_type_names());
        },
        [](const PlanInputs& in) { return InputValue(kv_cache_type_name(in.kv_cache_type)); }},
    // --- device ---
    InputField{"memory_gib", "device",
               "Memory the model may use, GiB (on a phone: what the OS grants one app)",
               set_number<&PlanInputs::memory_gib, Bound::kPositive>,
               get_number<&PlanInputs::memory_gib>},
    InputField{"memory_bandwidth_gbps", "device", "Memory bandwidth, GB/s (10^9 bytes a second)",
               set_number<&PlanInputs::memory_bandwidth_gbps, Bound::kPositive>,
               get_number<&PlanInputs::memory_bandwidth_gbps>},
    InputField{"bandwidth_efficiency", "device", "Share of the bandwidth decoding achieves, (0, 1]",
               set_number<&PlanInputs::bandwidth_efficiency, Bound::kFraction>,
               get_number<&PlanInputs::bandwidth_efficiency>},
    InputField{"prefill_tokens_per_s", "device",
               "Measured prompt processing rate, tokens/s (none: 69 x the decode rate)",
               set_optional_number<&PlanInputs::prefill_tokens_per_s, Bound::kPositive>,
               get_optional<&PlanInputs::prefill_tokens_per_s>},
    InputField{"overhead_gib", "device", "Runtime memory beside weights and KV cache, GiB",
               set_number<&PlanInputs::overhead_gib, Bound::kNonNegative>,
               get_number<&PlanInputs::overhead_gib>},
    // --- cloud ---
    InputField{"cloud_input_usd_per_million", "cloud", "Cloud price per million input tokens, USD",
               set_number<&PlanInputs::cloud_input_usd_per_million, Bound::kNonNegative>,
               get_number<&PlanInputs::cloud_input_usd_per_million>},
    InputField{"cloud_output_usd_per_million", "cloud",
               "Cloud price per million output tokens, USD",
               set_number<&PlanInputs::cloud_output_usd_per_million, Bound::kNonNegative>,
               get_number<&PlanInputs::cloud_output_usd_per_million>},
    InputField{"cloud_first_token_min_ms", "cloud", "Cloud time to first token at best, ms",
               set_number<&PlanInputs::cloud_first_token_min_ms, Bound::kNonNegative>,
               get_number<&PlanInputs::cloud_first_token_min_ms>},
    InputField{"cloud_first_token_max_ms", "cloud", "Cloud time to first token at worst, ms",
               set_number<&PlanInputs::cloud_first_token_max_ms, Bound::kNonNegative>,
               get_number<&PlanInputs::cloud_first_token_max_ms>},
    InputField{"cloud_tokens_per_s", "cloud", "Cloud streaming rate of one answer, tokens/s",
               set_number<&PlanInputs::cloud_tokens_per_s, Bound::kPositive>,
               get_number<&PlanInputs::cloud_tokens_per_s>},
    // --- costs ---
    InputField{"hardware_usd", "costs", "Price of one edge device, USD (0: already owned)",
               set_number<&PlanInputs::hardware_usd, Bound::kNonNegative>,
               get_number<&PlanInputs::hardware_usd>},
    InputField{"edge_monthly_usd", "costs", "Power and operations per device per month, USD",
               set_number<&PlanInputs::edge_monthly_usd, Bound::kNonNegative>,
               get_number<&PlanInputs::edge_monthly_usd>},
    InputField{"amortization_months", "costs", "Months the hardware is written off over",
               set_number<&PlanInputs::amortization_months, Bound::kPositive>,
               get_number<&PlanInputs::amortization_months>},
};

}  // namespace

std::span<const InputField> input_fields() {
  return kFields;
}

const InputField* find_input_field(std::string_view key) {
  for (const auto& field : kFields) {
    if (key == field.key) {
      return &field;
    }
  }
  return nullptr;
}

std::string flag_for_key(std::string_view key) {
  std::string flag = "--";
  for (char c : key) {
    flag.push_back(c == '_' ? '-' : c);
  }
  return flag;
}

Status apply_settings(PlanInputs& inputs, const std::vector<InputSetting>& settings) {
  for (const auto& setting : settings) {
    const InputField* field = find_input_field(setting.key);
    if (field == nullptr) {
      return invalid(setting.label + ": unknown input (tandem plan --help lists them)");
    }
    if (Status set = field->set(inputs, setting.text); !set) {
      return invalid(setting.label + ": " + set.error().message);
    }
  }
  return {};
}

Status validate_inputs(const PlanInputs& inputs) {
  const uint64_t request_tokens = inputs.input_tokens + inputs.output_tokens;
  if (request_tokens > inputs.context_length) {
    return invalid("input_tokens + output_tokens (" + std::to_string(request_tokens) +
                   ") do not fit context_length (" + std::to_string(inputs.context_length) +
                   "): shorten the request or raise --context-length");
  }
  if (inputs.cloud_first_token_min_ms > inputs.cloud_first_token_max_ms) {
    return invalid("cloud_first_token_min_ms (" +
                   format_input_value(inputs.cloud_first_token_min_ms) +
                   ") is above cloud_first_token_max_ms (" +
                   format_input_value(inputs.cloud_first_token_max_ms) + ")");
  }
  if (!inputs.bits_per_weight && !inputs.exact_weights_bytes &&
      !find_quantization(inputs.quantization)) {
    return invalid("unknown quantization '" + inputs.quantization + "'; give --bits-per-weight");
  }
  return {};
}

std::string format_input_value(const InputValue& value) {
  if (const auto* number = std::get_if<double>(&value)) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.10g", *number);
    return text;
  }
  if (const auto* name = std::get_if<std::string>(&value)) {
    return *name;
  }
  return "none";
}

}  // namespace tandem::planning
