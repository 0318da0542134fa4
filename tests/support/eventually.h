#pragma once
// Waiting for something asynchronous to happen: poll for it with a deadline that only a
// failing test reaches, never sleep a fixed time and hope (docs/RELIABILITY.md). Header-only,
// for every test binary.

#include <chrono>
#include <thread>

#include <sys/types.h>
#include <sys/wait.h>

namespace tandem::test {

// Waits until `probe` is true, up to `timeout`.
template <typename Probe>
bool eventually(Probe probe, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (probe()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return probe();
}

// Waits up to `grace` for the child `pid` to exit; true, with its wait status, once it has.
inline bool exited_within(pid_t pid, std::chrono::milliseconds grace, int& status) {
  return eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, grace);
}

}  // namespace tandem::test
