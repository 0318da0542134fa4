// Inputs as users write them: flags and files, with errors that name the flag or the line.

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "planning/input_fields.h"
#include "planning/inputs_file.h"
#include "planning/plan.h"
#include "planning/quantization.h"

namespace tandem::planning {
namespace {

std::string error_of(PlanInputs& inputs, const std::string& key, const std::string& text) {
  Status status = apply_settings(inputs, {{key, text, flag_for_key(key)}});
  return status ? "" : status.error().message;
}

std::string write_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(PlanInputsTest, FlagsSetTheirFields) {
  PlanInputs in;
  ASSERT_TRUE(apply_settings(in, {{"memory_bandwidth_gbps", "273", "--memory-bandwidth-gbps"},
                                  {"quantization", "q8_0", "--quantization"},
                                  {"task", "extraction", "--task"},
                                  {"first_token_ms", "150", "--first-token-ms"},
                                  {"context_length", "8192", "--context-length"}}));
  EXPECT_DOUBLE_EQ(in.memory_bandwidth_gbps, 273);
  EXPECT_EQ(in.quantization, "Q8_0");
  EXPECT_EQ(in.task, TaskType::kExtraction);
  EXPECT_EQ(in.first_token_ms, 150);
  EXPECT_EQ(in.context_length, 8192U);
  ASSERT_TRUE(apply_settings(in, {{"first_token_ms", "none", "--first-token-ms"}}));
  EXPECT_FALSE(in.first_token_ms.has_value());
  EXPECT_EQ(flag_for_key("cloud_input_usd_per_million"), "--cloud-input-usd-per-million");
}

TEST(PlanInputsTest, BadValuesNameTheFlagAndSayWhatIsWrong) {
  PlanInputs in;
  EXPECT_EQ(error_of(in, "memory_bandwidth_gbps", "0"),
            "--memory-bandwidth-gbps: must be greater than 0, not '0'");
  EXPECT_EQ(error_of(in, "requests_per_day", "-5"),
            "--requests-per-day: must be greater than 0, not '-5'");
  EXPECT_EQ(error_of(in, "hardware_usd", "-1"), "--hardware-usd: must be 0 or more, not '-1'");
  EXPECT_EQ(error_of(in, "utilization", "1.5"),
            "--utilization: must be greater than 0 and at most 1, not '1.5' (or 'none')");
  EXPECT_EQ(error_of(in, "layers", "2.5"),
            "--layers: must be a whole number greater than 0, not '2.5'");
  EXPECT_EQ(error_of(in, "memory_gib", "lots"), "--memory-gib: must be a number, not 'lots'");
  EXPECT_EQ(error_of(in, "memory_gib", "nan"), "--memory-gib: must be a number, not 'nan'");
  EXPECT_EQ(error_of(in, "memory_gib", "1e13"), "--memory-gib: must be at most 1e12, not '1e13'");
  EXPECT_NE(error_of(in, "quantization", "Q7_X")
                .find("--quantization: unknown quantization "
                      "'Q7_X'; one of: F32, F16"),
            std::string::npos);
  EXPECT_NE(error_of(in, "task", "poetry")
                .find("--task: unknown value 'poetry'; one of: "
                      "classification, extraction"),
            std::string::npos);
  EXPECT_NE(error_of(in, "sensitivity", "secret").find("public, internal, confidential, regulated"),
            std::string::npos);
  EXPECT_EQ(error_of(in, "bits_per_weight", "40"),
            "--bits-per-weight: must be a number above 0 and at most 32, not '40' (or 'none')");
  EXPECT_EQ(error_of(in, "warp_drive", "1"),
            "--warp-drive: unknown input (tandem plan --help "
            "lists them)");
}

TEST(PlanInputsTest, RelatedFieldsAreCheckedTogether) {
  PlanInputs in;
  in.context_length = 512;
  auto plan = make_plan(in);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(plan.error().message.find("input_tokens + output_tokens (700) do not fit "
                                      "context_length (512)"),
            std::string::npos);
  in = PlanInputs{};
  in.cloud_first_token_min_ms = 600;
  plan = make_plan(in);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("cloud_first_token_min_ms (600) is above"),
            std::string::npos);
}

TEST(PlanInputsTest, ChangingTheModelDropsTheGgufExactBytes) {
  PlanInputs in;
  in.exact_weights_bytes = 1234;
  ASSERT_TRUE(apply_settings(in, {{"quantization", "Q4_0", "--quantization"}}));
  EXPECT_FALSE(in.exact_weights_bytes.has_value());
  in.exact_weights_bytes = 1234;
  ASSERT_TRUE(apply_settings(in, {{"context_length", "1024", "--context-length"}}));
  EXPECT_EQ(in.exact_weights_bytes, 1234U);  // the window is not the model
}

TEST(PlanInputsTest, QuantizationNamesIncludeLlamaCppFileTypes) {
  EXPECT_EQ(std::string(find_quantization("Q4_K - Medium")->name), "Q4_K_M");
  EXPECT_EQ(std::string(find_quantization("all F32")->name), "F32");
  EXPECT_EQ(std::string(find_quantization("q4_k")->name), "Q4_K_M");
  EXPECT_EQ(std::string(find_quantization("IQ4_XS - 4.25 bpw")->name), "IQ4_XS");
  EXPECT_DOUBLE_EQ(find_quantization("Q8_0")->bits_per_weight, 8.52);
  EXPECT_DOUBLE_EQ(find_quantization("Q3_K_M")->nominal_bits, 3);
  EXPECT_FALSE(find_quantization("Q9_Z").has_value());
}

TEST(PlanInputsTest, YamlFileWithFlagsOverridingIt) {
  const std::string path = write_file("plan-scenario.yaml",
                                      "# a versioned scenario\n"
                                      "requests_per_day: 20000\n"
                                      "sensitivity: confidential\n"
                                      "memory_gib: 24\n"
                                      "first_token_ms: ~\n"
                                      "model_file: models/tiny.gguf\n");
  auto file = read_inputs_file(path);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->model_file, ::testing::TempDir() + "models/tiny.gguf");
  ASSERT_EQ(file->settings.size(), 4U);
  EXPECT_EQ(file->settings[0].label, path + ":2: requests_per_day");
  EXPECT_EQ(file->settings[3].text, "none");
  PlanInputs in;
  auto settings = file->settings;
  settings.push_back({"memory_gib", "32", "--memory-gib"});
  ASSERT_TRUE(apply_settings(in, settings));
  EXPECT_DOUBLE_EQ(in.requests_per_day, 20000);
  EXPECT_EQ(in.sensitivity, Sensitivity::kConfidential);
  EXPECT_DOUBLE_EQ(in.memory_gib, 32);
  std::remove(path.c_str());
}

