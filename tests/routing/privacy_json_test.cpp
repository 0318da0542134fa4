#include "routing/privacy_json.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::routing {
namespace {

using nlohmann::json;
using Pairs = std::vector<std::pair<std::string, std::string>>;

struct JsonCase {
  std::string name;
  std::string body;
  Pairs expect;  // detector, field
  Pairs opaque;  // kind, field
};

Pairs pairs(const json& list) {
  Pairs out;
  for (const auto& item : list) {
    out.emplace_back(item.at(0).get<std::string>(), item.at(1).get<std::string>());
  }
  return out;
}

std::vector<JsonCase> load_cases() {
  const std::string path =
      std::string(TANDEM_SOURCE_DIR) + "/tests/routing/privacy_cases/json_cases.jsonl";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<JsonCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const json c = json::parse(line);
    cases.push_back({c.at("name").get<std::string>(), c.at("body").dump(), pairs(c.at("expect")),
                     pairs(c.value("opaque", json::array()))});
  }
  return cases;
}

TEST(PrivacyJsonTest, EveryFieldOfTheGoldenBodiesIsScannedWithItsPath) {
  const PrivacyScanner scanner;
  const auto cases = load_cases();
  ASSERT_GE(cases.size(), 15u);
  for (const auto& c : cases) {
    auto scanned = scan_json(scanner, c.body);
    ASSERT_TRUE(scanned.ok()) << c.name;
    Pairs found;
    for (const auto& f : scanned->findings) {
      found.emplace_back(f.detector, f.field);
    }
    Pairs opaque;
    for (const auto& o : scanned->opaque) {
      opaque.emplace_back(o.kind, o.field);
    }
    EXPECT_EQ(found, c.expect) << c.name;
    EXPECT_EQ(opaque, c.opaque) << c.name;
    EXPECT_EQ(scanned->total_findings, scanned->findings.size()) << c.name;
  }
}

TEST(PrivacyJsonTest, AParsedDocumentScansAsItsBytesDo) {
  // The router scans the parsed body, the egress guard its serialised bytes: they must agree.
  const PrivacyScanner scanner;
  for (const auto& c : load_cases()) {
    const json document = json::parse(c.body);
    auto from_bytes = scan_json(scanner, document.dump());
    auto from_document = scan_json_document(scanner, document);
    ASSERT_TRUE(from_bytes.ok() && from_document.ok()) << c.name;
    EXPECT_EQ(from_document->findings, from_bytes->findings) << c.name;
    EXPECT_EQ(from_document->opaque, from_bytes->opaque) << c.name;
  }
  const json numbers = {{"a", 4111111111111111}, {"b", -1.5e300}, {"c", {1, 2.25, true, nullptr}}};
  EXPECT_EQ(scan_json_document(scanner, numbers)->findings,
            scan_json(scanner, numbers.dump())->findings);
  json deep = "jane@example.org";
  for (int i = 0; i < 100000; ++i) {
    deep = json::array({std::move(deep)});
  }
  EXPECT_EQ(scan_json_document(scanner, deep)->findings.size(), 1u) << "walked without recursion";
}

TEST(PrivacyJsonTest, APathNeverHoldsTheValue) {
  const PrivacyScanner scanner;
  const std::string body =
      R"({"metadata":{"jane.doe@example.org":{"note":"card 4111 1111 1111 1111"}}})";
  auto scanned = scan_json(scanner, body);
  ASSERT_TRUE(scanned.ok());
  ASSERT_EQ(scanned->findings.size(), 2u);
  EXPECT_EQ(scanned->findings[0].field, "metadata.{key}");
  EXPECT_EQ(scanned->findings[1].field, "metadata.{key}.note");
  const std::string described = describe_fields(scanned->findings);
  EXPECT_EQ(described.find("jane"), std::string::npos) << described;
  EXPECT_EQ(described.find("4111"), std::string::npos) << described;
}

TEST(PrivacyJsonTest, LongKeysAreCutAndOddKeysQuoted) {
  const PrivacyScanner scanner;
  const std::string long_key(200, 'k');
  const json body = {{long_key, "jane.doe@example.org"}, {"a b", {{"x", "bob@example.com"}}}};
  auto scanned = scan_json(scanner, body.dump());
  ASSERT_TRUE(scanned.ok());
  ASSERT_EQ(scanned->findings.size(), 2u);
  EXPECT_EQ(scanned->findings[0].field, "\"a b\".x");
  EXPECT_EQ(scanned->findings[1].field, std::string(64, 'k'));
}

