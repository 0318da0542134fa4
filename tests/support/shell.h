#pragma once
// Runs a shell command line for the CLI tests, capturing its stdout and exit code.

#include <array>
#include <cstdio>
#include <string>

#include <sys/wait.h>

namespace tandem::test {

struct ShellOutput {
  int exit_code = -1;  // -1: it could not start, or a signal ended it
  std::string stdout_text;
};

inline ShellOutput run_shell(const std::string& command) {
  ShellOutput out;
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

}  // namespace tandem::test
