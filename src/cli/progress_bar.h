#pragma once
// A progress bar for long commands: one line, rewritten in place with '\r', that shows the
// phase, done/total, the percentage, the rate and the time left:
//
//   scoring prompts [#########...........] 6210/14037  44%  8.1k/s  ETA 0:01
//
// It writes through an injected sink and reads an injected clock, so tests render it without a
// terminal and drive its rate limit without sleeping; cli/terminal_progress.h binds it to stderr
// when that is a terminal. ASCII only, and never wider than the width it is given, since a line
// that wraps can no longer be rewritten with '\r'.
//
// Thread-safety: thread-safe; one mutex guards the state, so work may report from any thread.

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "common/progress.h"

namespace tandem::cli {

// What one frame shows.
struct ProgressFrame {
  std::string_view label;
  std::size_t done = 0;
  std::size_t total = 0;   // 0: unknown (no bar, percentage or time left)
  double elapsed_s = 0;    // since the phase began: the rate and the time left come from it
  std::size_t width = 80;  // the terminal's columns; the line stays shorter than this
};

// The frame's text, without the leading '\r' or any escape sequence.
std::string render_progress(const ProgressFrame& frame);

// "0:07", "12:34", "1:02:03".
std::string format_duration(double seconds);
// "0.5/s", "12.3/s", "456/s", "8.1k/s", "2.3M/s".
std::string format_rate(double per_second);

class ProgressBar final : public Progress {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;
  using Sink = std::function<void(std::string_view bytes)>;

  // Frames closer together than this are skipped: a terminal cannot show more, and drawing on
  // every row of a fast loop would cost more than the work.
  static constexpr std::chrono::milliseconds kRedrawInterval{100};

  ProgressBar(Sink sink, std::size_t width, Now now = Clock::now);
  ~ProgressBar() override;  // finish()
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void phase(std::string_view label, std::size_t total) override;
  void update(std::size_t done) override;

  // Clears the line if one is shown, so what the command prints next starts on a clean line.
  // Later reports draw again.
  void finish();

 private:
  void maybe_draw_locked(Clock::time_point now);

  Sink sink_;
  std::size_t width_;
  Now now_;
  std::mutex mutex_;
  std::string label_;                // guarded by mutex_
  std::size_t total_ = 0;            // guarded by mutex_
  std::size_t done_ = 0;             // guarded by mutex_
  Clock::time_point phase_start_{};  // guarded by mutex_
  Clock::time_point last_draw_{};    // guarded by mutex_
  bool shown_ = false;               // a line is on the terminal; guarded by mutex_
  bool drawn_once_ = false;          // guarded by mutex_
};

}  // namespace tandem::cli
