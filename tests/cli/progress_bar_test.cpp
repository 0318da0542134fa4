// The progress bar's frames, its rate limit and when it is shown at all, with a fake clock and a
// string for a terminal.

#include "cli/progress_bar.h"

#include <atomic>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli/terminal_progress.h"

namespace tandem::cli {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kErase = "\x1b[K";

TEST(ProgressRender, KnownTotalShowsBarCountsPercentRateAndTimeLeft) {
  // 50 of 200 in 2 s: 25/s, 150 left take 6 s.
  const std::string line =
      render_progress({.label = "scoring prompts", .done = 50, .total = 200, .elapsed_s = 2.0});
  EXPECT_EQ(line, "scoring prompts [######...................] 50/200  25%  25/s  ETA 0:06");
  EXPECT_LT(line.size(), 80U);
}

TEST(ProgressRender, TheBarKeepsItsSizeAsTheCountsAndRateGrow) {
  const auto bar_of = [](std::size_t done, double elapsed) {
    const std::string line = render_progress(
        {.label = "routing prompts", .done = done, .total = 14037, .elapsed_s = elapsed});
    return line.substr(line.find('['), line.find(']') - line.find('[') + 1);
  };
  EXPECT_EQ(bar_of(0, 0).size(), bar_of(7, 0.001).size());
  EXPECT_EQ(bar_of(7, 0.001).size(), bar_of(14037, 5000).size());
}

TEST(ProgressRender, NoRateOrTimeLeftBeforeTheFirstStep) {
  EXPECT_EQ(render_progress({.label = "fitting", .done = 0, .total = 4, .elapsed_s = 1.0}),
            "fitting [..............................] 0/4  0%");
}

TEST(ProgressRender, UnknownTotalShowsTheCountRateAndElapsedTime) {
  EXPECT_EQ(render_progress({.label = "replaying", .done = 1234, .total = 0, .elapsed_s = 2.0}),
            "replaying 1234  617/s  0:02");
  EXPECT_EQ(render_progress({.label = "loading", .done = 0, .total = 0, .elapsed_s = 3.0}),
            "loading");
}

TEST(ProgressRender, DoneBeyondTheTotalIsShownAsComplete) {
  EXPECT_EQ(render_progress({.label = "x", .done = 12, .total = 10, .elapsed_s = 1.0, .width = 52}),
            "x [#############] 10/10  100%  12/s  ETA 0:00");
}

TEST(ProgressRender, NeverAsWideAsTheTerminal) {
  const std::string label(150, 'l');
  for (std::size_t width = 0; width <= 160; ++width) {
    for (std::size_t total : {std::size_t{0}, std::size_t{1000000}}) {
      const std::string line = render_progress(
          {.label = label, .done = 123456, .total = total, .elapsed_s = 7.5, .width = width});
      EXPECT_LT(line.size(), std::max<std::size_t>(width, 1)) << width;
    }
  }
}

TEST(ProgressRender, ANarrowTerminalLosesTheBarThenTheLabel) {
  const ProgressFrame frame{
      .label = "choosing the L2 penalty", .done = 3, .total = 48, .elapsed_s = 1.0, .width = 50};
  EXPECT_EQ(render_progress(frame), "choosing the L2 penalty 3/48  6%  3.0/s  ETA 0:15");
  ProgressFrame narrow = frame;
  narrow.width = 40;
  EXPECT_EQ(render_progress(narrow), "choosing the 3/48  6%  3.0/s  ETA 0:15");
}

TEST(ProgressFormat, Durations) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(7.4), "0:07");
  EXPECT_EQ(format_duration(754), "12:34");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-3), "0:00");
  EXPECT_EQ(format_duration(1e12), "--:--");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "--:--");
}

TEST(ProgressFormat, Rates) {
  EXPECT_EQ(format_rate(0.5), "0.5/s");
  EXPECT_EQ(format_rate(12.3), "12/s");
  EXPECT_EQ(format_rate(456), "456/s");
  EXPECT_EQ(format_rate(8100), "8.1k/s");
  EXPECT_EQ(format_rate(81000), "81k/s");
  EXPECT_EQ(format_rate(2.3e6), "2.3M/s");
}

// A bar on a string, with a clock the test moves.
class ProgressBarTest : public ::testing::Test {
 protected:
  ProgressBar::Clock::time_point now_{std::chrono::seconds(1000)};
  std::vector<std::string> writes_;
  ProgressBar bar_{[this](std::string_view bytes) { writes_.emplace_back(bytes); }, 80,
                   [this] { return now_; }};
};

