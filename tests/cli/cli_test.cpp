// `build/tandem` as its users run it: a real process, real flags, real output.

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "store/review_queue.h"

namespace {

struct Output {
  int exit_code = -1;
  std::string stdout_text;
};

// Runs `build/tandem ARGS` through the shell; stderr is folded into stdout when asked.
Output run_tandem(const std::string& args, bool with_stderr = false) {
  const std::string command =
      std::string(TANDEM_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  Output out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return out;
  }
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    out.stdout_text.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

const std::string kModel = TANDEM_TEST_MODEL;

TEST(CliTest, RunJsonPrintsTheStoryWithPerTokenSignals) {
  auto out = run_tandem("run -m " + kModel + " -p 'Once upon a time' --temp 0 -n 32 --json");
  ASSERT_EQ(out.exit_code, 0) << out.stdout_text;
  auto doc = nlohmann::json::parse(out.stdout_text);
  EXPECT_EQ(doc["text"].get<std::string>().rfind(", there was a little girl named Lily", 0), 0U);
  EXPECT_EQ(doc["finish_reason"], "length");
  EXPECT_EQ(doc["usage"]["completion_tokens"], 32);
  EXPECT_EQ(doc["usage"]["total_tokens"], doc["usage"]["prompt_tokens"].get<int>() +
                                              doc["usage"]["completion_tokens"].get<int>());
  ASSERT_EQ(doc["tokens"].size(), 32U);
  std::string joined;
  for (const auto& token : doc["tokens"]) {
    joined += token["text"].get<std::string>();
    EXPECT_LE(token["logprob"].get<double>(), 0.0);
    EXPECT_GE(token["entropy"].get<double>(), 0.0);
    ASSERT_EQ(token["top"].size(), 5U);
    EXPECT_EQ(token["top"][0]["text"], token["text"]);
  }
  EXPECT_EQ(joined, doc["text"].get<std::string>());
  EXPECT_EQ(doc["model"]["sha256"],
            "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
}

TEST(CliTest, RunStreamsPlainTextByDefault) {
  auto out = run_tandem("run -m " + kModel + " -p 'Once upon a time' --temp 0 -n 12");
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.stdout_text.rfind(", there was a little girl named Lily", 0), 0U)
      << out.stdout_text;
}

TEST(CliTest, RunHonoursStopStrings) {
  auto out =
      run_tandem("run -m " + kModel + " -p 'Once upon a time' --temp 0 -n 40 --stop Lily --json");
  ASSERT_EQ(out.exit_code, 0);
  auto doc = nlohmann::json::parse(out.stdout_text);
  EXPECT_EQ(doc["text"], ", there was a little girl named ");
  EXPECT_EQ(doc["finish_reason"], "stop");
}

TEST(CliTest, MissingModelIsAClearErrorWithExitCode1) {
  auto out = run_tandem("run -m /nonexistent.gguf -p hi", true);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.stdout_text.find("/nonexistent.gguf"), std::string::npos) << out.stdout_text;
}

TEST(CliTest, BadFlagsAreUsageErrorsWithExitCode2) {
  EXPECT_EQ(run_tandem("run -m " + kModel).exit_code, 2);  // no prompt
  EXPECT_EQ(run_tandem("run -m " + kModel + " -p x --temp hot").exit_code, 2);
  EXPECT_EQ(run_tandem("frobnicate").exit_code, 2);
  EXPECT_EQ(run_tandem("").exit_code, 2);
}

TEST(CliTest, InvalidSamplingValuesNameTheField) {
  auto out = run_tandem("run -m " + kModel + " -p x --top-p 0", true);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.stdout_text.find("top_p"), std::string::npos) << out.stdout_text;
}