TEST(PlanInputsTest, JsonFileAndItsErrorsNameTheLine) {
  const std::string json =
      write_file("plan-scenario.json", "{\n  \"task\": \"code\",\n  \"utilization\": 0.9\n}\n");
  auto file = read_inputs_file(json);
  ASSERT_TRUE(file) << file.error().message;
  PlanInputs in;
  ASSERT_TRUE(apply_settings(in, file->settings));
  EXPECT_EQ(in.task, TaskType::kCode);
  EXPECT_EQ(in.utilization, 0.9);

  const std::string bad = write_file("plan-bad.yaml", "task: chat\nmemory_bandwith_gbps: 100\n");
  auto unknown = read_inputs_file(bad);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, bad +
                                         ":2: memory_bandwith_gbps: unknown key (tandem plan "
                                         "--help lists the inputs)");

  const std::string negative = write_file("plan-negative.yaml", "\n\noutput_tokens: -3\n");
  auto parsed = read_inputs_file(negative);
  ASSERT_TRUE(parsed);
  Status applied = apply_settings(in, parsed->settings);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().message,
            negative + ":3: output_tokens: must be a whole number greater than 0, not '-3'");

  const std::string list = write_file("plan-list.yaml", "- 1\n- 2\n");
  EXPECT_FALSE(read_inputs_file(list));
  EXPECT_EQ(read_inputs_file("/nonexistent/plan.yaml").error().code, ErrorCode::kNotFound);
  for (const auto& path : {json, bad, negative, list}) {
    std::remove(path.c_str());
  }
}

}  // namespace
}  // namespace tandem::planning
