#include "cli/terminal_progress.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/ioctl.h>
#include <unistd.h>

namespace tandem::cli {
namespace {

// What a terminal that reports no size (a pseudo-terminal nobody sized) is taken to have.
constexpr std::size_t kDefaultColumns = 80;

std::size_t stderr_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  return kDefaultColumns;
}

void write_stderr(std::string_view bytes) {
  std::fwrite(bytes.data(), 1, bytes.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

bool progress_wanted(const ProgressChoice& choice, bool stderr_is_terminal, const char* term) {
  if (choice.json || choice.no_progress || !choice.quiet_log || !stderr_is_terminal) {
    return false;
  }
  // A dumb terminal (Emacs shells, some CI logs) shows '\r' and escape sequences as text.
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

void add_no_progress_flag(CLI::App& command, bool& no_progress) {
  command.add_flag("--no-progress", no_progress,
                   "Never show the progress bar (it is shown only when stderr is a terminal, "
                   "and never with --json)");
}

CommandProgress::CommandProgress(const ProgressChoice& choice) {
  // Read once, on the command's thread, before any work starts other threads.
  const char* term = std::getenv("TERM");  // NOLINT(concurrency-mt-unsafe)
  if (progress_wanted(choice, ::isatty(STDERR_FILENO) == 1, term)) {
    bar_ = std::make_unique<ProgressBar>(write_stderr, stderr_columns());
  }
}

Progress& CommandProgress::progress() {
  return bar_ ? static_cast<Progress&>(*bar_) : no_progress();
}

void CommandProgress::finish() {
  if (bar_) {
    bar_->finish();
  }
}

}  // namespace tandem::cli