TEST(CliTest, ModelsInspectJson) {
  auto out = run_tandem("models inspect " + kModel + " --json");
  ASSERT_EQ(out.exit_code, 0);
  auto doc = nlohmann::json::parse(out.stdout_text);
  EXPECT_EQ(doc["architecture"], "llama");
  EXPECT_EQ(doc["sha256"], "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
  EXPECT_EQ(doc["context_length"], 2048);
  EXPECT_EQ(doc["quantization"], "all F32");
  EXPECT_EQ(doc["file_size_bytes"], 1185376);
  EXPECT_EQ(doc["chat_template"], "plain");
}

TEST(CliTest, ModelsInspectText) {
  auto out = run_tandem("models inspect " + kModel);
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_NE(out.stdout_text.find("architecture:    llama"), std::string::npos);
  EXPECT_NE(out.stdout_text.find("sha256:          270cba1b"), std::string::npos);
}

TEST(CliTest, HelpDocumentsEveryFlag) {
  auto top = run_tandem("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.stdout_text.find("run"), std::string::npos);
  EXPECT_NE(top.stdout_text.find("models"), std::string::npos);
  auto run = run_tandem("run --help");
  EXPECT_EQ(run.exit_code, 0);
  for (const char* flag :
       {"--model", "--prompt", "--max-tokens", "--temp", "--seed", "--json", "--stop", "--top-p",
        "--top-k", "--min-p", "--repeat-penalty", "--threads", "--ctx", "--chat", "--ignore-eos"}) {
    EXPECT_NE(run.stdout_text.find(flag), std::string::npos) << flag;
  }
  auto inspect = run_tandem("models inspect --help");
  EXPECT_EQ(inspect.exit_code, 0);
  EXPECT_NE(inspect.stdout_text.find("--json"), std::string::npos);
}

}  // namespace

namespace {

TEST(CliServeTest, BadConfigFailsAtStartNamingTheKeyAndLine) {
  const std::string path = ::testing::TempDir() + "/tandem_bad.yaml";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("server:\n  port: 70000\n", f);
  std::fclose(f);
  auto out = run_tandem("serve --config " + path, true);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.stdout_text.find(path + ":2: server.port: must be between 1 and 65535"),
            std::string::npos)
      << out.stdout_text;
  auto missing = run_tandem("serve --config /nonexistent/tandem.yaml", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.stdout_text.find("/nonexistent/tandem.yaml"), std::string::npos);
}

TEST(CliServeTest, HelpListsTheServeFlags) {
  auto help = run_tandem("serve --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--config", "--host", "--port", "--model", "--verbose"}) {
    EXPECT_NE(help.stdout_text.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(run_tandem("--help").stdout_text.find("serve"), std::string::npos);
}

TEST(CliRouteTest, ExplainsADecisionWithoutAModel) {
  auto out = run_tandem("route 'My card is 4111 1111 1111 1111' --json");
  ASSERT_EQ(out.exit_code, 0) << out.stdout_text;
  const auto doc = nlohmann::json::parse(out.stdout_text);
  EXPECT_EQ(doc["decision"]["tier"], "edge");
  EXPECT_EQ(doc["decision"]["cloud_allowed"], false);
  EXPECT_EQ(doc["signals"]["privacy"]["findings"][0]["detector"], "payment_card");
  EXPECT_EQ(out.stdout_text.find("4111 1111"), std::string::npos);

  auto text = run_tandem("route 'Prove that sqrt(2) is irrational' --explain");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.stdout_text.find("contribution"), std::string::npos);
  // Bytes that are not UTF-8 are replaced in JSON output, never an internal error.
  auto invalid_utf8 =
      run_tandem("route \"$(printf 'caf\\351 \\377')\" --json --client \"$(printf '\\377')\"");
  EXPECT_EQ(invalid_utf8.exit_code, 0) << invalid_utf8.stdout_text;
  auto offline = run_tandem("route hi --cloud-offline --json");
  EXPECT_EQ(nlohmann::json::parse(offline.stdout_text)["decision"]["reasons"][0]["code"],
            "cloud.offline");
}

TEST(CliRouteTest, BadFlagsSayWhatIsWrong) {
  auto bad = run_tandem("route hi --pattern magic", true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.stdout_text.find("X-Tandem-Pattern must be one of"), std::string::npos);
  auto missing = run_tandem("route hi --config /nonexistent.yaml", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.stdout_text.find("/nonexistent.yaml"), std::string::npos);
}

TEST(CliReviewTest, ListsShowsAndAnswersTickets) {
  const std::string db = ::testing::TempDir() + "cli-review.db";
  std::remove(db.c_str());
  auto empty = run_tandem("review list --db " + db + " --json");
  ASSERT_EQ(empty.exit_code, 0) << empty.stdout_text;
  EXPECT_EQ(nlohmann::json::parse(empty.stdout_text).size(), 0U);
  auto unknown = run_tandem("review show rev_000000000000000000000000 --db " + db, true);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.stdout_text.find("rev_000000000000000000000000"), std::string::npos);
  auto malformed = run_tandem("review answer nope 'x' --reviewer bob --db " + db, true);
  EXPECT_EQ(malformed.exit_code, 1);
  auto no_db = run_tandem("review list", true);
  EXPECT_EQ(no_db.exit_code, 1);
  EXPECT_NE(no_db.stdout_text.find("--db"), std::string::npos);

  // A ticket as the gateway files it, answered from the command line.
  std::string id;
  {
    auto database = tandem::store::Database::open(db);
    ASSERT_TRUE(database) << database.error().message;
    tandem::store::ReviewQueue queue(database.value());
    tandem::store::NewTicket ticket;
    ticket.model = "tandem";
    ticket.request_json = R"({"model":"tandem","messages":[{"role":"user","content":"Refund?"}]})";
    ticket.prompt_text = "Refund?";
    ticket.reason = "review rule legal";
    auto created = queue.create(ticket, 1000);
    ASSERT_TRUE(created) << created.error().message;
    id = created->id;
  }
  auto listed = run_tandem("review list --db " + db);
  EXPECT_NE(listed.stdout_text.find(id), std::string::npos) << listed.stdout_text;
  auto answered = run_tandem("review answer " + id +
                             " 'Yes, within 30 days.' --reviewer bob --db " + db + " --json");
  ASSERT_EQ(answered.exit_code, 0) << answered.stdout_text;
  const auto ticket = nlohmann::json::parse(answered.stdout_text);
  EXPECT_EQ(ticket["status"], "answered");
  EXPECT_EQ(ticket["completion"]["choices"][0]["message"]["content"], "Yes, within 30 days.");
  auto twice = run_tandem("review answer " + id + " 'No' --reviewer eve --db " + db, true);
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_NE(twice.stdout_text.find("already answered by bob"), std::string::npos);
  std::remove(db.c_str());
}

}  // namespace
