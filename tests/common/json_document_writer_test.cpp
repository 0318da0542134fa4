#include "common/json_document_writer.h"

#include <gtest/gtest.h>

#include "json_generator.h"

namespace tandem {
namespace {

using nlohmann::json;

std::string nlohmann_dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string written(const json& value) {
  std::string text;
  JsonWriter out(text);
  write_json(out, value);
  return text;
}

TEST(JsonDocumentWriterTest, WritesTheBytesNlohmannDumps) {
  testing::JsonGenerator generator(17);
  for (int d = 0; d < 300; ++d) {
    const json document = json::parse(generator.document());
    ASSERT_EQ(written(document), nlohmann_dump(document));
  }
  // Escapes, DEL, non-ASCII text, the integer limits and floats in both notations.
  const json edges = {
      {"text", std::string("q\"b\\s/\b\f\n\r\t\x01\x1f\x7f é 中文 😀")},
      {"ints", {0, -1, INT64_MIN, INT64_MAX, UINT64_MAX}},
      {"floats", {0.0, -0.0, 0.1, 1.5, 1e15, 1e16, 1e-5, 1e300, -2.5e-300, 123456.789}},
      {"empty", {{"object", json::object()}, {"array", json::array()}, {"", nullptr}}},
      {"flags", {true, false}}};
  EXPECT_EQ(written(edges), nlohmann_dump(edges));
}

TEST(JsonDocumentWriterTest, MembersAreWrittenOverTheObjectInItsKeyOrder) {
  const json body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                     {"max_tokens", 4},
                     {"stream", true},
                     {"temperature", 0.2}};
  const std::vector<JsonMember> members = {{"stream", "false"},
                                           {"model", R"("gpt-x")"},
                                           {"a_first", "1"},
                                           {"zz_last", R"({"include_usage":true})"},
                                           {"n", "[]"}};
  json expected = body;
  for (const auto& member : members) {
    expected[std::string(member.key)] = json::parse(member.json);
  }
  EXPECT_EQ(dump_object_with(body, members), nlohmann_dump(expected));
  EXPECT_EQ(dump_object_with(json::object(), {{"model", R"("m")"}}), R"({"model":"m"})");
  EXPECT_EQ(dump_object_with(body, {}), nlohmann_dump(body));
  // What `document[key] = value` does to a document that is not an object.
  EXPECT_EQ(dump_object_with(json(), {{"model", R"("m")"}}), R"({"model":"m"})");
  EXPECT_THROW(dump_object_with(json::array(), {{"model", R"("m")"}}), json::type_error);
}

TEST(JsonDocumentWriterTest, GeneratedObjectsWithMembersMatchNlohmann) {
  testing::JsonGenerator generator(23);
  const std::vector<JsonMember> members = {
      {"model", R"("m")"}, {"stream", "true"}, {"stream_options", R"({"include_usage":true})"}};
  int objects = 0;
  for (int d = 0; d < 600; ++d) {
    json document = json::parse(generator.document());
    if (!document.is_object()) {
      continue;
    }
    ++objects;
    const std::string ours = dump_object_with(document, members);
    for (const auto& member : members) {
      document[std::string(member.key)] = json::parse(member.json);
    }
    ASSERT_EQ(ours, nlohmann_dump(document));
  }
  EXPECT_GT(objects, 60);
}

}  // namespace
}  // namespace tandem
