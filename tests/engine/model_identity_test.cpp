#include "engine/model_identity.h"

#include <gtest/gtest.h>

#include "test_files.h"

namespace tandem::engine {
namespace {

TEST(ModelIdentityTest, InspectsTheShippedModelWithoutLoadingIt) {
  auto id = inspect_model(test::model_path());
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(id->architecture, "llama");
  EXPECT_EQ(id->sha256, "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
  EXPECT_EQ(id->file_size_bytes, 1185376U);
  EXPECT_EQ(id->context_length, 2048U);
  EXPECT_EQ(id->layer_count, 5U);
  EXPECT_EQ(id->embedding_length, 64U);
  EXPECT_EQ(id->head_count, 8U);
  EXPECT_EQ(id->head_count_kv, 4U);
  EXPECT_EQ(id->vocab_size, 512U);
  EXPECT_EQ(id->quantization, "all F32");
  EXPECT_FALSE(id->has_chat_template);
  // 0.29 M parameters, counted from the tensor shapes.
  EXPECT_GT(id->parameter_count, 250000U);
  EXPECT_LT(id->parameter_count, 300000U);
  EXPECT_FALSE(id->name.empty());
}

TEST(ModelIdentityTest, Sha256OfAKnownFile) {
  auto digest = sha256_file(test::write_temp_file("abc.txt", "abc"));
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(digest.value(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(ModelIdentityTest, MissingModelIsNotFound) {
  auto id = inspect_model("/nonexistent.gguf");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace tandem::engine
