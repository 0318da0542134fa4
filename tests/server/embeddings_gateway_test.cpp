// POST /v1/embeddings end to end on loopback: the edge model's vectors in OpenAI's shapes.

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "test_harness.h"

namespace tandem::test {
namespace {

json embeddings(const json& input) {
  return {{"model", "tandem"}, {"input", input}};
}

std::vector<float> decode_base64_floats(const std::string& text) {
  std::string bytes(text.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  // EVP_DecodeBlock counts the padding as bytes: a float vector's size is a multiple of 4.
  std::vector<float> out(static_cast<size_t>(n) / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

TEST(EmbeddingsGatewayTest, StringsAndTokenArraysGiveOneNormalisedVectorEach) {
  GatewayUnderTest gateway("");
  auto r = post(gateway.port(), "/v1/embeddings",
                embeddings({"The cat sat.", "A dog ran.", json::array({1, 403, 407})}));
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.json_body();
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["model"], "tandem");
  ASSERT_EQ(body["data"].size(), 3U);
  for (size_t i = 0; i < 3; ++i) {
    const json& item = body["data"][i];
    EXPECT_EQ(item["object"], "embedding");
    EXPECT_EQ(item["index"], i);
    double sum = 0.0;
    for (const auto& x : item["embedding"]) {
      sum += x.get<double>() * x.get<double>();
    }
    EXPECT_NEAR(std::sqrt(sum), 1.0, 1e-4);
  }
  EXPECT_GT(body["usage"]["prompt_tokens"].get<int>(), 3);
  EXPECT_EQ(body["usage"]["total_tokens"], body["usage"]["prompt_tokens"]);
  EXPECT_EQ(body["tandem"]["data_left_device"], false);
  EXPECT_EQ(r.headers["X-Tandem-Tier"], "edge");
}

TEST(EmbeddingsGatewayTest, Base64IsTheSameVectorAsLittleEndianFloats) {
  GatewayUnderTest gateway("");
  auto floats = post(gateway.port(), "/v1/embeddings", embeddings("Lily had a red ball."));
  json request = embeddings("Lily had a red ball.");
  request["encoding_format"] = "base64";
  auto packed = post(gateway.port(), "/v1/embeddings", request);
  ASSERT_EQ(floats.status, 200) << floats.body;
  ASSERT_EQ(packed.status, 200) << packed.body;
  const auto expected = floats.json_body()["data"][0]["embedding"].get<std::vector<float>>();
  const auto decoded =
      decode_base64_floats(packed.json_body()["data"][0]["embedding"].get<std::string>());
  ASSERT_EQ(decoded.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_FLOAT_EQ(decoded[i], expected[i]);
  }
}

TEST(EmbeddingsGatewayTest, BadRequestsNameTheField) {
  GatewayUnderTest gateway("");
  const auto param_of = [&](const json& request) {
    auto r = post(gateway.port(), "/v1/embeddings", request);
    EXPECT_EQ(r.status, 400) << r.body;
    return r.json_body()["error"]["param"];
  };
  EXPECT_EQ(param_of(embeddings("")), "input");
  EXPECT_EQ(param_of(embeddings(json::array())), "input");
  EXPECT_EQ(param_of(embeddings({"fine", 3})), "input");
  EXPECT_EQ(param_of({{"input", "x"}}), "model");
  EXPECT_EQ(param_of({{"model", "gpt-4o"}, {"input", "x"}}), "model");
  json dims = embeddings("x");
  dims["dimensions"] = 3;
  EXPECT_EQ(param_of(dims), "dimensions");
  json format = embeddings("x");
  format["encoding_format"] = "int8";
  EXPECT_EQ(param_of(format), "encoding_format");
  EXPECT_EQ(param_of(embeddings({1, 99999999})), "input");
  EXPECT_EQ(param_of(embeddings(std::string(3000, 'a') + " b c d e f g h i j k")), "input");
  auto get = request(gateway.port(), "GET", "/v1/embeddings");
  EXPECT_EQ(get.status, 405) << get.body;
}

}  // namespace
}  // namespace tandem::test
