// Embeddings from the shipped model (stories260K: no pooling declared, so mean pooling).

#include <cmath>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "test_files.h"

namespace tandem::engine {
namespace {

std::unique_ptr<Engine> open_engine() {
  EngineOptions options;
  options.model_path = test::model_path();
  options.max_sequences = 1;
  options.context_per_sequence = 256;
  options.batch_size = 64;
  options.threads = 1;
  auto opened = Engine::open(options);
  EXPECT_TRUE(opened.ok()) << opened.error().message;
  return opened.ok() ? std::move(opened).value() : nullptr;
}

EmbeddingInput text(const std::string& value) {
  EmbeddingInput input;
  input.text = value;
  return input;
}

Result<EmbeddingResult> embed(Engine& engine, std::vector<EmbeddingInput> inputs) {
  std::promise<Result<EmbeddingResult>> answer;
  auto future = answer.get_future();
  const Status queued = engine.embed(
      std::move(inputs), [&answer](Result<EmbeddingResult> r) { answer.set_value(std::move(r)); });
  if (!queued) {
    return queued.error();
  }
  return future.get();
}

double norm(const std::vector<float>& v) {
  double sum = 0.0;
  for (const float x : v) {
    sum += static_cast<double>(x) * x;
  }
  return std::sqrt(sum);
}

TEST(EmbeddingsTest, VectorsAreNormalisedDeterministicAndBatchedAsOneAtATime) {
  auto engine = open_engine();
  ASSERT_NE(engine, nullptr);
  const std::vector<std::string> texts = {"The cat sat on the mat.", "A dog ran in the park.",
                                          "Lily had a red ball."};
  std::vector<EmbeddingInput> inputs;
  for (const auto& t : texts) {
    inputs.push_back(text(t));
  }
  auto batched = embed(*engine, inputs);
  ASSERT_TRUE(batched.ok()) << batched.error().message;
  ASSERT_EQ(batched->vectors.size(), texts.size());
  EXPECT_EQ(batched->pooling, "mean");
  EXPECT_GT(batched->prompt_tokens, 3);
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto& v = batched->vectors[i];
    ASSERT_EQ(static_cast<int>(v.size()), engine->embedding_dimensions());
    EXPECT_NEAR(norm(v), 1.0, 1e-5);
    auto alone = embed(*engine, {text(texts[i])});
    ASSERT_TRUE(alone.ok());
    for (size_t d = 0; d < v.size(); ++d) {
      EXPECT_NEAR(v[d], alone->vectors[0][d], 1e-4) << "input " << i << " dimension " << d;
    }
  }
  auto again = embed(*engine, inputs);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->vectors, batched->vectors);
  EXPECT_NE(batched->vectors[0], batched->vectors[1]);
}

TEST(EmbeddingsTest, TokenIdsEmbedAsTheTextTheyCameFrom) {
  auto engine = open_engine();
  ASSERT_NE(engine, nullptr);
  auto by_text = embed(*engine, {text("Once upon a time")});
  ASSERT_TRUE(by_text.ok());
  EXPECT_EQ(by_text->prompt_tokens, engine->count_tokens("Once upon a time", true, false).value());
  // The ids the text becomes (BOS included), given as ids: the same vector.
  EmbeddingInput ids;
  ids.is_tokens = true;
  ids.tokens = engine->tokenize("Once upon a time");
  auto by_ids = embed(*engine, {ids});
  ASSERT_TRUE(by_ids.ok()) << by_ids.error().message;
  EXPECT_EQ(by_ids->vectors, by_text->vectors);
}

TEST(EmbeddingsTest, BadInputsAreClearErrorsAtOnce) {
  auto engine = open_engine();
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(embed(*engine, {}).error().code, ErrorCode::kInvalidArgument);
  EmbeddingInput out_of_vocabulary;
  out_of_vocabulary.is_tokens = true;
  out_of_vocabulary.tokens = {1, 999999};
  const auto bad = embed(*engine, {text("fine"), out_of_vocabulary});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("input[1]"), std::string::npos) << bad.error().message;
  std::string long_text;
  for (int i = 0; i < 200; ++i) {
    long_text += "word ";
  }
  const auto too_long = embed(*engine, {text(long_text)});
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().code, ErrorCode::kContextOverflow);
}

}  // namespace
}  // namespace tandem::engine
