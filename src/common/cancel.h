#pragma once
// A cancellation signal shared by whoever works on one request (the HTTP session, the
// upstream call, the edge generation). cancel() runs every registered action once; an action
// registered after cancellation runs at once. Thread-safe.

#include <functional>
#include <mutex>
#include <vector>

namespace tandem {

class CancelSignal {
 public:
  void cancel() {
    std::vector<std::function<void()>> actions;
    {
      std::lock_guard lock(mutex_);
      if (cancelled_) {
        return;
      }
      cancelled_ = true;
      actions.swap(actions_);
    }
    for (auto& action : actions) {
      action();
    }
  }

  bool cancelled() const {
    std::lock_guard lock(mutex_);
    return cancelled_;
  }

  // Returns an id for remove(). The action may run on any thread.
  size_t on_cancel(std::function<void()> action) {
    {
      std::lock_guard lock(mutex_);
      if (!cancelled_) {
        actions_.push_back(std::move(action));
        return actions_.size() - 1;
      }
    }
    action();
    return static_cast<size_t>(-1);
  }

  // Forgets an action whose target is about to go away.
  void remove(size_t id) {
    std::lock_guard lock(mutex_);
    if (id < actions_.size()) {
      actions_[id] = [] {};
    }
  }

 private:
  mutable std::mutex mutex_;
  bool cancelled_ = false;                      // guarded by mutex_
  std::vector<std::function<void()>> actions_;  // guarded by mutex_
};

// Registers a cancel action for as long as it lives: the action's target (a timer, an
// exchange) goes away with it.
class CancelRegistration {
 public:
  CancelRegistration(CancelSignal& signal, std::function<void()> action)
      : signal_(signal), id_(signal.on_cancel(std::move(action))) {}
  ~CancelRegistration() { signal_.remove(id_); }
  CancelRegistration(const CancelRegistration&) = delete;
  CancelRegistration& operator=(const CancelRegistration&) = delete;

 private:
  CancelSignal& signal_;
  size_t id_;
};

}  // namespace tandem
