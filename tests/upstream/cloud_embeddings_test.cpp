// An upstream's embeddings answer is read and checked before any of it reaches a client
// (parse_cloud_embeddings), and relayed in the encoding the client asked for.

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "server/embeddings_api.h"
#include "upstream/upstream.h"

namespace tandem::upstream {
namespace {

using nlohmann::json;

std::string base64_of(const std::vector<float>& values) {
  std::string out(4 * ((values.size() * sizeof(float) + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(values.data()),
                                static_cast<int>(values.size() * sizeof(float)));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string answer(const json& data, const json& usage = {{"prompt_tokens", 3}}) {
  return json{{"object", "list"}, {"data", data}, {"model", "m-1"}, {"usage", usage}}.dump();
}

json item(int index, const json& embedding) {
  return {{"object", "embedding"}, {"index", index}, {"embedding", embedding}};
}

TEST(CloudEmbeddingsTest, FloatsAndBase64AreReadInInputOrder) {
  const std::string text =
      answer(json::array({item(1, base64_of({0.5F, -0.25F})), item(0, json::array({0.125, 1}))}));
  auto parsed = parse_cloud_embeddings(text, 2);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->vectors, (std::vector<std::vector<double>>{{0.125, 1.0}, {0.5, -0.25}}));
  EXPECT_EQ(parsed->prompt_tokens, 3);
  EXPECT_EQ(parsed->model, "m-1");
  EXPECT_TRUE(parsed->usage_problem.empty());

  // Without indices, the position; without usage, 0 and nothing to report.
  const std::string bare =
      json{{"data", json::array({{{"embedding", json::array({1, 2})}}})}}.dump();
  auto plain = parse_cloud_embeddings(bare, 1);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->prompt_tokens, 0);
  EXPECT_TRUE(plain->usage_problem.empty());
}

TEST(CloudEmbeddingsTest, AUsageOfTheWrongTypeReadsAsZeroAndIsNamed) {
  auto parsed = parse_cloud_embeddings(
      answer(json::array({item(0, json::array({1}))}), {{"prompt_tokens", "3"}}), 1);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->prompt_tokens, 0);
  EXPECT_EQ(parsed->usage_problem, "usage.prompt_tokens is a string");
  auto null_usage =
      parse_cloud_embeddings(answer(json::array({item(0, json::array({1}))}), json(nullptr)), 1);
  ASSERT_TRUE(null_usage) << null_usage.error().message;
  EXPECT_EQ(null_usage->prompt_tokens, 0);
}

struct MalformedCase {
  std::string name;
  std::string body;
  size_t inputs;
  std::string message;  // a part of the error message, naming what is wrong
};

TEST(CloudEmbeddingsTest, MalformedAnswersFailNamingWhatIsWrong) {
  const json one = json::array({1.0, 2.0});
  const std::vector<MalformedCase> cases = {
      {"not JSON", "{not json", 1, "not a JSON object"},
      {"a list", "[1, 2]", 1, "not a JSON object"},
      {"an error", R"({"error": {"message": "quota"}})", 1, "quota"},
      {"no data", R"({"object": "list"})", 1, "it has no data"},
      {"data null", R"({"data": null})", 1, "data is null"},
      {"too few", answer(json::array({item(0, one)})), 2, "1 vectors for 2 inputs"},
      {"too many", answer(json::array({item(0, one), item(1, one)})), 1, "2 vectors for 1"},
      {"item not an object", answer(json::array({42})), 1, "data[0] is a number"},
      {"index twice", answer(json::array({item(0, one), item(0, one)})), 2, "comes twice"},
      {"index out of range", answer(json::array({item(5, one)})), 1, "data[0].index"},
      {"index a string", answer(json::array({{{"index", "0"}, {"embedding", one}}})), 1,
       "data[0].index is not an integer"},
      {"no embedding", answer(json::array({{{"index", 0}}})), 1, "has no embedding"},
      {"embedding null", answer(json::array({item(0, nullptr)})), 1, "embedding is null"},
      {"strings", answer(json::array({item(0, json::array({"a"}))})), 1, "list of numbers"},
      {"empty vector", answer(json::array({item(0, json::array())})), 1, "list of numbers"},
      {"beyond float", answer(json::array({item(0, json::array({1e39}))})), 1, "float range"},
      {"bad base64", answer(json::array({item(0, "!!!!")})), 1, "base64"},
      {"odd base64", answer(json::array({item(0, "AAA=")})), 1, "base64"},
      {"mixed lengths", answer(json::array({item(0, one), item(1, json::array({1.0}))})), 2,
       "different lengths"},
      {"too deep", std::string(300, '[') + std::string(300, ']'), 1, "nests deeper"},
  };
  for (const auto& c : cases) {
    auto parsed = parse_cloud_embeddings(c.body, c.inputs);
    ASSERT_FALSE(parsed) << c.name;
    EXPECT_NE(parsed.error().message.find(c.message), std::string::npos)
        << c.name << ": " << parsed.error().message;
  }
}

TEST(CloudEmbeddingsTest, TheClientGetsTheEncodingItAskedFor) {
  CloudEmbeddings answer;
  answer.vectors = {{0.5, -0.25, 0.125}};
  answer.prompt_tokens = 4;
  const json floats = server::cloud_embeddings_response(answer, "emb", false, json::object());
  EXPECT_EQ(floats["data"][0]["embedding"], json::array({0.5, -0.25, 0.125}));
  EXPECT_EQ(floats["model"], "emb");
  EXPECT_EQ(floats["usage"], (json{{"prompt_tokens", 4}, {"total_tokens", 4}}));
  const json packed = server::cloud_embeddings_response(answer, "emb", true, json::object());
  EXPECT_EQ(packed["data"][0]["embedding"], base64_of({0.5F, -0.25F, 0.125F}));
}

}  // namespace
}  // namespace tandem::upstream
