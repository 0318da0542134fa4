// Deriving quantized models from the shipped F32 model through llama.cpp's quantizer.

#include "engine/quantize.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../support/recording_progress.h"
#include "engine/gguf_file.h"
#include "test_files.h"

namespace tandem::engine {
namespace {

namespace fs = std::filesystem;
using test::model_path;

// A fresh directory per test, so that leftovers (temporary files) can be counted.
fs::path test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = fs::path(::testing::TempDir()) /
                   (std::string("tandem_quantize_") + info->test_suite_name() + "_" + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

size_t file_count(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

Result<ModelIdentity> quantize(const std::string& input, const std::string& output,
                               const std::string& type) {
  QuantizeOptions options;
  options.input_path = input;
  options.output_path = output;
  options.type = type;
  options.threads = 1;
  return quantize_model(options);
}

TEST(QuantizeTest, ReportsEachTensorAsLlamaCppLogsIt) {
  const auto dir = test_dir();
  auto header = read_gguf_header(model_path());
  ASSERT_TRUE(header.ok()) << header.error().message;
  QuantizeOptions options;
  options.input_path = model_path();
  options.output_path = (dir / "stories-Q8_0.gguf").string();
  options.type = "Q8_0";
  options.threads = 1;
  testing_support::RecordingProgress progress;
  ASSERT_TRUE(quantize_model(options, progress).ok());
  ASSERT_EQ(progress.labels(),
            (std::vector<std::string>{"quantizing tensors", "writing and hashing the output"}));
  const auto& tensors = progress.phases()[0];
  EXPECT_EQ(tensors.total, header->tensors.size());
  EXPECT_TRUE(progress.every_phase_completes());
  // One report as each tensor starts (its number, read from the log, minus one), then the end.
  std::vector<size_t> expected(header->tensors.size() + 1);
  for (size_t i = 0; i < expected.size(); ++i) {
    expected[i] = i;
  }
  EXPECT_EQ(tensors.updates, expected);
}

TEST(QuantizeTest, DerivesLoadableModelsOfTheRequestedType) {
  const auto dir = test_dir();
  const auto original = inspect_model(model_path());
  ASSERT_TRUE(original.ok()) << original.error().message;
  EXPECT_EQ(original->quantization, "all F32");

  for (const std::string type : {"Q8_0", "Q4_0"}) {
    const std::string out = (dir / ("stories-" + type + ".gguf")).string();
    auto written = quantize(model_path(), out, type);
    ASSERT_TRUE(written.ok()) << type << ": " << written.error().message;
    EXPECT_EQ(written->quantization, type);
    EXPECT_EQ(written->path, out);
    // Same model, fewer bytes: every tensor is still there, with the same shapes.
    EXPECT_EQ(written->parameter_count, original->parameter_count);
    EXPECT_EQ(written->vocab_size, original->vocab_size);
    EXPECT_EQ(written->architecture, "llama");
    EXPECT_LT(written->file_size_bytes, original->file_size_bytes / 2);
    EXPECT_NE(written->sha256, original->sha256);
    // Tandem's own bounds-checked reader accepts the file and sees the quantized tensors.
    auto header = read_gguf_header(out);
    ASSERT_TRUE(header.ok()) << header.error().message;
    EXPECT_EQ(header->tensors.size(), 48U);
    EXPECT_EQ(fs::file_size(out), written->file_size_bytes);
  }
  EXPECT_EQ(file_count(dir), 2U) << "a temporary file was left behind";
}

TEST(QuantizeTest, TypeNamesAreCaseInsensitiveAndListed) {
  const auto dir = test_dir();
  auto written = quantize(model_path(), (dir / "q5.gguf").string(), "q5_0");
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(written->quantization, "Q5_0");
  const auto names = quantization_type_names();
  for (const char* expected : {"F16", "Q8_0", "Q5_0", "Q4_K_M", "Q4_0"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
}

TEST(QuantizeTest, KQuantsFallBackWhereRowsDoNotFitTheirBlocks) {
  // stories260K's rows are 64 or 172 wide, not multiples of the 256-wide K-quant blocks:
  // llama.cpp quantizes those tensors to a fallback type, and the result still loads.
  const auto dir = test_dir();
  auto written = quantize(model_path(), (dir / "k.gguf").string(), "Q4_K_M");
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(written->quantization, "Q4_K - Medium");
}

// The shipped model with general.architecture renamed: a valid GGUF that llama.cpp cannot load.
std::string unknown_architecture_model() {
  std::string bytes = test::read_file(model_path());
  const size_t key = bytes.find("general.architecture");
  const size_t value = bytes.find("llama", key);  // the string value follows its key
  bytes.replace(value, 5, "llamb");
  return test::write_temp_file("llamb.gguf", bytes);
}

TEST(QuantizeTest, ReplacesAnExistingOutputAtomically) {
  const auto dir = test_dir();
  const std::string out = (dir / "model.gguf").string();
  {
    std::ofstream old(out, std::ios::binary);
    old << "the previous model";
  }
  // llama.cpp fails half-way (after the temporary file exists): the old file is untouched and
  // nothing else is left behind.
  auto failed = quantize(unknown_architecture_model(), out, "Q8_0");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kInvalidModel);
  EXPECT_NE(failed.error().message.find("could not quantize"), std::string::npos)
      << failed.error().message;
  EXPECT_EQ(test::read_file(out), "the previous model");
  EXPECT_EQ(file_count(dir), 1U);

  auto written = quantize(model_path(), out, "Q8_0");
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(written->quantization, "Q8_0");
  EXPECT_EQ(file_count(dir), 1U);
}

TEST(QuantizeTest, MissingInputIsNotFound) {
  const auto dir = test_dir();
  auto result = quantize("/nonexistent/model.gguf", (dir / "out.gguf").string(), "Q8_0");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kNotFound);
  EXPECT_NE(result.error().message.find("/nonexistent/model.gguf"), std::string::npos);
  EXPECT_EQ(file_count(dir), 0U);
}

TEST(QuantizeTest, AFileThatIsNotGgufIsAnInvalidModel) {
  const auto dir = test_dir();
  const auto not_gguf = test::write_temp_file("notes.gguf", "these are not model weights\n");
  auto result = quantize(not_gguf, (dir / "out.gguf").string(), "Q8_0");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidModel);
  EXPECT_NE(result.error().message.find(not_gguf), std::string::npos) << result.error().message;
}

TEST(QuantizeTest, UnknownTypeListsTheKnownOnes) {
  const auto dir = test_dir();
  auto result = quantize(model_path(), (dir / "out.gguf").string(), "Q7_7");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find("'Q7_7'"), std::string::npos);
  EXPECT_NE(result.error().message.find("Q8_0"), std::string::npos) << result.error().message;
  EXPECT_EQ(file_count(dir), 0U);
}

TEST(QuantizeTest, UnwritableOutputNamesThePath) {
  auto missing_dir = quantize(model_path(), "/nonexistent-dir/out.gguf", "Q8_0");
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_EQ(missing_dir.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing_dir.error().message.find("/nonexistent-dir/out.gguf"), std::string::npos)
      << missing_dir.error().message;

  const auto dir = test_dir();
  auto directory = quantize(model_path(), dir.string(), "Q8_0");
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(directory.error().message.find("is a directory"), std::string::npos);
}

TEST(QuantizeTest, RefusesToQuantizeTwice) {
  const auto dir = test_dir();
  const std::string q8 = (dir / "q8.gguf").string();
  ASSERT_TRUE(quantize(model_path(), q8, "Q8_0").ok());
  auto twice = quantize(q8, (dir / "q4.gguf").string(), "Q4_0");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(twice.error().message.find("already quantized"), std::string::npos)
      << twice.error().message;
}

}  // namespace
}  // namespace tandem::engine
