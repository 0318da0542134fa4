#pragma once
// How far long offline work has come (reading traces, fitting, quantizing, measuring drift).
// Libraries report through this interface and never touch the terminal: the CLI binds it to a
// bar on stderr (cli/progress_bar.h), tests to a recorder, everyone else to no_progress().
//
// Work is a sequence of phases, each with a label and a number of steps. Reports are meant to be
// cheap enough to make per row or per chunk; an implementation that draws must limit how often
// it does, not the caller.
//
// Thread-safety: as stated by each implementation; no_progress() may be used from any thread.

#include <cstddef>
#include <string_view>

namespace tandem {

class Progress {
 public:
  virtual ~Progress() = default;

  // A new phase named `label` ("scoring prompts") of `total` steps; 0: the total is not known in
  // advance (only the count and the rate can be shown). Its count starts at 0.
  virtual void phase(std::string_view label, std::size_t total) = 0;

  // `done` steps of the current phase are finished (not an increment: a report may be skipped).
  virtual void update(std::size_t done) = 0;
};

// Ignores every report.
class NoProgress final : public Progress {
 public:
  void phase(std::string_view /*label*/, std::size_t /*total*/) override {}
  void update(std::size_t /*done*/) override {}
};

// One phase counted step by step, for work whose steps are not numbered by a loop index:
//   PhaseSteps fits(progress, "fitting", folds); ... fits.step(); ... fits.step();
class PhaseSteps {
 public:
  PhaseSteps(Progress& progress, std::string_view label, std::size_t total) : progress_(progress) {
    progress_.phase(label, total);
  }
  void step() { progress_.update(++done_); }

 private:
  Progress& progress_;
  std::size_t done_ = 0;
};

// The shared do-nothing instance, the default of every library function that reports.
inline Progress& no_progress() {
  static NoProgress none;
  return none;
}

}  // namespace tandem
