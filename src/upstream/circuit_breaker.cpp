#include "upstream/circuit_breaker.h"

namespace tandem::upstream {

const char* circuit_state_name(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kHalfOpen:
      return "half_open";
  }
  return "closed";
}

CircuitBreaker::CircuitBreaker(config::CircuitPolicy policy, Now now)
    : policy_(policy), now_(std::move(now)) {}

CircuitState CircuitBreaker::state_locked() const {
  if (state_ == CircuitState::kOpen &&
      now_() - opened_at_ >= std::chrono::milliseconds(policy_.cooldown_ms)) {
    return CircuitState::kHalfOpen;
  }
  return state_;
}

bool CircuitBreaker::allow() {
  std::lock_guard lock(mutex_);
  const CircuitState current = state_locked();
  if (current == CircuitState::kClosed) {
    return true;
  }
  if (current == CircuitState::kHalfOpen && !trial_in_flight_) {
    state_ = CircuitState::kHalfOpen;
    trial_in_flight_ = true;
    return true;
  }
  return false;
}

void CircuitBreaker::record_success() {
  std::lock_guard lock(mutex_);
  state_ = CircuitState::kClosed;
  held_by_peer_ = false;
  failures_ = 0;
  trial_in_flight_ = false;
}

void CircuitBreaker::record_failure() {
  std::lock_guard lock(mutex_);
  ++failures_;
  if (state_locked() == CircuitState::kHalfOpen || failures_ >= policy_.failure_threshold) {
    state_ = CircuitState::kOpen;
    opened_at_ = now_();
    held_by_peer_ = false;
  }
  trial_in_flight_ = false;
}

void CircuitBreaker::record_abandoned() {
  std::lock_guard lock(mutex_);
  trial_in_flight_ = false;
}

void CircuitBreaker::hold_open(std::chrono::milliseconds remaining) {
  if (remaining.count() <= 0) {
    return;
  }
  std::lock_guard lock(mutex_);
  const auto cooldown = std::chrono::milliseconds(policy_.cooldown_ms);
  const auto until = now_() + remaining;
  if (state_locked() == CircuitState::kOpen && opened_at_ + cooldown >= until) {
    return;
  }
  // Opened "at" the moment that makes the cooldown end exactly at `until`.
  state_ = CircuitState::kOpen;
  opened_at_ = until - cooldown;
  trial_in_flight_ = false;
  held_by_peer_ = true;
}

bool CircuitBreaker::held_by_peer() const {
  std::lock_guard lock(mutex_);
  return held_by_peer_ && state_locked() == CircuitState::kOpen;
}

CircuitState CircuitBreaker::state() const {
  std::lock_guard lock(mutex_);
  return state_locked();
}

int CircuitBreaker::consecutive_failures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

std::chrono::milliseconds CircuitBreaker::cooldown_remaining() const {
  std::lock_guard lock(mutex_);
  if (state_locked() != CircuitState::kOpen) {
    return std::chrono::milliseconds(0);
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      opened_at_ + std::chrono::milliseconds(policy_.cooldown_ms) - now_());
}

}  // namespace tandem::upstream
