#include "telemetry/skew_monitor.h"

#include <cctype>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::telemetry {
namespace {

constexpr const char* kShaA = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789";
constexpr const char* kShaB = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

CanaryRun run(int64_t at_ms, size_t prompts, size_t agreed, size_t failed = 0) {
  return {at_ms, prompts, agreed, failed, kShaA, "gpt-4o"};
}

const SkewMonitor::Alert* find_alert(const SkewMonitor::Snapshot& snapshot,
                                     const std::string& code) {
  for (const auto& alert : snapshot.alerts) {
    if (alert.code == code) {
      return &alert;
    }
  }
  return nullptr;
}

struct VersionCase {
  const char* a;
  const char* b;
  int expected;  // sign of compare_versions(a, b)
};

TEST(CompareVersionsTest, Table) {
  const VersionCase cases[] = {
      {"1.10", "1.9", 1},
      {"2", "2.0", 0},
      {"2", "2.0.0.0", 0},
      {"v1.2.0", "1.2", 0},
      {"V3", "v3.0", 0},
      {"1.2.10", "1.2.9", 1},
      {"1.2.3.4", "1.2.3", 1},
      {"1.02", "1.2", 0},
      {"99999999999999999999999", "9999999999999999999999", 1},  // no overflow
      {"1.2-rc1", "1.2", -1},  // a pre-release comes before its release
      {"1.2-rc1", "1.1", 1},   // ...but after the release before
      {"1.2-rc10", "1.2-rc9", 1},
      {"1.2-alpha", "1.2-beta", -1},
      {"1.2.x", "1.2", -1},
      {"1.2+cuda", "1.2", 0},  // build metadata does not order
      {"1.2.", "1.2", 0},
      {"", "", 0},
      {"", "0", -1},  // not a version: older than every version
      {"", "1", -1},
      {"latest", "0.1", -1},
      {"abc", "abd", -1},  // two non-versions: bytewise
  };
  for (const VersionCase& c : cases) {
    const int forward = compare_versions(c.a, c.b);
    const int backward = compare_versions(c.b, c.a);
    EXPECT_EQ((forward > 0) - (forward < 0), c.expected) << c.a << " vs " << c.b;
    EXPECT_EQ((backward > 0) - (backward < 0), -c.expected) << c.b << " vs " << c.a;
  }
}

TEST(CompareVersionsTest, IsVersion) {
  for (const char* yes : {"1", "v1.2", "V2", "1.2-rc1", "2024.06", "0"}) {
    EXPECT_TRUE(is_version(yes)) << yes;
  }
  for (const char* no : {"", "v", "abc", "-1", "1.2 beta", "1.2\n", ".1"}) {
    EXPECT_FALSE(is_version(no)) << no;
  }
  EXPECT_FALSE(is_version(std::string(300, '1')));
}

TEST(SkewOptionsTest, ValidateNamesTheField) {
  EXPECT_EQ(SkewOptions{}.validate(), "");
  SkewOptions good;
  good.min_edge_version = "v1.3";
  good.allowed_edge_sha256 = {"ABCDEF012345", kShaB};
  EXPECT_EQ(good.validate(), "");

  struct Case {
    const char* expected;  // a piece of the message
    void (*spoil)(SkewOptions&);
  };
  const Case cases[] = {
      {"min_edge_version \"newest\" is not a version",
       [](SkewOptions& o) { o.min_edge_version = "newest"; }},
      {"allowed_edge_sha256[1] \"abcdef01\" has 8 hex digits; at least 12",
       [](SkewOptions& o) {
         o.allowed_edge_sha256 = {kShaA, "abcdef01"};
       }},
      {"allowed_edge_sha256[0] \"\" has 0 hex digits",
       [](SkewOptions& o) { o.allowed_edge_sha256 = {""}; }},
      {"allowed_edge_sha256[0] \"xyz0123456789\" is not hexadecimal",
       [](SkewOptions& o) { o.allowed_edge_sha256 = {"xyz0123456789"}; }},
      {"allowed_edge_sha256[0]",
       [](SkewOptions& o) { o.allowed_edge_sha256 = {std::string(kShaA) + "0"}; }},
      {"min_agreement", [](SkewOptions& o) { o.min_agreement = 1.5; }},
      {"max_agreement_drop", [](SkewOptions& o) { o.max_agreement_drop = 0.0; }},
      {"history", [](SkewOptions& o) { o.history = 0; }},
      {"history", [](SkewOptions& o) { o.history = kMaxCanaryHistory + 1; }},
  };
  for (const Case& c : cases) {
    SkewOptions options;
    c.spoil(options);
    const std::string message = options.validate();
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.expected << " in: " << message;
  }
}

TEST(SkewMonitorTest, MinEdgeVersionPolicy) {
  SkewOptions options;
  options.min_edge_version = "1.3";
  SkewMonitor monitor(options);
  EXPECT_FALSE(monitor.check_edge().allowed);  // nothing known yet

  const struct {
    const char* version;
    bool allowed;
    const char* problem;
  } cases[] = {
      {"1.3", true, ""},
      {"v1.3.0", true, ""},
      {"1.10", true, ""},
      {"1.2", false, "edge model version 1.2 is below operations.version.min_edge_version 1.3"},
      {"1.3-rc1", false,
       "edge model version 1.3-rc1 is below operations.version.min_edge_version 1.3"},
      {"", false,
       "edge model has no general.version; operations.version.min_edge_version 1.3 "
       "requires one"},
      {"latest", false,
       "edge model general.version \"latest\" is not a version; "
       "operations.version.min_edge_version 1.3 requires one"},
  };
  for (const auto& c : cases) {
    monitor.set_edge({"qwen", kShaA, c.version}, 10);
    const auto check = monitor.check_edge();
    EXPECT_EQ(check.allowed, c.allowed) << c.version;
    EXPECT_EQ(check.problem, c.problem) << c.version;
    const auto snapshot = monitor.snapshot();
    const auto* alert = find_alert(snapshot, "skew.edge_version");
    EXPECT_EQ(alert != nullptr, !c.allowed) << c.version;
    if (alert != nullptr) {
      EXPECT_EQ(alert->detail, c.problem);
      EXPECT_EQ(alert->since_ms, 10);
    }
  }

  SkewMonitor no_policy(SkewOptions{});
  EXPECT_TRUE(no_policy.check_edge().allowed);
  no_policy.set_edge({"qwen", "", ""}, 0);
  EXPECT_TRUE(no_policy.check_edge().allowed);
}

TEST(SkewMonitorTest, AllowedShaPrefixes) {
  SkewOptions options;
  options.allowed_edge_sha256 = {"ABCDEF012345"};  // a 12-digit prefix, any case
  SkewMonitor monitor(options);
  monitor.set_edge({"qwen", kShaA, "1.0"}, 0);
  EXPECT_TRUE(monitor.check_edge().allowed);

  monitor.set_edge({"qwen", kShaB, "1.0"}, 1);
  auto check = monitor.check_edge();
  EXPECT_FALSE(check.allowed);
  EXPECT_EQ(check.problem, "edge model sha256 " + std::string(kShaB) +
                               " is not in operations.version.allowed_edge_sha256");

  monitor.set_edge({"qwen", "", "1.0"}, 2);
  EXPECT_EQ(monitor.check_edge().problem,
            "edge model has no sha256; operations.version.allowed_edge_sha256 requires one");

  // Both policies failing: both problems, in one line.
  options.min_edge_version = "2";
  SkewMonitor both(options);
  both.set_edge({"qwen", kShaB, "1.0"}, 0);
  check = both.check_edge();
  EXPECT_NE(check.problem.find("allowed_edge_sha256; edge model version 1.0 is below"),
            std::string::npos)
      << check.problem;
}

TEST(SkewMonitorTest, ShortShaPrefixIsRefusedAndNeverMatches) {
  SkewOptions options;
  options.allowed_edge_sha256 = {"abcdef"};  // would match a sixteenth of a million models
  EXPECT_NE(options.validate().find("allowed_edge_sha256[0]"), std::string::npos);
  SkewMonitor monitor(options);  // used anyway: the policy fails closed
  monitor.set_edge({"qwen", kShaA, "1.0"}, 0);
  const auto check = monitor.check_edge();
  EXPECT_FALSE(check.allowed);
  EXPECT_NE(check.problem.find("has no valid entry"), std::string::npos) << check.problem;
}

TEST(SkewMonitorTest, EdgeChangeAlertsUntilTheNextCanaryRun) {
  SkewMonitor monitor(SkewOptions{});
  monitor.set_edge({"qwen", kShaA, "1.0"}, 100);
  EXPECT_TRUE(monitor.snapshot().alerts.empty());  // the first model is not a change
  std::string upper = kShaA;
  for (char& c : upper) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  monitor.set_edge({"qwen", upper, "1.0"}, 150);  // the same hash, other case
  EXPECT_EQ(monitor.snapshot().edge_changes, 0u);

  monitor.set_edge({"qwen", kShaB, "1.1"}, 200);
  auto snapshot = monitor.snapshot();
  EXPECT_EQ(snapshot.edge_changes, 1u);
  EXPECT_EQ(snapshot.previous_edge_sha256, kShaA);
  EXPECT_EQ(snapshot.edge_since_ms, 200);
  const auto* alert = find_alert(snapshot, "skew.edge_changed");
  ASSERT_NE(alert, nullptr);
  EXPECT_EQ(alert->since_ms, 200);
  EXPECT_NE(alert->detail.find(kShaB), std::string::npos);

  monitor.record_canary(run(190, 10, 9));  // began before the change: measured the old model
  EXPECT_NE(find_alert(monitor.snapshot(), "skew.edge_changed"), nullptr);
  monitor.record_canary(run(250, 10, 9));
  EXPECT_EQ(find_alert(monitor.snapshot(), "skew.edge_changed"), nullptr);
}

TEST(SkewMonitorTest, CloudModelChangeAlertsUntilTheNextCanaryRun) {
  SkewMonitor monitor(SkewOptions{});
  monitor.observe_cloud("openai", "gpt-4o-2024-08-06", 0);
  monitor.observe_cloud("openai", "gpt-4o-2024-08-06", 10);
  monitor.observe_cloud("anthropic", "claude-sonnet", 5);
  monitor.observe_cloud("anthropic", "", 6);  // did not say: not a change
  EXPECT_TRUE(monitor.snapshot().alerts.empty());

  monitor.observe_cloud("openai", "gpt-4o-2024-11-20", 20);
  auto snapshot = monitor.snapshot();
  ASSERT_EQ(snapshot.cloud.size(), 2u);
  EXPECT_EQ(snapshot.cloud[0].upstream, "anthropic");  // by name
  const CloudModelSeen& openai = snapshot.cloud[1];
  EXPECT_EQ(openai.model, "gpt-4o-2024-11-20");
  EXPECT_EQ(openai.previous_model, "gpt-4o-2024-08-06");
  EXPECT_EQ(openai.changes, 1u);
  EXPECT_EQ(openai.first_seen_ms, 20);
  EXPECT_EQ(openai.changed_at_ms, 20);
  EXPECT_TRUE(openai.unverified);
  EXPECT_EQ(snapshot.cloud[0].last_seen_ms, 5);
  const auto* alert = find_alert(snapshot, "skew.cloud_model_changed");
  ASSERT_NE(alert, nullptr);
  EXPECT_EQ(alert->since_ms, 20);
  EXPECT_EQ(alert->detail,
            "upstream openai reported model gpt-4o-2024-11-20 (was gpt-4o-2024-08-06); no canary "
            "run since");

  monitor.record_canary(run(15, 10, 9));
  EXPECT_NE(find_alert(monitor.snapshot(), "skew.cloud_model_changed"), nullptr);
  monitor.record_canary(run(30, 10, 9));
  snapshot = monitor.snapshot();
  EXPECT_EQ(find_alert(snapshot, "skew.cloud_model_changed"), nullptr);
  EXPECT_FALSE(snapshot.cloud[1].unverified);
  EXPECT_EQ(snapshot.cloud[1].changes, 1u);  // the history of changes stays
}

TEST(SkewMonitorTest, LowAgreementAlerts) {
  SkewMonitor monitor(SkewOptions{});  // min_agreement 0.6
  monitor.record_canary(run(0, 100, 90));
  monitor.record_canary(run(100, 100, 50));
  monitor.record_canary(run(200, 100, 55));
  auto snapshot = monitor.snapshot();
  ASSERT_TRUE(snapshot.last_agreement.has_value());
  EXPECT_DOUBLE_EQ(*snapshot.last_agreement, 0.55);
  const auto* alert = find_alert(snapshot, "skew.low_agreement");
  ASSERT_NE(alert, nullptr);
  EXPECT_EQ(alert->since_ms, 100);  // low since the run at 100
  EXPECT_EQ(alert->detail,
            "canary agreement 0.550 (55 of 100 answered) is below min_agreement 0.600");

  // Prompts a tier failed do not count against agreement: 50 of 80 answered is 0.625.
  monitor.record_canary(run(300, 100, 50, 20));
  snapshot = monitor.snapshot();
  EXPECT_DOUBLE_EQ(*snapshot.last_agreement, 0.625);
  EXPECT_EQ(find_alert(snapshot, "skew.low_agreement"), nullptr);
}

// Earlier runs 0.90, 0.80, 0.85 (mean 0.85) and an all-failed run that has no agreement and so
// does not count; the last at 0.62 is 0.23 below the mean, over max_agreement_drop 0.2, while
// still above min_agreement 0.6. At 0.70 it is 0.15 below: no alert.
TEST(SkewMonitorTest, AgreementDropAgainstTheMeanOfEarlierRuns) {
  for (const size_t last_agreed : {62u, 70u}) {
    SkewMonitor monitor(SkewOptions{});
    monitor.record_canary(run(0, 100, 90));
    monitor.record_canary(run(1, 100, 80));
    monitor.record_canary(run(2, 20, 0, 20));
    monitor.record_canary(run(3, 100, 85));
    monitor.record_canary(run(4, 100, last_agreed));
    const auto snapshot = monitor.snapshot();
    ASSERT_TRUE(snapshot.mean_agreement.has_value());
    EXPECT_NEAR(*snapshot.mean_agreement, 0.85, 1e-12);
    EXPECT_EQ(find_alert(snapshot, "skew.low_agreement"), nullptr);
    const auto* drop = find_alert(snapshot, "skew.agreement_drop");
    if (last_agreed == 62) {
      ASSERT_NE(drop, nullptr);
      EXPECT_EQ(drop->since_ms, 4);
      EXPECT_EQ(drop->detail,
                "canary agreement 0.620 is 0.230 below the mean 0.850 of the 3 earlier runs "
                "(max_agreement_drop 0.200)");
    } else {
      EXPECT_EQ(drop, nullptr);
    }
  }
}

TEST(SkewMonitorTest, HistoryIsBounded) {
  SkewOptions options;
  options.history = 5;
  SkewMonitor monitor(options);
  for (int i = 0; i < 12; ++i) {
    monitor.record_canary(run(i, 10, i < 8 ? 2 : 9));
  }
  const auto snapshot = monitor.snapshot();
  ASSERT_EQ(snapshot.history.size(), 5u);
  EXPECT_EQ(snapshot.history.front().at_ms, 7);
  EXPECT_EQ(snapshot.history.back().at_ms, 11);
  // The mean is over the runs kept: 0.2, 0.9, 0.9, 0.9 before the last.
  EXPECT_NEAR(*snapshot.mean_agreement, 0.725, 1e-12);
  EXPECT_EQ(find_alert(snapshot, "skew.low_agreement"), nullptr);
}

TEST(SkewMonitorTest, AllFailedRunHasNoAgreement) {
  SkewMonitor monitor(SkewOptions{});
  monitor.record_canary(run(0, 10, 9));
  monitor.record_canary(run(100, 10, 0, 10));
  monitor.record_canary(run(200, 10, 3, 15));  // more failures than prompts: clamped
  auto snapshot = monitor.snapshot();
  EXPECT_FALSE(snapshot.last_agreement.has_value());
  EXPECT_DOUBLE_EQ(*snapshot.mean_agreement, 0.9);
  EXPECT_EQ(snapshot.history.back().failed, 10u);
  EXPECT_EQ(snapshot.history.back().agreed, 0u);
  EXPECT_EQ(find_alert(snapshot, "skew.low_agreement"), nullptr);
  EXPECT_EQ(find_alert(snapshot, "skew.agreement_drop"), nullptr);
  const auto* failed = find_alert(snapshot, "skew.canary_failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->since_ms, 100);
  EXPECT_FALSE(canary_agreement(run(0, 0, 0)).has_value());  // no prompts at all

  monitor.record_canary(run(300, 10, 9));
  EXPECT_TRUE(monitor.snapshot().alerts.empty());
}

TEST(SkewMonitorTest, OddInputIsBounded) {
  SkewOptions options;
  options.history = 0;  // invalid: clamped to 1
  options.min_agreement = std::nan("");
  SkewMonitor monitor(options);
  const std::string huge(100000, 'm');
  monitor.set_edge({huge, huge, huge}, 0);
  for (int i = 0; i < 100; ++i) {
    monitor.observe_cloud("upstream-" + std::to_string(i), huge, i);
  }
  monitor.record_canary({0, 10, 50, 0, huge, huge});  // agreed > prompts
  monitor.record_canary({1, 10, 5, 0, huge, huge});
  const auto snapshot = monitor.snapshot();
  EXPECT_EQ(snapshot.edge.name.size(), kMaxSkewTextBytes);
  EXPECT_EQ(snapshot.cloud.size(), kMaxUpstreams);
  EXPECT_EQ(snapshot.cloud[0].model.size(), kMaxSkewTextBytes);
  ASSERT_EQ(snapshot.history.size(), 1u);
  EXPECT_EQ(snapshot.history[0].cloud_model.size(), kMaxSkewTextBytes);
  EXPECT_DOUBLE_EQ(*snapshot.last_agreement, 0.5);
  EXPECT_NE(find_alert(snapshot, "skew.low_agreement"), nullptr);  // the default 0.6 applies
  EXPECT_DOUBLE_EQ(*canary_agreement({0, 10, 50, 0, "", ""}), 1.0);
}

TEST(SkewMonitorTest, ConcurrentUseIsSafe) {
  SkewOptions options;
  options.history = 16;
  options.min_edge_version = "1.0";
  SkewMonitor monitor(options);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&monitor, t] {
      for (int i = 0; i < 500; ++i) {
        monitor.set_edge({"qwen", i % 2 ? kShaA : kShaB, "1." + std::to_string(i % 3)}, i);
        monitor.observe_cloud("openai", "gpt-" + std::to_string((i + t) % 3), i);
        monitor.record_canary(run(i, 10, static_cast<size_t>(i % 11)));
        monitor.check_edge();
        monitor.snapshot();
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(monitor.snapshot().history.size(), 16u);
}

}  // namespace
}  // namespace tandem::telemetry