TEST_F(ProgressBarTest, DrawsAtOnceThenAtMostEveryHundredMilliseconds) {
  bar_.phase("scoring prompts", 100);
  ASSERT_EQ(writes_.size(), 1U);
  EXPECT_EQ(writes_[0],
            "\rscoring prompts [.........................] 0/100  0%" + std::string(kErase));
  for (std::size_t done = 1; done <= 9; ++done) {
    now_ += milliseconds(10);
    bar_.update(done);
  }
  EXPECT_EQ(writes_.size(), 1U) << "90 ms after the first frame: nothing drawn";
  now_ += milliseconds(10);
  bar_.update(10);
  ASSERT_EQ(writes_.size(), 2U);
  // 10 of 100 in 100 ms: 100/s, 90 left take 0.9 s.
  EXPECT_EQ(writes_[1],
            "\rscoring prompts [##.......................] 10/100  10%  100/s  "
            "ETA 0:01" +
                std::string(kErase));
}

TEST_F(ProgressBarTest, APhaseStartsItsCountAndClockAgain) {
  bar_.phase("reading traces", 2);
  now_ += milliseconds(500);
  bar_.update(2);
  now_ += milliseconds(500);
  bar_.phase("fitting", 0);
  ASSERT_EQ(writes_.size(), 3U);
  EXPECT_EQ(writes_[2], "\rfitting" + std::string(kErase));
  now_ += milliseconds(2000);
  bar_.update(3);
  EXPECT_EQ(writes_.back(), "\rfitting 3  1.5/s  0:02" + std::string(kErase));
}

TEST_F(ProgressBarTest, FinishClearsTheLineOnceAndOnlyIfSomethingWasDrawn) {
  bar_.finish();
  EXPECT_TRUE(writes_.empty());
  bar_.phase("x", 3);
  bar_.finish();
  bar_.finish();
  ASSERT_EQ(writes_.size(), 2U);
  EXPECT_EQ(writes_[1], "\r" + std::string(kErase));
}

TEST_F(ProgressBarTest, AfterFinishTheNextReportDrawsAtOnce) {
  bar_.phase("first", 1);
  bar_.finish();
  bar_.phase("second", 1);  // same instant: not held back by the rate limit
  ASSERT_EQ(writes_.size(), 3U);
  EXPECT_EQ(writes_[2].substr(0, 7), "\rsecond");
}

TEST(ProgressBarThreads, ReportsFromSeveralThreadsNeverWriteAtOnce) {
  std::atomic<bool> in_sink{false};
  std::atomic<int> overlapping{0};
  std::atomic<int> frames{0};
  std::atomic<long> ticks{0};
  ProgressBar bar(
      [&](std::string_view) {
        overlapping += in_sink.exchange(true) ? 1 : 0;
        ++frames;
        in_sink = false;
      },
      80,  // every reading of the clock is 200 ms after the last: most reports draw
      [&] { return ProgressBar::Clock::time_point{} + milliseconds(200) * ++ticks; });
  bar.phase("x", 4000);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&bar, t] {
      for (std::size_t i = 0; i < 1000; ++i) {
        bar.update(t * 1000 + i);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  bar.finish();
  EXPECT_GE(frames.load(), 2);
  EXPECT_EQ(overlapping.load(), 0);
}

TEST(ProgressChoiceTest, ShownOnlyOnATerminalThatIsNotDumbAndNotForPrograms) {
  struct Case {
    ProgressChoice choice;
    bool terminal;
    const char* term;
    bool shown;
  };
  const Case cases[] = {
      {{}, true, "xterm-256color", true},
      {{}, true, nullptr, true},
      {{}, false, "xterm", false},                    // piped or redirected
      {{}, true, "dumb", false},                      // '\r' would show as text
      {{.json = true}, true, "xterm", false},         // --json
      {{.no_progress = true}, true, "xterm", false},  // --no-progress
      {{.quiet_log = false}, true, "xterm", false},   // llama.cpp's log owns stderr
  };
  for (const auto& c : cases) {
    EXPECT_EQ(progress_wanted(c.choice, c.terminal, c.term), c.shown)
        << c.terminal << " " << (c.term ? c.term : "(unset)");
  }
}

}  // namespace
}  // namespace tandem::cli
