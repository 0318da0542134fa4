#pragma once
// A cases file of JSON lines (tests/<component>/cases/*.jsonl), read whole: every line one case.
// A file that cannot be opened fails the calling test, naming the path. Header-only.

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::test {

inline std::vector<nlohmann::json> read_json_lines(const std::string& path) {
  std::vector<nlohmann::json> cases;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::string line;
  while (std::getline(in, line)) {
    cases.push_back(nlohmann::json::parse(line));
  }
  return cases;
}

}  // namespace tandem::test
