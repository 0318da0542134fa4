#include "engine/gguf_file.h"

#include <cstring>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "../support/test_models.h"
#include "test_files.h"

namespace tandem::engine {
namespace {

using test::model_path;
using test::read_file;
using test::write_temp_file;

Result<GgufHeader> parse_bytes(const std::string& bytes) {
  std::istringstream in(bytes);
  return parse_gguf_header(in, bytes.size(), "test.gguf");
}

void expect_invalid(const Result<GgufHeader>& result, const std::string& fragment) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidModel);
  EXPECT_NE(result.error().message.find(fragment), std::string::npos) << result.error().message;
}

TEST(GgufFileTest, ReadsTheShippedModel) {
  auto header = read_gguf_header(model_path());
  ASSERT_TRUE(header.ok()) << header.error().message;
  EXPECT_EQ(header->version, 3U);
  EXPECT_EQ(header->get_string("general.architecture"), "llama");
  EXPECT_EQ(header->get_uint("llama.context_length"), 2048U);
  EXPECT_EQ(header->get_uint("llama.block_count"), 5U);
  EXPECT_FALSE(header->tensors.empty());
  EXPECT_EQ(header->required_file_size, 1185376U);
}

TEST(GgufFileTest, MissingFileIsNotFound) {
  auto result = read_gguf_header("/nonexistent/model.gguf");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kNotFound);
  EXPECT_NE(result.error().message.find("/nonexistent/model.gguf"), std::string::npos);
}

TEST(GgufFileTest, DirectoryIsNotAModel) {
  auto result = read_gguf_header(::testing::TempDir());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kNotFound);
}

TEST(GgufFileTest, ForeignFilesAreNotGguf) {
  expect_invalid(parse_bytes(""), "not a GGUF file");
  expect_invalid(parse_bytes("hello, world"), "not a GGUF file");
  std::string model = read_file(model_path());
  model.replace(0, 4, "GGML");
  expect_invalid(parse_bytes(model), "not a GGUF file");
}

TEST(GgufFileTest, TruncatedFilesSayTheyAreTruncated) {
  const std::string model = read_file(model_path());
  for (size_t keep : {size_t{6}, size_t{30}, size_t{1000}, model.size() / 2, model.size() - 1}) {
    SCOPED_TRACE(keep);
    expect_invalid(parse_bytes(model.substr(0, keep)), "truncated");
  }
}

TEST(GgufFileTest, ImpossibleLengthsAreCorruptNotAllocations) {
  std::string model = read_file(model_path());
  // The first metadata key's length sits right after magic, version and the two counts.
  const uint64_t huge = 1ULL << 60;
  std::memcpy(model.data() + 24, &huge, sizeof(huge));
  expect_invalid(parse_bytes(model), "declares a length");
}

// Found by the gguf_header fuzz target: a row's bytes (elements / block * type size) could
// overflow to 0, so a tensor of 2^62 floats needed no bytes and the header was accepted.
TEST(GgufFileTest, TensorSizesThatOverflowAreCorrupt) {
  std::string model = read_file(model_path());
  // token_embd.weight, two dimensions: its name, the dimension count, then the dimensions.
  const size_t name = model.find("token_embd.weight");
  ASSERT_NE(name, std::string::npos);
  const uint64_t dims[2] = {1ULL << 62, 1};
  std::memcpy(model.data() + name + std::strlen("token_embd.weight") + 4, dims, sizeof(dims));
  expect_invalid(parse_bytes(model), "impossible size");
}

TEST(GgufFileTest, UnsupportedVersionIsReported) {
  std::string model = read_file(model_path());
  const uint32_t version = 99;
  std::memcpy(model.data() + 4, &version, sizeof(version));
  expect_invalid(parse_bytes(model), "unsupported GGUF version 99");
}

// Random byte flips in the header must never crash the parser or make it allocate wildly:
// every outcome is a parsed header or a kInvalidModel error.
TEST(GgufFileTest, SurvivesRandomCorruptionOfTheHeader) {
  const std::string model = read_file(model_path());
  auto header = parse_bytes(model);
  ASSERT_TRUE(header.ok());
  const size_t header_end = header->data_offset;
  std::mt19937 rng(1234);
  std::uniform_int_distribution<size_t> where(0, header_end - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 300; ++round) {
    std::string damaged = model.substr(0, header_end + 4096);
    for (int flips = 0; flips < 4; ++flips) {
      damaged[where(rng)] = static_cast<char>(byte(rng));
    }
    auto result = parse_bytes(damaged);
    if (!result.ok()) {
      EXPECT_EQ(result.error().code, ErrorCode::kInvalidModel);
    }
  }
}

// The derived test models (scripts/make-test-models.py) are what they claim to be: the
// architecture, the real chat template and the special tokens the template writes.
TEST(GgufFileTest, DerivedTestModelsCarryRealTemplatesAndTokenizers) {
  struct Expected {
    std::string file, architecture, template_marker, pre_tokenizer;
  };
  const Expected models[] = {
      {"llama3-tiny.gguf", "llama", "<|start_header_id|>", "llama-bpe"},
      {"qwen3-tiny.gguf", "qwen3", "<tool_call>", "qwen2"},
      {"hermes3-tiny.gguf", "llama", "<tool_call>", "llama-bpe"},
  };
  for (const auto& expected : models) {
    SCOPED_TRACE(expected.file);
    const std::string path = test::derived_model(expected.file);
    ASSERT_FALSE(path.empty());
    auto header = read_gguf_header(path);
    ASSERT_TRUE(header.ok()) << header.error().message;
    EXPECT_EQ(header->get_string("general.architecture"), expected.architecture);
    EXPECT_EQ(header->get_uint(expected.architecture + ".context_length"), 4096U);
    EXPECT_EQ(header->get_string("tokenizer.ggml.pre"), expected.pre_tokenizer);
    const auto chat_template = header->get_string("tokenizer.chat_template");
    ASSERT_TRUE(chat_template.has_value());
    EXPECT_NE(chat_template->find(expected.template_marker), std::string::npos);
  }
}

}  // namespace
}  // namespace tandem::engine
