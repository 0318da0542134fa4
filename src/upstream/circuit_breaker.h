#pragma once
// Per-upstream circuit breaker. Thread-safe; time comes from an injected clock so tests drive
// the cooldown without sleeping.

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include "config/config.h"

namespace tandem::upstream {

enum class CircuitState {
  // Requests flow; consecutive failures are counted and `failure_threshold` of them open it.
  kClosed,
  // Requests are refused without trying, until `cooldown_ms` has passed since it opened.
  kOpen,
  // The cooldown passed: one trial request may go; its success closes the circuit, its
  // failure opens it for another cooldown.
  kHalfOpen,
};

const char* circuit_state_name(CircuitState state);

class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  explicit CircuitBreaker(config::CircuitPolicy policy, Now now = Clock::now);

  // Whether a request may go now. In half-open, only the first caller gets true.
  bool allow();
  void record_success();
  void record_failure();
  // The request ended without a verdict (cancelled by our side): frees a half-open trial.
  void record_abandoned();

  // Another gateway replica opened this upstream's circuit (shared state): hold it open for
  // `remaining`, after which one trial goes as usual. A circuit open for longer already is
  // left alone.
  void hold_open(std::chrono::milliseconds remaining);
  // Open because of a peer's hold_open(), not this replica's own failures (so a replica does
  // not re-announce what it was told).
  bool held_by_peer() const;

  CircuitState state() const;
  int consecutive_failures() const;
  // Time until an open circuit lets a trial through (0 when not open).
  std::chrono::milliseconds cooldown_remaining() const;

 private:
  CircuitState state_locked() const;

  config::CircuitPolicy policy_;
  Now now_;
  mutable std::mutex mutex_;
  CircuitState state_ = CircuitState::kClosed;  // guarded by mutex_
  int failures_ = 0;                            // guarded by mutex_
  Clock::time_point opened_at_{};               // guarded by mutex_
  bool trial_in_flight_ = false;                // guarded by mutex_
  bool held_by_peer_ = false;                   // guarded by mutex_
};

}  // namespace tandem::upstream
