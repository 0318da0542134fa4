// The long commands' progress bar as users meet it: `build/tandem` run on a pseudo-terminal
// (util-linux `script`) draws it on stderr and clears it; piped, with --json, with TERM=dumb or
// with --no-progress, not one byte of it is written.

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/shell.h"
#include "routing/prompt_features.h"
#include "store/trace_log.h"

namespace {

using Output = tandem::test::ShellOutput;
using tandem::test::run_shell;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

const std::string kTandem = TANDEM_BINARY;
const std::string kTraces = std::string(TANDEM_TEST_DATA) + "/routing/sample-traces.jsonl";
const std::string kEval =
    kTandem + " eval --data " + kTraces + " --edge llama3.1-8b --cloud llama3.1-405b";
const std::string kCalibrate = kTandem + " calibrate --data " + kTraces +
                               " --edge llama3.1-8b --cloud llama3.1-405b --target-quality 0.9";

// Runs `command` with a pseudo-terminal for its stdin, stdout and stderr; stdout goes to a file
// (the command's result), so what comes back is what the terminal showed of stderr.
struct TerminalRun {
  Output terminal;
  std::string stdout_text;
};

// A file of this test process's own: ctest runs the tests of this file side by side.
std::string own_temp_file(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(::getpid()) + "-" + name;
}

TerminalRun on_terminal(const std::string& command, const std::string& term = "xterm") {
  const std::string out_file = own_temp_file("progress-stdout.txt");
  const std::string inner = command + " > " + out_file;
  EXPECT_EQ(inner.find('\''), std::string::npos) << "quoted below";
  TerminalRun run;
  run.terminal =
      run_shell("TERM=" + term + " script -qfec '" + inner + "' /dev/null < /dev/null 2>&1");
  run.stdout_text = read_all(out_file);
  return run;
}

bool has_progress_bytes(const std::string& text) {
  return text.find('\r') != std::string::npos || text.find('\x1b') != std::string::npos;
}

// What a terminal shows of a bar: frames that each rewrite the line ("\r...\x1b[K"), the first
// one of the first phase (drawn at once; later ones only when 100 ms have passed, which a small
// file may not give), never a new line, and the line cleared at the end.
void expect_a_bar_that_is_cleared(const std::string& shown, const std::string& first_phase) {
  EXPECT_EQ(shown.rfind("\r" + first_phase, 0), 0U) << shown;
  EXPECT_EQ(shown.find('\n'), std::string::npos) << shown;
  const std::string cleared = "\r\x1b[K";
  ASSERT_GT(shown.size(), cleared.size()) << shown;
  EXPECT_EQ(shown.substr(shown.size() - cleared.size()), cleared) << shown;
  size_t frames = 0;
  for (size_t at = shown.find('\r'); at != std::string::npos; at = shown.find('\r', at + 1)) {
    const size_t end = shown.find("\x1b[K", at);
    ASSERT_NE(end, std::string::npos) << "a frame without its erase: " << shown.substr(at);
    const size_t next = shown.find('\r', at + 1);
    EXPECT_EQ(next == std::string::npos ? shown.size() : next, end + 3) << "frame after frame";
    ++frames;
  }
  EXPECT_GE(frames, 2U);
}

TEST(CliProgress, EvalOnATerminalDrawsOnStderrThenClearsTheLine) {
  const TerminalRun run = on_terminal(kEval);
  ASSERT_EQ(run.terminal.exit_code, 0) << run.terminal.stdout_text;
  expect_a_bar_that_is_cleared(run.terminal.stdout_text, "reading traces");
  // The result on stdout is untouched.
  EXPECT_EQ(run.stdout_text.rfind("tandem eval: 495 queries", 0), 0U) << run.stdout_text;
  EXPECT_FALSE(has_progress_bytes(run.stdout_text));
}

TEST(CliProgress, CalibrateLeavingTasksOutDrawsOnStderrThenClearsTheLine) {
  const TerminalRun run = on_terminal(kCalibrate + " --left-out-tasks");
  ASSERT_EQ(run.terminal.exit_code, 0) << run.terminal.stdout_text;
  expect_a_bar_that_is_cleared(run.terminal.stdout_text, "reading traces");
  EXPECT_EQ(run.stdout_text.rfind("calibrated the learned cascade", 0), 0U) << run.stdout_text;
  EXPECT_FALSE(has_progress_bytes(run.stdout_text));
}

TEST(CliProgress, QuantizeAndDriftOnATerminalDrawThenClear) {
  const std::string dir = ::testing::TempDir();
  const std::string q8 = dir + "/progress-q8.gguf";
  const std::string model = TANDEM_TEST_MODEL;
  const TerminalRun quantized =
      on_terminal(kTandem + " models quantize " + model + " " + q8 + " --type Q8_0");
  ASSERT_EQ(quantized.terminal.exit_code, 0) << quantized.terminal.stdout_text;
  expect_a_bar_that_is_cleared(quantized.terminal.stdout_text, "quantizing tensors");
  EXPECT_EQ(quantized.stdout_text.rfind("wrote " + q8, 0), 0U) << quantized.stdout_text;

  const std::string prompts = dir + "/progress-prompts.txt";
  std::ofstream(prompts) << "Once upon a time\nThe little dog was sad because\n";
  const std::string drift =
      kTandem + " drift --reference " + model + " --candidate " + q8 + " --prompts " + prompts;
  const TerminalRun measured = on_terminal(drift);
  ASSERT_EQ(measured.terminal.exit_code, 0) << measured.terminal.stdout_text;
  expect_a_bar_that_is_cleared(measured.terminal.stdout_text, "hashing the reference model");
  EXPECT_FALSE(has_progress_bytes(measured.stdout_text));
  // With --verbose llama.cpp's log owns stderr: no bar to tangle with it.
  const TerminalRun verbose = on_terminal(drift + " --verbose");
  ASSERT_EQ(verbose.terminal.exit_code, 0);
  EXPECT_EQ(verbose.terminal.stdout_text.find("\x1b[K"), std::string::npos);
  EXPECT_NE(verbose.terminal.stdout_text.find("llama"), std::string::npos) << "the log is shown";
}

// A gateway's routing database with `n` edge answers of the cascade.
std::string trace_database(size_t n) {
  const std::string path = own_temp_file("progress-traces.db");
  std::filesystem::remove(path);
  auto database = tandem::store::Database::open(path);
  EXPECT_TRUE(database) << database.error().message;
  tandem::store::TraceLog log(database.value());
  for (size_t i = 0; i < n; ++i) {
    tandem::store::TraceRecord r;
    r.unix_ms = 1764478200000 + static_cast<int64_t>(i) * 1000;
    r.request_id = "req-" + std::to_string(i);
    r.model = "tandem";
    r.pattern = "cascade";
    r.tier = "edge";
    r.kind = "open";
    r.reason_codes = {"pattern.cascade"};
    r.features.assign(tandem::routing::kFeatureCount, 0.0F);
    r.confidence = tandem::store::TraceConfidence{20, -0.1, -0.2, 0, 0, 0.8, 0.5};
    EXPECT_TRUE(log.append(r));
  }
  return path;
}

TEST(CliProgress, ReplayCountsTheRequestsItDecidesAgain) {
  const std::string db = trace_database(3);
  const std::string config = own_temp_file("progress-replay.yaml");
  std::ofstream(config) << "routing:\n  pattern: cascade\n";
  const std::string replay = kTandem + " replay --traces " + db + " --config " + config;
  const TerminalRun all = on_terminal(replay);
  ASSERT_EQ(all.terminal.exit_code, 0) << all.terminal.stdout_text;
  expect_a_bar_that_is_cleared(all.terminal.stdout_text, "replaying requests [");
  EXPECT_NE(all.terminal.stdout_text.find(" 0/3  0%"), std::string::npos)
      << all.terminal.stdout_text;
  EXPECT_EQ(all.stdout_text.rfind("replayed 3 request(s)", 0), 0U) << all.stdout_text;
  const TerminalRun newest = on_terminal(replay + " --limit 2");
  ASSERT_EQ(newest.terminal.exit_code, 0) << newest.terminal.stdout_text;
  expect_a_bar_that_is_cleared(newest.terminal.stdout_text, "reading traces");
  EXPECT_EQ(on_terminal(replay + " --json").terminal.stdout_text, "");
}

TEST(CliProgress, AnErrorStartsOnTheClearedLine) {
  const TerminalRun run =
      on_terminal(kTandem + " eval --data " + kTraces + " --edge nobody --cloud llama3.1-405b");
  EXPECT_EQ(run.terminal.exit_code, 1) << run.terminal.stdout_text;
  const size_t cleared = run.terminal.stdout_text.rfind("\r\x1b[K");
  ASSERT_NE(cleared, std::string::npos) << run.terminal.stdout_text;
  EXPECT_EQ(run.terminal.stdout_text.find("tandem eval: ", cleared), cleared + 4)
      << run.terminal.stdout_text;
}

TEST(CliProgress, JsonOnATerminalWritesNoProgress) {
  for (const std::string& command : {kEval + " --json", kCalibrate + " --json"}) {
    const TerminalRun run = on_terminal(command);
    ASSERT_EQ(run.terminal.exit_code, 0) << command << "\n" << run.terminal.stdout_text;
    EXPECT_EQ(run.terminal.stdout_text, "") << command;
    EXPECT_FALSE(has_progress_bytes(run.stdout_text)) << command;
    EXPECT_TRUE(nlohmann::json::accept(run.stdout_text)) << command << "\n" << run.stdout_text;
  }
}

TEST(CliProgress, ADumbTerminalOrNoProgressWritesNothing) {
  const TerminalRun dumb = on_terminal(kEval, "dumb");
  ASSERT_EQ(dumb.terminal.exit_code, 0) << dumb.terminal.stdout_text;
  EXPECT_EQ(dumb.terminal.stdout_text, "");
  const TerminalRun flagged = on_terminal(kCalibrate + " --no-progress");
  ASSERT_EQ(flagged.terminal.exit_code, 0) << flagged.terminal.stdout_text;
  EXPECT_EQ(flagged.terminal.stdout_text, "");
  EXPECT_EQ(flagged.stdout_text.rfind("calibrated the learned cascade", 0), 0U)
      << flagged.stdout_text;
}

TEST(CliProgress, PipedStderrGetsNoProgress) {
  for (const std::string& command : {kEval, kCalibrate + " --left-out-tasks"}) {
    const Output out = run_shell("TERM=xterm " + command + " 2>&1");
    ASSERT_EQ(out.exit_code, 0) << command << "\n" << out.stdout_text;
    EXPECT_FALSE(has_progress_bytes(out.stdout_text)) << command << "\n" << out.stdout_text;
  }
}

TEST(CliProgress, LongCommandsListNoProgressInTheirHelp) {
  for (const char* command : {"eval", "calibrate", "router train", "router eval", "models quantize",
                              "drift", "replay", "router train-task"}) {
    const Output help = run_shell(kTandem + " " + command + " --help");
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_NE(help.stdout_text.find("--no-progress"), std::string::npos) << command;
  }
}

}  // namespace
