#pragma once
// The requests being answered, as the cancel signals shutdown fires once its grace period is
// over. A request enters with enter() and leaves when the returned guard goes away, however
// its coroutine ends (an exception or a destroyed frame included), so the set never holds a
// signal that no longer exists.
//
// Thread-safety: every method may be called from any thread. cancel_all() runs the signals'
// actions under the set's mutex, so a guard's destructor (on the request's thread) waits for
// it: a signal is never cancelled while, or after, its owner destroys it.

#include <cstddef>
#include <mutex>
#include <set>

#include "common/cancel.h"

namespace tandem::server {

class InFlightRequests {
 public:
  class Guard {
   public:
    Guard(InFlightRequests& set, CancelSignal& signal) : set_(&set), signal_(&signal) {
      std::lock_guard lock(set_->mutex_);
      set_->signals_.insert(signal_);
    }
    ~Guard() {
      std::lock_guard lock(set_->mutex_);
      set_->signals_.erase(signal_);
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    InFlightRequests* set_;
    CancelSignal* signal_;
  };

  // Registers `signal` until the guard goes away; declare the guard after the signal.
  [[nodiscard]] Guard enter(CancelSignal& signal) { return Guard(*this, signal); }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return signals_.size();
  }

  // Cancels every request in flight now.
  void cancel_all() {
    std::lock_guard lock(mutex_);
    for (CancelSignal* signal : signals_) {
      signal->cancel();
    }
  }

 private:
  mutable std::mutex mutex_;
  std::set<CancelSignal*> signals_;  // guarded by mutex_
};

}  // namespace tandem::server
