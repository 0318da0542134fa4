// Replays every seed (fuzz/corpus/<target>/) and every minimised crasher
// (fuzz/regressions/<target>/) through the fuzz targets' bodies in the normal build, so the
// ordinary test suite, and the sanitizer suite, keep every input the fuzzers were given or
// found. A broken property aborts the test binary with its message (fuzz/property_check.h).

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/fuzz_targets.h"

namespace tandem::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzDir = TANDEM_FUZZ_DIR;

struct Replay {
  std::string kind;    // "corpus" or "regressions"
  std::string target;  // the directory's name
  fs::path file;
  std::string test_name;
};

const FuzzTarget* find_target(std::string_view name) {
  for (const FuzzTarget& target : kFuzzTargets) {
    if (target.name == name) {
      return &target;
    }
  }
  return nullptr;
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().filename().string().front() != '.') {  // .gitkeep and the like
        entries.push_back(entry.path());
      }
    }
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

std::string identifier(const std::string& text) {
  std::string out;
  for (const char c : text) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out;
}

std::vector<Replay> all_replays() {
  std::vector<Replay> replays;
  std::vector<std::string> names;
  for (const char* kind : {"corpus", "regressions"}) {
    for (const auto& dir : sorted_entries(kFuzzDir / kind)) {
      for (const auto& file : sorted_entries(dir)) {
        Replay r{kind, dir.filename().string(), file, ""};
        r.test_name = identifier(r.kind + "_" + r.target + "_" + file.filename().string());
        while (std::find(names.begin(), names.end(), r.test_name) != names.end()) {
          r.test_name += "_";
        }
        names.push_back(r.test_name);
        replays.push_back(std::move(r));
      }
    }
  }
  return replays;
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void PrintTo(const Replay& replay, std::ostream* out) {
  *out << replay.file;
}

class FuzzReplay : public testing::TestWithParam<Replay> {};

TEST_P(FuzzReplay, RunsCleanly) {
  const Replay& replay = GetParam();
  const FuzzTarget* target = find_target(replay.target);
  ASSERT_NE(target, nullptr) << "fuzz/" << replay.kind << "/" << replay.target
                             << "/ names no target in fuzz/fuzz_targets.h";
  const std::string bytes = read_bytes(replay.file);
  target->run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

INSTANTIATE_TEST_SUITE_P(Inputs, FuzzReplay, testing::ValuesIn(all_replays()),
                         [](const testing::TestParamInfo<Replay>& test) {
                           return test.param.test_name;
                         });

TEST(FuzzTargets, EveryTargetHasSeeds) {
  for (const FuzzTarget& target : kFuzzTargets) {
    EXPECT_FALSE(sorted_entries(kFuzzDir / "corpus" / std::string(target.name)).empty())
        << "fuzz/corpus/" << target.name << "/ holds no seed";
  }
}

TEST(FuzzTargets, EveryDirectoryNamesATarget) {
  for (const char* kind : {"corpus", "regressions"}) {
    for (const auto& dir : sorted_entries(kFuzzDir / kind)) {
      EXPECT_NE(find_target(dir.filename().string()), nullptr)
          << dir << " names no target in fuzz/fuzz_targets.h";
    }
  }
}

TEST(FuzzTargets, EmptyInputIsHandled) {
  for (const FuzzTarget& target : kFuzzTargets) {
    target.run(nullptr, 0);
  }
}

}  // namespace
}  // namespace tandem::fuzz