// A long key is cut at a character boundary: a cut inside "é" once threw from the serialiser
// (found by fuzz_egress_guard; fuzz/regressions/egress_guard/long-key-cut-inside-a-character).
TEST(PrivacyJsonTest, ALongKeyIsNeverCutInsideACharacter) {
  const PrivacyScanner scanner;
  const std::string key = std::string(63, 'k') + "\xC3\xA9tail";  // "é" spans bytes 63 and 64
  const json body = {{key, "jane.doe@example.org"}};
  auto scanned = scan_json(scanner, body.dump());
  ASSERT_TRUE(scanned.ok());
  ASSERT_EQ(scanned->findings.size(), 1u);
  EXPECT_EQ(scanned->findings[0].field, std::string(63, 'k'));
  const std::string odd_key = "a " + std::string(61, 'k') + "\xC3\xA9tail";  // quoted
  const json odd = {{odd_key, "jane.doe@example.org"}};
  scanned = scan_json(scanner, odd.dump());
  ASSERT_TRUE(scanned.ok());
  EXPECT_EQ(scanned->findings.at(0).field, "\"a " + std::string(61, 'k') + "\"");
}

TEST(PrivacyJsonTest, Base64BlobsAreOpaque) {
  const PrivacyScanner scanner;
  std::string blob;
  for (int i = 0; i < 100; ++i) {
    blob += "iVBORw0KGgo=";
  }
  const json body = {
      {"messages",
       {{{"role", "user"},
         {"content",
          {{{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64," + blob}}}}}}}}},
      {"extra", blob}};
  auto scanned = scan_json(scanner, body.dump());
  ASSERT_TRUE(scanned.ok());
  ASSERT_EQ(scanned->opaque.size(), 3u);
  EXPECT_EQ(scanned->opaque[0], (OpaqueContent{"extra", "base64"}));
  EXPECT_EQ(scanned->opaque[1], (OpaqueContent{"messages[0].content[0].image_url.url", "base64"}));
  EXPECT_EQ(scanned->opaque[2], (OpaqueContent{"messages[0].content[0]", "image_url"}));
  // Prose of the same length is not a blob.
  const json prose = {{"prompt", std::string(400, 'a') + " and more words"}};
  EXPECT_TRUE(scan_json(scanner, prose.dump())->opaque.empty());
}

TEST(PrivacyJsonTest, ManyFindingsAreCountedButKeptBounded) {
  const PrivacyScanner scanner;
  json list = json::array();
  for (int i = 0; i < 200; ++i) {
    list.push_back("user" + std::to_string(i) + "@example.org");
  }
  auto scanned = scan_json(scanner, json{{"to", list}}.dump());
  ASSERT_TRUE(scanned.ok());
  EXPECT_EQ(scanned->total_findings, 200u);
  EXPECT_EQ(scanned->findings.size(), kMaxJsonFindings);
  EXPECT_EQ(scanned->findings.back().field, "to[63]");
}

TEST(PrivacyJsonTest, ConfiguredRulesApplyToEveryField) {
  PrivacyRules rules;
  rules.patterns = {{"employee_id", "EMP-[0-9]{6}"}};
  rules.keyword_lists = {{"medical", {"diagnosis"}}};
  const auto scanner = PrivacyScanner::create(rules).value();
  const json body = {{"tools", {{{"function", {{"description", "look up EMP-123456"}}}}}},
                     {"metadata", {{"topic", "Diagnosis pending"}}}};
  auto scanned = scan_json(scanner, body.dump());
  ASSERT_TRUE(scanned.ok());
  ASSERT_EQ(scanned->findings.size(), 2u);
  EXPECT_EQ(scanned->findings[0].detector, "keyword:medical");
  EXPECT_EQ(scanned->findings[0].field, "metadata.topic");
  EXPECT_EQ(scanned->findings[1].detector, "pattern:employee_id");
  EXPECT_EQ(scanned->findings[1].field, "tools[0].function.description");
}

TEST(PrivacyJsonTest, WhatIsNotOneJsonValueIsAnErrorNotAPass) {
  const PrivacyScanner scanner;
  for (const char* text :
       {"", "{", R"({"a":"jane@example.org"} trailing)", "not json", R"({"a":1,})", "[1,2"}) {
    auto scanned = scan_json(scanner, text);
    EXPECT_FALSE(scanned.ok()) << text;
  }
  EXPECT_TRUE(scan_json(scanner, "\"jane@example.org\"").ok());
  EXPECT_EQ(scan_json(scanner, "\"jane@example.org\"")->findings.size(), 1u);
}

TEST(PrivacyJsonTest, DeepNestingIsWalkedWithoutRecursion) {
  const PrivacyScanner scanner;
  const size_t depth = 100000;
  const std::string text =
      std::string(depth, '[') + "\"jane@example.org\"" + std::string(depth, ']');
  auto scanned = scan_json(scanner, text);
  ASSERT_TRUE(scanned.ok());
  ASSERT_EQ(scanned->findings.size(), 1u);
  const std::string& field = scanned->findings[0].field;
  EXPECT_LE(field.size(), 300u) << "a deep path keeps its head and tail";
  EXPECT_EQ(field.substr(0, 6), "[0][0]");
  EXPECT_NE(field.find("..."), std::string::npos);
}

}  // namespace
}  // namespace tandem::routing
