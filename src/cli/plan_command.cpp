// `tandem plan`: the seeds' deployment decision matrix as a tool. Edge, cloud or hybrid for a
// workload, model and device, with decode speed, memory fit, latency and break-even behind it
// (docs/PLANNING.md). Inputs come from defaults, then a GGUF header (--model), then an inputs
// file (--inputs), then flags: each later source overrides the earlier ones.

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "planning/format.h"
#include "planning/gguf_model.h"
#include "planning/input_fields.h"
#include "planning/inputs_file.h"
#include "planning/plan.h"
#include "planning/plan_json.h"

namespace tandem::cli {
namespace {

namespace planning = tandem::planning;

struct PlanFlags {
  std::string model;
  std::string inputs_file;
  bool json = false;
  // One string per input field; applied only when the flag was given.
  std::map<std::string, std::string> values;
  std::map<std::string, CLI::Option*> options;
};

constexpr int kExitFailed = 1;     // a file could not be read
constexpr int kExitBadInputs = 2;  // an input value is wrong (the message names it)

int fail(const Error& error) {
  std::cerr << "tandem plan: " << error.message << "\n";
  return error.code == ErrorCode::kInvalidArgument ? kExitBadInputs : kExitFailed;
}

using planning::format_bytes;
using planning::format_fixed;
using planning::format_ms;
using planning::format_usd;

std::string months(const std::optional<double>& value) {
  if (!value) {
    return "never";
  }
  return format_fixed(*value, *value < 10 ? 2 : 1) + " months";
}

std::string target(const std::optional<double>& value) {
  return value ? format_ms(*value) : "none";
}

// "7.00B", "292.8K": parameter counts as model cards write them.
std::string parameters(double billions) {
  if (billions >= 1) {
    return format_fixed(billions, 2) + "B";
  }
  if (billions >= 1e-3) {
    return format_fixed(billions * 1e3, 1) + "M";
  }
  return format_fixed(billions * 1e6, 1) + "K";
}

std::string count(uint64_t value) {
  return std::to_string(value);
}

void row(const std::string& label, const std::string& edge, const std::string& cloud = "",
         const std::string& target_text = "") {
  char text[512];
  std::snprintf(text, sizeof(text), "%-16s %-26s %-26s %s", label.c_str(), edge.c_str(),
                cloud.c_str(), target_text.c_str());
  std::string out = text;
  out.erase(out.find_last_not_of(' ') + 1);  // no trailing blanks in pasted output
  std::printf("%s\n", out.c_str());
}

void line(const std::string& label, const std::string& text) {
  std::printf("%-16s %s\n", label.c_str(), text.c_str());
}

void print_text(const planning::Plan& plan) {
  const auto& in = plan.inputs;
  const auto& memory = plan.memory;
  const auto& speed = plan.speed;
  const auto& cost = plan.cost;
  line("verdict", std::string(planning::verdict_name(plan.verdict)) +
                      (plan.feasible() ? "" : " (NOT FEASIBLE as planned)"));
  line("decision", plan.decision.code + ": " + plan.decision.text);
  line("deploy", plan.recommendation);
  for (const auto& blocker : plan.blockers) {
    line("blocker", blocker);
  }
  std::printf("\n");
  line("model", (in.model_name.empty() ? "" : in.model_name + ": ") +
                    parameters(in.params_billions) + " parameters, " + in.quantization + " (" +
                    format_fixed(memory.bits_per_weight, 2) + " bits/weight)");
  line("device", format_bytes(memory.available_bytes) + ", " +
                     format_fixed(in.memory_bandwidth_gbps, 0) + " GB/s x " +
                     format_fixed(in.bandwidth_efficiency, 2) + " efficiency");
  line("workload", format_fixed(in.requests_per_day, 0) + " requests/day, " +
                       count(in.input_tokens) + " in + " + count(in.output_tokens) +
                       " out tokens, " + planning::task_name(in.task) + ", " +
                       planning::sensitivity_name(in.sensitivity) + " data, " +
                       planning::connectivity_name(in.connectivity));
  std::printf("\n");
  row("", "edge", "cloud", "target");
  row("first token", format_ms(speed.edge_first_token_ms),
      format_ms(speed.cloud_first_token_min_ms) + " - " + format_ms(speed.cloud_first_token_max_ms),
      target(in.first_token_ms));
  row("whole answer", format_ms(speed.edge_answer_ms),
      format_ms(speed.cloud_answer_min_ms) + " - " + format_ms(speed.cloud_answer_max_ms),
      target(in.answer_ms));
  row("decode", format_fixed(speed.decode_tokens_per_s, 1) + " tokens/s",
      format_fixed(in.cloud_tokens_per_s, 1) + " tokens/s");
  row("prefill", format_fixed(speed.prefill_tokens_per_s, 0) + " tokens/s" +
                     (speed.prefill_measured ? "" : " (69 x decode)"));
  row("monthly cost", format_usd(cost.edge_monthly_amortized_usd) + " (amortized)",
      format_usd(cost.cloud_monthly_usd) + " (" + format_usd(cost.cloud_usd_per_request) +
          "/request)");
  std::printf("\n");
  line("read per token",
       format_bytes(speed.bytes_read_per_token) + " = weights " +
           format_bytes(memory.weights_bytes) + " + KV " +
           format_bytes(memory.kv_bytes_per_token * static_cast<double>(speed.attended_tokens)) +
           " (" + count(speed.attended_tokens) + " tokens)");
  line("memory",
       format_bytes(memory.required_bytes) + " = weights " + format_bytes(memory.weights_bytes) +
           " + KV cache " + format_bytes(memory.kv_cache_bytes) + " (" + count(in.context_length) +
           " tokens) + overhead " + format_bytes(memory.overhead_bytes) + " of " +
           format_bytes(memory.available_bytes) + ": " + (memory.fits ? "fits" : "DOES NOT FIT"));
  line("capacity", "one device busy " + format_fixed(speed.edge_busy_share * 100, 1) +
                       "% of the day: " + count(speed.edge_devices_needed) + " device(s)");
  line("hardware", format_usd(cost.hardware_usd) + " + " + format_usd(cost.edge_monthly_usd) +
                       "/month over " + format_fixed(in.amortization_months, 0) + " months");
  line("break-even", months(cost.break_even_months) + "; hybrid (edge " +
                         format_fixed(in.edge_share * 100, 0) +
                         "% of requests): " + months(cost.hybrid_break_even_months) + ", cloud " +
                         format_usd(cost.hybrid_cloud_monthly_usd) + "/month");
  std::printf("\nfactors:\n");
  for (const auto& reason : plan.factors) {
    std::printf("  %-13s %-15s %s\n", reason.factor.c_str(), planning::lean_name(reason.lean),
                reason.code.c_str());
    std::printf("      %s\n      from %s\n", reason.text.c_str(), reason.source.c_str());
  }
  std::printf("\ndecided by %s\n", plan.decision.source.c_str());
}

int plan(const PlanFlags& flags) {
  planning::PlanInputs inputs;
  planning::InputsFile file;
  if (!flags.inputs_file.empty()) {
    auto loaded = planning::read_inputs_file(flags.inputs_file);
    if (!loaded) {
      return fail(loaded.error());
    }
    file = std::move(loaded).value();
  }
  const std::string model = flags.model.empty() ? file.model_file : flags.model;
  if (!model.empty()) {
    if (Status read = planning::apply_gguf_model(inputs, model); !read) {
      return fail(read.error());
    }
  }
  if (!file.model_name.empty()) {
    inputs.model_name = file.model_name;
  }
  std::vector<planning::InputSetting> settings = file.settings;
  for (const auto& field : planning::input_fields()) {
    if (flags.options.at(field.key)->count() > 0) {
      settings.push_back(
          {field.key, flags.values.at(field.key), planning::flag_for_key(field.key)});
    }
  }
  if (Status applied = planning::apply_settings(inputs, settings); !applied) {
    return fail(applied.error());
  }
  auto result = planning::make_plan(inputs);
  if (!result) {
    return fail(result.error());
  }
  if (flags.json) {
    std::cout << planning::plan_to_json(result.value()).dump(2) << "\n";
  } else {
    print_text(result.value());
  }
  return 0;
}

}  // namespace

std::function<int()> add_plan_command(CLI::App& app) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Decide edge, cloud or hybrid for a workload: decode speed, memory fit, latency and "
      "break-even from the seeds' decision matrix (docs/PLANNING.md). Exit 2: a bad input.");
  cmd->add_option("-m,--model", flags->model,
                  "GGUF file: parameters, quantization, layers, heads and context from its "
                  "header (no weights loaded)");
  cmd->add_option("-i,--inputs", flags->inputs_file,
                  "YAML or JSON file of inputs (the keys are the flags' names with _); flags "
                  "override it");
  cmd->add_flag("--json", flags->json, "Print the plan as one JSON object");
  const planning::PlanInputs defaults;
  for (const auto& field : planning::input_fields()) {
    const planning::InputValue default_value = field.get(defaults);
    const std::string shown = planning::format_input_value(default_value);
    auto& value = flags->values[field.key];
    CLI::Option* option = cmd->add_option(planning::flag_for_key(field.key), value,
                                          std::string(field.help) + " [default: " + shown + "]");
    option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // scripts append overrides
    option->type_name(std::holds_alternative<std::string>(default_value) ? "NAME" : "NUMBER");
    const std::string group = field.group;
    option->group("Inputs: " + group +
                  (group == "model" ? " (--model fills them from a GGUF)" : ""));
    flags->options[field.key] = option;
  }
  return [flags] { return plan(*flags); };
}

}  // namespace tandem::cli
