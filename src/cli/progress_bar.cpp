#include "cli/progress_bar.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tandem::cli {
namespace {

// The bar itself is kept within these bounds: narrower says nothing, wider only takes room from
// the label.
constexpr std::size_t kMinBarCells = 10;
constexpr std::size_t kMaxBarCells = 30;
// The widest timing() ("  999k/s  ETA 99:59:59"): the bar's size is chosen as if the counts and
// the timing were as wide as they will get, so it does not jitter from frame to frame.
constexpr std::size_t kTimingReserve = 22;

// Erases from the cursor to the end of the line: a shorter frame leaves no tail of the last one.
constexpr std::string_view kEraseLine = "\x1b[K";

// `value` with `digits` decimals, then `unit`: fixed(8.1, 1, "k/s") is "8.1k/s".
std::string fixed(double value, int digits, const char* unit) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f%s", digits, value, unit);
  return buffer;
}

// "  8.1k/s  ETA 0:01" with a known total, "  8.1k/s  0:07" (elapsed) without; empty until a
// rate can be measured.
std::string timing(const ProgressFrame& f) {
  if (f.done == 0 || !(f.elapsed_s > 0)) {
    return "";
  }
  const double rate = static_cast<double>(f.done) / f.elapsed_s;
  std::string out = "  " + format_rate(rate);
  if (f.total == 0) {
    return out + "  " + format_duration(f.elapsed_s);
  }
  const double left = static_cast<double>(f.total - std::min(f.done, f.total)) / rate;
  return out + "  ETA " + format_duration(left);
}

// " 6210/14037  44%" with a known total, " 6210" without, nothing while there is nothing to
// count (a phase of one opaque step, such as hashing a file).
std::string counts(const ProgressFrame& f) {
  if (f.total == 0) {
    return f.done == 0 ? "" : " " + std::to_string(f.done);
  }
  const std::size_t done = std::min(f.done, f.total);
  const auto percent = static_cast<int>(100 * done / f.total);
  return " " + std::to_string(done) + "/" + std::to_string(f.total) + "  " +
         std::to_string(percent) + "%";
}

std::string bar(std::size_t cells, std::size_t done, std::size_t total) {
  const std::size_t filled = cells * std::min(done, total) / total;
  return " [" + std::string(filled, '#') + std::string(cells - filled, '.') + "]";
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds >= 100.0 * 3600) {
    return "--:--";
  }
  const long total = std::lround(std::max(0.0, seconds));
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60,
                  total % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld", total / 60, total % 60);
  }
  return buffer;
}

std::string format_rate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0) {
    return "-/s";
  }
  // Two or three significant digits, whatever the scale.
  if (per_second < 9.95) {
    return fixed(per_second, 1, "/s");
  }
  if (per_second < 999.5) {
    return fixed(per_second, 0, "/s");
  }
  if (per_second < 9950) {
    return fixed(per_second / 1e3, 1, "k/s");
  }
  if (per_second < 999500) {
    return fixed(per_second / 1e3, 0, "k/s");
  }
  return fixed(per_second / 1e6, 1, "M/s");
}

std::string render_progress(const ProgressFrame& frame) {
  // The cursor's cell stays free: a line as wide as the terminal wraps on some of them.
  const std::size_t room = frame.width > 0 ? frame.width - 1 : 0;
  const std::string tail = counts(frame) + timing(frame);
  std::string label(frame.label);
  std::string middle;
  if (frame.total > 0) {
    ProgressFrame widest = frame;
    widest.done = frame.total;
    const std::size_t used = label.size() + counts(widest).size() + kTimingReserve + 3;  // " []"
    const std::size_t free = room > used ? room - used : 0;
    if (free >= kMinBarCells) {
      middle = bar(std::min(free, kMaxBarCells), frame.done, frame.total);
    }
  }
  // Too narrow even without the bar: the label gives way first, then the tail.
  if (label.size() + middle.size() + tail.size() > room) {
    const std::size_t keep =
        room > middle.size() + tail.size() ? room - middle.size() - tail.size() : 0;
    label.resize(std::min(label.size(), keep));
    while (!label.empty() && label.back() == ' ') {
      label.pop_back();  // "choosing the" rather than "choosing the " before the counts
    }
  }
  std::string line = label + middle + tail;
  line.resize(std::min(line.size(), room));
  return line;
}

ProgressBar::ProgressBar(Sink sink, std::size_t width, Now now)
    : sink_(std::move(sink)), width_(width), now_(std::move(now)) {}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::phase(std::string_view label, std::size_t total) {
  const Clock::time_point now = now_();
  std::lock_guard lock(mutex_);
  label_ = label;
  total_ = total;
  done_ = 0;
  phase_start_ = now;
  maybe_draw_locked(now);
}

void ProgressBar::update(std::size_t done) {
  const Clock::time_point now = now_();
  std::lock_guard lock(mutex_);
  done_ = done;
  maybe_draw_locked(now);
}

void ProgressBar::finish() {
  std::lock_guard lock(mutex_);
  if (shown_) {
    sink_(std::string("\r").append(kEraseLine));
    shown_ = false;
  }
  drawn_once_ = false;  // the next report is a fresh start
}

void ProgressBar::maybe_draw_locked(Clock::time_point now) {
  if (drawn_once_ && now - last_draw_ < kRedrawInterval) {
    return;
  }
  const std::chrono::duration<double> elapsed = now - phase_start_;
  ProgressFrame frame;
  frame.label = label_;
  frame.done = done_;
  frame.total = total_;
  frame.elapsed_s = elapsed.count();
  frame.width = width_;
  sink_("\r" + render_progress(frame) + std::string(kEraseLine));
  last_draw_ = now;
  drawn_once_ = true;
  shown_ = true;
}

}  // namespace tandem::cli
