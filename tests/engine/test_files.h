#pragma once
// Helpers for tests that need model files: the shipped model, and damaged copies of it.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace tandem::test {

inline std::string model_path() {
  return TANDEM_TEST_MODEL;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes `bytes` to a fresh file under the test's temporary directory and returns its path.
inline std::string write_temp_file(const std::string& name, const std::string& bytes) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   (std::string("tandem_") + info->test_suite_name() + "_" + info->name());
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path.string();
}

}  // namespace tandem::test
