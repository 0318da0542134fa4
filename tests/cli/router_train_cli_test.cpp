// `tandem router train --common-sense`: new weights that lose common sense on prompt pairs are
// not written, and saying so names what was lost.

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "../support/shell.h"

namespace {

const std::string kSampleTraces = TANDEM_TEST_DATA "/routing/sample-traces.jsonl";
const std::string kGoldenPairs = TANDEM_TEST_DATA "/../routing/cases/golden_pairs.jsonl";

tandem::test::ShellOutput run_tandem(const std::string& args) {
  return tandem::test::run_shell(std::string(TANDEM_BINARY) + " " + args + " 2>&1");
}

// A scratch folder per test, removed after it.
class RouterTrainCli : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string scratch(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("tandem-router-train-cli-" + std::to_string(::getpid()));
};

std::string train_args(const std::string& out) {
  return "router train --data " + kSampleTraces +
         " --edge llama3.1-8b --cloud llama3.1-405b --no-progress --out " + out;
}

TEST_F(RouterTrainCli, AFitThatLosesCommonSenseIsNotWrittenUnlessForced) {
  const std::string out = scratch("free-fit.json");
  // Fitted freely to one model pair's benchmark rows: the quirks of that pair, not the framework.
  const std::string free_fit =
      train_args(out) + " --prior none --l2 1 --common-sense " + kGoldenPairs;
  auto refused = run_tandem(free_fit);
  EXPECT_EQ(refused.exit_code, 1) << refused.stdout_text;
  EXPECT_NE(refused.stdout_text.find("common sense (prompt pairs ordered"), std::string::npos)
      << refused.stdout_text;
  EXPECT_NE(refused.stdout_text.find("LOST"), std::string::npos);
  EXPECT_NE(refused.stdout_text.find("(shipped weights: "), std::string::npos);
  EXPECT_NE(refused.stdout_text.find("lose common sense on the prompt pairs"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out));

  auto forced = run_tandem(free_fit + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.stdout_text;
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST_F(RouterTrainCli, TheDefaultFitKeepsCommonSenseAndIsWritten) {
  const std::string out = scratch("default-fit.json");
  auto trained = run_tandem(train_args(out) + " --common-sense " + kGoldenPairs);
  EXPECT_EQ(trained.exit_code, 0) << trained.stdout_text;
  EXPECT_NE(trained.stdout_text.find("): kept"), std::string::npos) << trained.stdout_text;
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST_F(RouterTrainCli, AMalformedPairFileIsNamedAndNothingIsTrained) {
  const std::string pairs = scratch("broken-pairs.jsonl");
  std::ofstream(pairs) << "{\"id\": \"a\", \"lang\": \"en\"}\n";
  const std::string out = scratch("never.json");
  auto broken = run_tandem(train_args(out) + " --common-sense " + pairs);
  EXPECT_EQ(broken.exit_code, 2) << broken.stdout_text;
  EXPECT_NE(broken.stdout_text.find("--common-sense: "), std::string::npos) << broken.stdout_text;
  EXPECT_NE(broken.stdout_text.find("broken-pairs.jsonl:1"), std::string::npos)
      << broken.stdout_text;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A check that would check nothing is refused, not skipped.
TEST_F(RouterTrainCli, AnEmptyPairFileIsAnError) {
  const std::string pairs = scratch("empty-pairs.jsonl");
  std::ofstream(pairs) << "";
  const std::string out = scratch("never.json");
  auto empty = run_tandem(train_args(out) + " --common-sense " + pairs);
  EXPECT_EQ(empty.exit_code, 2) << empty.stdout_text;
  EXPECT_NE(empty.stdout_text.find("--common-sense: no prompt pairs"), std::string::npos)
      << empty.stdout_text;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
