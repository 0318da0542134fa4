#include "planning/plan.h"

#include "planning/format.h"
#include "planning/input_fields.h"
#include "planning/seed_figures.h"

namespace tandem::planning {
namespace {

std::string cite(const seeds::Citation& citation) {
  return std::string(citation.seed) + ": \"" + citation.text + "\"";
}

// The factors that lean one way, for the decision's text: "privacy.regulated, cost.cloud_cheaper".
std::string codes_leaning(const std::vector<Reason>& factors, Lean lean) {
  std::string out;
  for (const auto& factor : factors) {
    if (factor.lean == lean) {
      out += out.empty() ? "" : ", ";
      out += factor.code;
    }
  }
  return out;
}

bool any_leaning(const std::vector<Reason>& factors, Lean lean) {
  for (const auto& factor : factors) {
    if (factor.lean == lean) {
      return true;
    }
  }
  return false;
}

const Reason* find_factor(const std::vector<Reason>& factors, const std::string& name) {
  for (const auto& factor : factors) {
    if (factor.factor == name) {
      return &factor;
    }
  }
  return nullptr;
}

bool leans(const std::vector<Reason>& factors, const std::string& name, Lean lean) {
  const Reason* factor = find_factor(factors, name);
  return factor != nullptr && factor->lean == lean;
}

Reason decision(const char* code, std::string text, const seeds::Citation& source) {
  Reason r;
  r.factor = "verdict";
  r.code = code;
  r.text = std::move(text);
  r.source = cite(source);
  return r;
}

std::string fit_advice(const MemoryEstimate& memory) {
  return "it needs " + format_bytes(memory.required_bytes) + " and the device has " +
         format_bytes(memory.available_bytes) +
         ": pick a smaller model or quantization, a shorter context, a quantized KV cache or a "
         "device with more memory";
}

// What the factors say, gathered once for the combining rule.
struct Leanings {
  bool data_pinned = false;     // privacy or connectivity require the edge
  bool latency_pinned = false;  // only the edge meets the first-token target
  bool does_not_fit = false;
  bool edge_leans = false;
  bool cloud_leans = false;
  bool hybrid_leans = false;
  bool quality_doubt = false;  // the task or the quantization is risky for a small model
  std::string pins;            // the codes of the factors that require the edge
  std::string edge_codes;
  std::string cloud_codes;
  std::string hybrid_codes;
  std::string also_edge;  // "; also for the edge: ..." or ""
};

Leanings leanings_of(const std::vector<Reason>& factors) {
  Leanings l;
  l.data_pinned = leans(factors, "privacy", Lean::kEdgeRequired) ||
                  leans(factors, "connectivity", Lean::kEdgeRequired);
  l.latency_pinned = leans(factors, "first_token", Lean::kEdgeRequired);
  l.does_not_fit = any_leaning(factors, Lean::kEdgeImpossible);
  l.edge_leans = any_leaning(factors, Lean::kEdge);
  l.cloud_leans = any_leaning(factors, Lean::kCloud);
  l.hybrid_leans = any_leaning(factors, Lean::kHybrid);
  l.quality_doubt = leans(factors, "task", Lean::kCloud) || leans(factors, "task", Lean::kHybrid) ||
                    leans(factors, "quantization", Lean::kHybrid);
  l.pins = codes_leaning(factors, Lean::kEdgeRequired);
  l.edge_codes = codes_leaning(factors, Lean::kEdge);
  l.cloud_codes = codes_leaning(factors, Lean::kCloud);
  l.hybrid_codes = codes_leaning(factors, Lean::kHybrid);
  l.also_edge = l.edge_codes.empty() ? "" : "; also for the edge: " + l.edge_codes;
  return l;
}

// Data that must stay on the device: the edge, whatever it costs.
void decide_data_stays(Plan& plan, const Leanings& l) {
  plan.verdict = Verdict::kEdge;
  plan.decision = decision(
      "verdict.must_stay_on_device", "the edge, whatever it costs: " + l.pins + l.also_edge,
      leans(plan.factors, "privacy", Lean::kEdgeRequired) ? seeds::kRegulated : seeds::kOffline);
  plan.recommendation =
      "Serve every request on the device and never fall back to the cloud (an API key with "
      "privacy: local-only, or no cloud upstream).";
  if (l.quality_doubt) {
    plan.recommendation +=
        " The task is risky for a small model: send unsure answers to human review "
        "(routing.review) instead of the cloud.";
  }
  if (l.does_not_fit) {
    plan.blockers.push_back("the data must stay on the device but the model does not fit: " +
                            fit_advice(plan.memory));
  }
}

// Only the edge meets the first-token target (and the model fits): the edge, verified by the
// cloud when other factors need it.
void decide_latency_needs_edge(Plan& plan, const Leanings& l) {
  if (l.cloud_leans || l.hybrid_leans) {
    plan.verdict = Verdict::kHybrid;
    plan.decision =
        decision("verdict.edge_first_cloud_verifies",
                 "only the edge meets the first-token target (" + l.pins +
                     "), but the cloud is needed for " + l.cloud_codes +
                     (l.cloud_codes.empty() || l.hybrid_codes.empty() ? "" : ", ") + l.hybrid_codes,
                 seeds::kSpeculative);
    plan.recommendation =
        "Pattern 3: the edge streams its answer at once and the cloud verifies it "
        "(routing.pattern: speculative).";
  } else {
    plan.verdict = Verdict::kEdge;
    plan.decision = decision("verdict.latency_needs_edge",
                             "only the edge meets the first-token target: " + l.pins + l.also_edge,
                             seeds::kLatencyThresholds);
    plan.recommendation =
        "Serve on the device; keep a tested cloud fallback for failures (edge overloaded, "
        "model fails to load).";
  }
}

void decide_model_does_not_fit(Plan& plan, const Leanings& l) {
  plan.verdict = Verdict::kCloud;
  plan.decision =
      decision("verdict.edge_cannot_run_the_model",
               "the model does not fit the device: memory.does_not_fit", seeds::kMemory);
  plan.recommendation = "Serve from the cloud; to use the edge, " + fit_advice(plan.memory) + ".";
  if (l.latency_pinned) {
    plan.blockers.push_back("only the edge could meet the first-token target, but " +
                            fit_advice(plan.memory));
  }
}

// Factors leaning different ways, or the edge needing the cloud behind it: pattern 1.
void decide_mixed(Plan& plan, const Leanings& l) {
  plan.verdict = Verdict::kHybrid;
  std::string text = "the factors disagree or the edge needs the cloud behind it:";
  text += l.edge_codes.empty() ? "" : " edge " + l.edge_codes + ";";
  text += l.cloud_codes.empty() ? "" : " cloud " + l.cloud_codes + ";";
  text += l.hybrid_codes.empty() ? "" : " hybrid " + l.hybrid_codes + ";";
  text.pop_back();
  plan.decision = decision("verdict.mixed_factors", text, seeds::kRoughRule);
  plan.recommendation =
      "Pattern 1: the edge answers first and escalates low-confidence answers to the cloud "
      "(routing.pattern: cascade); the costs assume the edge keeps " +
      format_input_value(plan.inputs.edge_share * 100) + "% of requests.";
  if (plan.inputs.sensitivity == Sensitivity::kConfidential) {
    plan.recommendation +=
        " Prompts with detected personal data stay on the edge (the router's privacy rule).";
  }
}

// The combining rule, after seed 001's "rough rule": hard requirements first (data that must
// stay, a network that is not there, a latency only the edge reaches, a model that does not
// fit), then the leaning factors: only edge -> edge, only cloud -> cloud, anything in between
// -> hybrid.
void decide(Plan& plan) {
  const Leanings l = leanings_of(plan.factors);
  if (l.data_pinned) {
    decide_data_stays(plan, l);
  } else if (l.latency_pinned && !l.does_not_fit) {
    decide_latency_needs_edge(plan, l);
  } else if (l.does_not_fit) {
    decide_model_does_not_fit(plan, l);
  } else if (l.edge_leans && !l.cloud_leans && !l.hybrid_leans) {
    plan.verdict = Verdict::kEdge;
    plan.decision =
        decision("verdict.only_edge_factors",
                 "every leaning factor favours the edge: " + l.edge_codes, seeds::kRoughRule);
    plan.recommendation =
        "Serve on the device; keep a tested cloud fallback for failures (edge overloaded, "
        "model fails to load).";
  } else if (l.cloud_leans && !l.edge_leans) {
    plan.verdict = Verdict::kCloud;
    plan.decision =
        decision("verdict.only_cloud_factors",
                 "every leaning factor favours the cloud: " + l.cloud_codes +
                     (l.hybrid_codes.empty()
                          ? ""
                          : "; the edge would need the cloud behind it anyway: " + l.hybrid_codes),
                 seeds::kRoughRule);
    plan.recommendation =
        "Serve from the cloud API; plan again when the volume grows or the data becomes "
        "sensitive.";
  } else if (l.edge_leans || l.hybrid_leans) {
    decide_mixed(plan, l);
  } else {
    plan.verdict = Verdict::kHybrid;
    plan.decision = decision("verdict.no_deciding_factor",
                             "no factor leans either way: start in the cloud, migrate to the edge",
                             seeds::kStartInCloud);
    plan.recommendation =
        "Start in the cloud, run the edge in shadow mode, and move the query clusters it "
        "handles to the edge (routing.pattern: ingress).";
  }

  for (const auto& factor : plan.factors) {
    if (factor.blocking) {
      plan.blockers.push_back(factor.text);
    }
  }
}

}  // namespace

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kEdge:
      return "edge";
    case Verdict::kCloud:
      return "cloud";
    case Verdict::kHybrid:
      return "hybrid";
  }
  return "unknown";
}

Result<Plan> make_plan(const PlanInputs& inputs) {
  if (Status valid = validate_inputs(inputs); !valid) {
    return valid.error();
  }
  Plan plan;
  plan.inputs = inputs;
  plan.memory = estimate_memory(inputs);
  plan.speed = estimate_speed(inputs, plan.memory);
  plan.cost = estimate_cost(inputs, plan.speed);
  plan.factors = evaluate_factors(inputs, plan.memory, plan.speed, plan.cost);
  decide(plan);
  return plan;
}

}  // namespace tandem::planning
