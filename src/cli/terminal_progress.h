#pragma once
// Long commands show a progress bar (cli/progress_bar.h) on stderr only when someone is
// watching: stderr is a terminal that understands '\r' and erase-line, and the output is not
// meant for a program. Piped, redirected, under --json, with TERM=dumb or with --no-progress,
// not one byte of progress is written.
//
// Thread-safety: a CommandProgress is owned by the command's thread; the Progress it hands out
// is thread-safe (ProgressBar, or no_progress()).

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/progress_bar.h"
#include "common/progress.h"

namespace tandem::cli {

struct ProgressChoice {
  bool json = false;         // --json: the output is for a program
  bool no_progress = false;  // --no-progress
  bool quiet_log = true;     // false when llama.cpp's own log (--verbose) writes to stderr
};

// Whether to draw, given the flags, whether stderr is a terminal and $TERM (nullptr: unset).
bool progress_wanted(const ProgressChoice& choice, bool stderr_is_terminal, const char* term);

// Registers --no-progress on a command that shows progress.
void add_no_progress_flag(CLI::App& command, bool& no_progress);

// The bar of one command run, or nothing when it is not wanted.
class CommandProgress {
 public:
  explicit CommandProgress(const ProgressChoice& choice);

  // The bar, or no_progress(); valid as long as this object.
  Progress& progress();

  // Clears the bar before the command prints its result or an error.
  void finish();

 private:
  std::unique_ptr<ProgressBar> bar_;
};

}  // namespace tandem::cli
