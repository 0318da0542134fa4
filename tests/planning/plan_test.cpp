// The planner against numbers computed by hand (the arithmetic is in each test's comments) and
// the decision matrix's rules, one scenario per rule.

#include "planning/plan.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "planning/gguf_model.h"

namespace tandem::planning {
namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

Plan plan_or_die(const PlanInputs& inputs) {
  auto plan = make_plan(inputs);
  EXPECT_TRUE(plan) << (plan ? "" : plan.error().message);
  return plan ? plan.value() : Plan{};
}

const Reason& factor(const Plan& plan, const std::string& name) {
  for (const auto& reason : plan.factors) {
    if (reason.factor == name) {
      return reason;
    }
  }
  ADD_FAILURE() << "no factor " << name;
  static const Reason none;
  return none;
}

// A workstation with an RTX 4090 (seed 003: 24GB, 1 TB/s, $1,600) serving a 7B Q4_K_M.
PlanInputs workstation() {
  PlanInputs in;
  in.memory_gib = 24;
  in.memory_bandwidth_gbps = 1008;
  in.hardware_usd = 1600;
  return in;
}

TEST(PlanDecode, SevenBillionQ4_0OnOneHundredGigabytesPerSecond) {
  PlanInputs in;
  in.params_billions = 7;
  in.quantization = "Q4_0";  // 4.64 bits per weight over a whole file
  in.layers = 32;            // Llama-2-7B geometry: 32 layers, 32 KV heads of 128
  in.kv_heads = 32;
  in.head_dim = 128;
  in.input_tokens = 500;
  in.output_tokens = 500;
  in.memory_bandwidth_gbps = 100;
  in.bandwidth_efficiency = 0.4;
  const Plan plan = plan_or_die(in);
  // weights: 7e9 x 4.64 / 8 = 4,060,000,000 bytes
  EXPECT_NEAR(plan.memory.weights_bytes, 4.06e9, 1);
  // KV per token: 2 (K, V) x 32 layers x 32 heads x 128 x 2 bytes (F16) = 524,288
  EXPECT_DOUBLE_EQ(plan.memory.kv_bytes_per_token, 524288);
  // read per token at the answer's last token: 4.06e9 + 524,288 x 1,000 = 4,584,288,000
  EXPECT_EQ(plan.speed.attended_tokens, 1000U);
  EXPECT_NEAR(plan.speed.bytes_read_per_token, 4584288000.0, 1);
  // 0.4 x 100e9 / 4,584,288,000 = 8.7255 tokens/s
  EXPECT_NEAR(plan.speed.decode_tokens_per_s, 8.7255, 1e-4);
  // Below seed 001's 10 tokens/s for a chat: the factor leans to the cloud.
  EXPECT_EQ(factor(plan, "decode_speed").code, "decode_speed.below_conversational");
  // Prefill: 69 x 8.7255 = 602.06 tokens/s; 500 tokens take 830.5 ms; the answer adds
  // 500 / 8.7255 s = 57,303 ms.
  EXPECT_NEAR(plan.speed.prefill_tokens_per_s, 602.06, 0.01);
  EXPECT_NEAR(plan.speed.edge_first_token_ms, 830.48, 0.01);
  EXPECT_NEAR(plan.speed.edge_answer_ms, 830.48 + 57303.6, 0.2);
  // Memory: weights + KV at 4,096 tokens (524,288 x 4,096 = 2 GiB) + 0.5 GiB overhead.
  EXPECT_DOUBLE_EQ(plan.memory.kv_cache_bytes, 2 * kGib);
  EXPECT_NEAR(plan.memory.required_bytes, 6744354560.0, 1);
  EXPECT_TRUE(plan.memory.fits);  // of 16 GiB

  in.bandwidth_efficiency = 1.0;  // the bandwidth bound itself: 100e9 / 4,584,288,000
  EXPECT_NEAR(plan_or_die(in).speed.decode_tokens_per_s, 21.8136, 1e-4);
}

TEST(PlanDecode, SeedFiguresAreReproduced) {
  // Seed 003: a 4GB Q4_K_M 7B model on a 1 TB/s RTX 4090 generates 80-120 tokens/s; the
  // default efficiency comes from that sentence, so the estimate lands inside the range.
  PlanInputs in = workstation();
  in.memory_bandwidth_gbps = 1000;
  const Plan plan = plan_or_die(in);
  EXPECT_NEAR(plan.memory.weights_bytes / kGib, 4.0, 0.01);  // "about 4GB"
  EXPECT_GT(plan.speed.decode_tokens_per_s, 80);
  EXPECT_LT(plan.speed.decode_tokens_per_s, 120);
  // Seed 003: "Llama 2 13B drops to 7.9GB at Q4_K_M": 13e9 x 4.90 / 8 = 7.96e9 bytes.
  in.params_billions = 13;
  EXPECT_NEAR(plan_or_die(in).memory.weights_bytes / 1e9, 7.96, 0.01);
}

TEST(PlanVerdict, RegulatedDataStaysOnTheEdgeEvenWhenItNeverPaysBack) {
  PlanInputs in = workstation();
  in.sensitivity = Sensitivity::kRegulated;
  in.hardware_usd = 5000;
  in.requests_per_day = 100;
  const Plan plan = plan_or_die(in);
  // Cloud: 100 x (500 x $10 + 200 x $10) / 1e6 = $0.70 a day = $21.29 a month; $5,000 pays back
  // in 234.8 months, far past the 36-month life: the cost factor says cloud...
  EXPECT_NEAR(plan.cost.cloud_monthly_usd, 21.2917, 1e-3);
  ASSERT_TRUE(plan.cost.break_even_months.has_value());
  EXPECT_NEAR(*plan.cost.break_even_months, 234.83, 0.01);
  EXPECT_EQ(factor(plan, "cost").code, "cost.pays_back_after_life");
  EXPECT_EQ(factor(plan, "cost").lean, Lean::kCloud);
  // ...and the data decides anyway.
  EXPECT_EQ(factor(plan, "privacy").lean, Lean::kEdgeRequired);
  EXPECT_EQ(plan.verdict, Verdict::kEdge);
  EXPECT_EQ(plan.decision.code, "verdict.must_stay_on_device");
  EXPECT_TRUE(plan.feasible());
  EXPECT_NE(plan.decision.source.find("seed 001"), std::string::npos);
}

TEST(PlanVerdict, RegulatedDataWithAModelThatDoesNotFitIsNotFeasible) {
  PlanInputs in;
  in.sensitivity = Sensitivity::kRegulated;
  in.params_billions = 13;  // 7.4 GiB of weights on a phone-class 6 GiB
  in.memory_gib = 6;
  in.task = TaskType::kReasoning;
  const Plan plan = plan_or_die(in);
  EXPECT_EQ(plan.verdict, Verdict::kEdge);
  EXPECT_FALSE(plan.feasible());
  ASSERT_EQ(plan.blockers.size(), 1U);
  EXPECT_NE(plan.blockers[0].find("does not fit"), std::string::npos);
  // A risky task with nowhere to escalate: human review, not the cloud.
  EXPECT_NE(plan.recommendation.find("human review"), std::string::npos);
}

TEST(PlanCost, HighVolumeAndHighUtilizationBreakEvenInWeeks) {
  PlanInputs in = workstation();
  in.requests_per_day = 20000;
  in.input_tokens = 1000;
  in.output_tokens = 250;
  in.cloud_input_usd_per_million = 3;
  in.cloud_output_usd_per_million = 15;
  in.edge_monthly_usd = 40;
  in.utilization = 0.85;
  const Plan plan = plan_or_die(in);
  // Per request: (1,000 x $3 + 250 x $15) / 1e6 = $0.00675; a month: 20,000 x 365/12 x
  // 0.00675 = $4,106.25.
  EXPECT_NEAR(plan.cost.cloud_usd_per_request, 0.00675, 1e-12);
  EXPECT_NEAR(plan.cost.cloud_monthly_usd, 4106.25, 1e-6);
  // Decode: 0.4 x 1008e9 / (7e9 x 4.90 / 8 + 131,072 x 1,250) = 90.579 tokens/s; an answer
  // takes 1,000 / (69 x 90.579) + 250 / 90.579 = 2.920 s; 20,000 of them 67.6% of a day.
  EXPECT_NEAR(plan.speed.decode_tokens_per_s, 90.579, 1e-3);
  EXPECT_NEAR(plan.speed.edge_busy_share, 0.6759, 1e-4);
  EXPECT_EQ(plan.speed.edge_devices_needed, 1U);
  // Break-even: $1,600 / ($4,106.25 - $40) = 0.3935 months (seed 001: 0.3-3 months).
  ASSERT_TRUE(plan.cost.break_even_months.has_value());
  EXPECT_NEAR(*plan.cost.break_even_months, 0.39348, 1e-5);
  EXPECT_EQ(factor(plan, "cost").code, "cost.pays_back_fast");
  EXPECT_EQ(factor(plan, "utilization").code, "utilization.high");
  EXPECT_EQ(plan.verdict, Verdict::kEdge);
  EXPECT_EQ(plan.decision.code, "verdict.only_edge_factors");
  // Hybrid: the cloud keeps 40% of the bill ($1,642.50); the edge's 60% share ($2,463.75 -
  // $40 a month) pays the card back in 0.6602 months.
  EXPECT_NEAR(plan.cost.hybrid_cloud_monthly_usd, 1642.5, 1e-6);
  ASSERT_TRUE(plan.cost.hybrid_break_even_months.has_value());
  EXPECT_NEAR(*plan.cost.hybrid_break_even_months, 1600 / (2463.75 - 40), 1e-9);

  // 50,000 a day keep one card busy 169% of the day: two cards, two power bills.
  in.requests_per_day = 50000;
  const Plan doubled = plan_or_die(in);
  EXPECT_EQ(doubled.speed.edge_devices_needed, 2U);
  EXPECT_DOUBLE_EQ(doubled.cost.hardware_usd, 3200);
  EXPECT_EQ(factor(doubled, "capacity").code, "capacity.more_devices");
  // $3,200 / (50,000 x 365/12 x 0.00675 - 2 x $40) = $3,200 / $10,185.625 = 0.3142 months.
  EXPECT_NEAR(*doubled.cost.break_even_months, 0.31417, 1e-5);
}

TEST(PlanCost, LowVolumeGoesToTheCloud) {
  PlanInputs in = workstation();
  in.requests_per_day = 50;
  in.sensitivity = Sensitivity::kPublic;
  const Plan plan = plan_or_die(in);
  // 50 x $0.007 x 365/12 = $10.65 a month: $1,600 pays back in 150.3 months, after the card's
  // 36-month life.
  EXPECT_NEAR(plan.cost.cloud_monthly_usd, 10.6458, 1e-4);
  EXPECT_NEAR(*plan.cost.break_even_months, 150.29, 0.01);
  EXPECT_EQ(factor(plan, "cost").code, "cost.pays_back_after_life");
  EXPECT_EQ(plan.verdict, Verdict::kCloud);
  EXPECT_EQ(plan.decision.code, "verdict.only_cloud_factors");

  // With $20 a month of power the edge costs more than the cloud's whole bill: never.
  in.edge_monthly_usd = 20;
  const Plan never = plan_or_die(in);
  EXPECT_FALSE(never.cost.break_even_months.has_value());
  EXPECT_EQ(factor(never, "cost").code, "cost.cloud_cheaper");
  EXPECT_EQ(never.verdict, Verdict::kCloud);
}

TEST(PlanVerdict, AModelThatDoesNotFitIsNotServedOnTheEdge) {
  PlanInputs in;  // 16 GiB laptop
  in.params_billions = 70;
  const Plan plan = plan_or_die(in);
  // 70e9 x 4.90 / 8 = 42.875e9 bytes = 39.93 GiB of weights (seed 003: "about 35-40GB").
  EXPECT_NEAR(plan.memory.weights_bytes / kGib, 39.93, 0.01);
  EXPECT_FALSE(plan.memory.fits);
  EXPECT_EQ(factor(plan, "memory").lean, Lean::kEdgeImpossible);
  EXPECT_EQ(plan.verdict, Verdict::kCloud);
  EXPECT_EQ(plan.decision.code, "verdict.edge_cannot_run_the_model");
  EXPECT_TRUE(plan.feasible());

  // Seed 000: an M4 Max with 128GB runs a quantized 70B; the task rule accepts its size.
  in.memory_gib = 128;
  in.memory_bandwidth_gbps = 546;
  in.task = TaskType::kReasoning;
  const Plan m4 = plan_or_die(in);
  EXPECT_TRUE(m4.memory.fits);
  EXPECT_EQ(factor(m4, "task").code, "task.frontier_size_on_edge");
}

TEST(PlanLatency, TargetBelowTheCloudRoundTripNeedsTheEdge) {
  PlanInputs in = workstation();
  in.params_billions = 3;
  in.input_tokens = 100;
  in.output_tokens = 50;
  in.first_token_ms = 100;  // seed 000: "first token within 100ms" -> edge
  const Plan plan = plan_or_die(in);
  // Decode 0.4 x 1008e9 / (3e9 x 4.90 / 8 + 131,072 x 150) = 217.11 tokens/s; prefill 69 x
  // that; 100 tokens in 6.68 ms, far below the cloud's best 200 ms.
  EXPECT_NEAR(plan.speed.decode_tokens_per_s, 217.106, 1e-3);
  EXPECT_NEAR(plan.speed.edge_first_token_ms, 6.6754, 1e-4);
  EXPECT_EQ(factor(plan, "first_token").code, "first_token.below_cloud_round_trip");
  EXPECT_EQ(plan.verdict, Verdict::kEdge);
  EXPECT_EQ(plan.decision.code, "verdict.latency_needs_edge");

  // A reasoning task needs the cloud's quality: the edge answers at once, the cloud verifies.
  in.task = TaskType::kReasoning;
  const Plan speculative = plan_or_die(in);
  EXPECT_EQ(speculative.verdict, Verdict::kHybrid);
  EXPECT_EQ(speculative.decision.code, "verdict.edge_first_cloud_verifies");
  EXPECT_NE(speculative.recommendation.find("speculative"), std::string::npos);

  // 300 ms: the cloud makes it at best (200) but not at worst (500); seed 001's chat threshold.
  in.task = TaskType::kChat;
  in.first_token_ms = 300;
  EXPECT_EQ(factor(plan_or_die(in), "first_token").code, "first_token.cloud_may_miss");
  in.first_token_ms = 800;
  EXPECT_EQ(factor(plan_or_die(in), "first_token").code, "first_token.both_meet");
}

TEST(PlanLatency, UnreachableTargetsAreBlockers) {
  PlanInputs in;  // the 100 GB/s laptop: 630 prefill tokens/s
  in.input_tokens = 3000;
  in.first_token_ms = 150;
  const Plan plan = plan_or_die(in);
  EXPECT_EQ(factor(plan, "first_token").code, "first_token.unreachable");
  EXPECT_FALSE(plan.feasible());

  in.first_token_ms.reset();
  in.answer_ms = 1000;  // 200 tokens at 100 tokens/s take 2 s in the cloud too
  EXPECT_EQ(factor(plan_or_die(in), "answer_time").code, "answer_time.unreachable");
  in.answer_ms = 3000;  // the cloud: 500 + 2,000 ms; the edge: 22 s
  EXPECT_EQ(factor(plan_or_die(in), "answer_time").code, "answer_time.edge_too_slow");
}

TEST(PlanRules, SmallModelsBelowFourBitsNeedTheCloudBehindThem) {
  PlanInputs in = workstation();
  in.params_billions = 1;
  in.quantization = "Q3_K_M";  // seed 000: Llama 3.2 1B at Q3_K loses ~40%
  const Plan plan = plan_or_die(in);
  EXPECT_EQ(factor(plan, "quantization").code, "quantization.too_aggressive");
  EXPECT_EQ(factor(plan, "quantization").lean, Lean::kHybrid);
  EXPECT_EQ(plan.verdict, Verdict::kHybrid);
  in.quantization = "Q4_K_M";
  EXPECT_EQ(factor(plan_or_die(in), "quantization").code, "quantization.ok");
}

TEST(PlanRules, TaskTypesMapToQualityRisk) {
  EXPECT_EQ(task_quality_risk(TaskType::kClassification), QualityRisk::kLow);
  EXPECT_EQ(task_quality_risk(TaskType::kChat), QualityRisk::kLow);
  EXPECT_EQ(task_quality_risk(TaskType::kCode), QualityRisk::kMedium);
  EXPECT_EQ(task_quality_risk(TaskType::kReasoning), QualityRisk::kHigh);
  EXPECT_EQ(task_quality_risk(TaskType::kLongContext), QualityRisk::kHigh);
  PlanInputs in = workstation();
  in.task = TaskType::kReasoning;
  const Plan plan = plan_or_die(in);
  EXPECT_EQ(factor(plan, "task").code, "task.needs_frontier_model");
  // $1,600 pays back in 7.5 months (an edge lean) while the task leans to the cloud.
  EXPECT_EQ(plan.verdict, Verdict::kHybrid);
  EXPECT_EQ(plan.decision.code, "verdict.mixed_factors");
}

TEST(PlanRules, EveryReasonCitesASeed) {
  PlanInputs in;
  in.first_token_ms = 300;
  in.utilization = 0.2;
  const Plan plan = plan_or_die(in);
  ASSERT_EQ(plan.factors.size(), 11U);
  for (const auto& reason : plan.factors) {
    EXPECT_EQ(reason.source.rfind("seed 00", 0), 0U) << reason.code;
    EXPECT_EQ(reason.code.rfind(reason.factor + ".", 0), 0U) << reason.code;
  }
  EXPECT_EQ(factor(plan, "utilization").code, "utilization.low");
  EXPECT_EQ(plan.decision.source.rfind("seed 00", 0), 0U);
}

TEST(PlanGguf, TheShippedModelFillsTheModelFields) {
  PlanInputs in;
  ASSERT_TRUE(apply_gguf_model(in, TANDEM_TEST_MODEL));
  EXPECT_EQ(in.model_file, TANDEM_TEST_MODEL);
  EXPECT_EQ(in.quantization, "F32");
  EXPECT_DOUBLE_EQ(in.params_billions, 292800 / 1e9);
  EXPECT_EQ(in.layers, 5U);
  EXPECT_EQ(in.kv_heads, 4U);
  EXPECT_EQ(in.head_dim, 8U);  // 64 embedding / 8 heads
  EXPECT_EQ(in.context_length, 2048U);
  const Plan plan = plan_or_die(in);
  // 292,800 F32 weights = 1,171,200 bytes, exactly 32 bits each.
  EXPECT_DOUBLE_EQ(plan.memory.weights_bytes, 1171200);
  EXPECT_DOUBLE_EQ(plan.memory.bits_per_weight, 32);
  // KV: 2 x 5 layers x 4 heads x 8 x 2 bytes = 640 a token; 1,310,720 for 2,048 tokens.
  EXPECT_DOUBLE_EQ(plan.memory.kv_bytes_per_token, 640);
  EXPECT_DOUBLE_EQ(plan.memory.kv_cache_bytes, 1310720);
  EXPECT_TRUE(plan.memory.fits);
  // A 0.0003B model: the reasoning rule wants a 70B+ model.
  in.task = TaskType::kReasoning;
  EXPECT_EQ(factor(plan_or_die(in), "task").code, "task.needs_frontier_model");
}

TEST(PlanGguf, MissingOrForeignFilesAreErrors) {
  PlanInputs in;
  Status missing = apply_gguf_model(in, "/nonexistent/model.gguf");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  // A file that exists but is not GGUF (not __FILE__: a compiler cache may make it relative).
  const std::string foreign_path = ::testing::TempDir() + "tandem_plan_not_a_model.txt";
  std::ofstream(foreign_path) << "plain text, not a GGUF header\n";
  Status foreign = apply_gguf_model(in, foreign_path);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code, ErrorCode::kInvalidModel);
}

}  // namespace
}  // namespace tandem::planning
