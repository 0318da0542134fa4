#pragma once
// A cancellation signal shared by whoever works on one request (the HTTP session, the
// upstream call, the edge generation). cancel() runs every registered action once; an action
// registered after cancellation runs at once. Thread-safe.
//
// remove() is what makes an action's target safe to destroy: once it returns, the action has
// either run to its end or will never run. When cancel() is running the action on another
// thread at that moment, remove() waits for it to return; called on the thread that is running
// cancel() (from inside an action, or from anything an action calls) it never waits, so an
// action may remove itself or others without deadlocking. An action must not wait for another
// thread that is itself in remove() of the same signal.

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace tandem {

class CancelSignal {
 public:
  // What on_cancel() returns for an action that ran at once (remove() ignores it).
  static constexpr size_t kRanAlready = static_cast<size_t>(-1);

  void cancel() {
    std::unique_lock lock(mutex_);
    if (cancelled_) {
      return;
    }
    cancelled_ = true;
    cancelling_thread_ = std::this_thread::get_id();
    // One at a time, taken out under the lock: remove() of an action not yet taken drops it, and
    // remove() of the running one waits for `running_` to change. No action is added meanwhile:
    // on_cancel() runs new ones at once.
    while (!actions_.empty()) {
      auto first = actions_.begin();  // the oldest: actions run in the order they were added
      running_ = first->first;
      std::function<void()> action = std::move(first->second);
      actions_.erase(first);
      lock.unlock();
      action();
      action = nullptr;  // its captures go before a waiting remove() returns
      lock.lock();
      running_ = kNone;
      done_.notify_all();
    }
    cancelling_thread_ = std::thread::id();
  }

  bool cancelled() const {
    std::lock_guard lock(mutex_);
    return cancelled_;
  }

  // Returns an id for remove(). The action may run on any thread: the one calling cancel(), or
  // this one at once when the signal is already cancelled (then kRanAlready is returned).
  size_t on_cancel(std::function<void()> action) {
    {
      std::lock_guard lock(mutex_);
      if (!cancelled_) {
        const size_t id = next_id_++;
        actions_.emplace_back(id, std::move(action));
        return id;
      }
    }
    action();
    return kRanAlready;
  }

  // Forgets an action whose target is about to go away; returns once the action can no longer
  // run (see the top of this file). Ids are never reused, so a stale id is harmless.
  void remove(size_t id) {
    std::unique_lock lock(mutex_);
    const auto found = std::find_if(actions_.begin(), actions_.end(),
                                    [id](const auto& entry) { return entry.first == id; });
    if (found != actions_.end()) {
      actions_.erase(found);
      return;
    }
    if (cancelling_thread_ == std::this_thread::get_id()) {
      return;  // from inside cancel(): waiting here would wait for ourselves
    }
    done_.wait(lock, [&] { return running_ != id; });
  }

  // Registered actions not yet run (for tests and bookkeeping).
  size_t pending() const {
    std::lock_guard lock(mutex_);
    return actions_.size();
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-2);

  mutable std::mutex mutex_;
  std::condition_variable done_;  // running_ changed
  bool cancelled_ = false;        // guarded by mutex_
  size_t next_id_ = 0;            // guarded by mutex_
  // Guarded by mutex_: not yet run, oldest first. A request registers two or three at a time
  // (its upstream call, its deadline): held inline, registering allocates nothing.
  boost::container::small_vector<std::pair<size_t, std::function<void()>>, 4> actions_;
  size_t running_ = kNone;             // guarded by mutex_: the action cancel() runs
  std::thread::id cancelling_thread_;  // guarded by mutex_: while cancel() runs
};

// Registers a cancel action for as long as it lives: the action's target (a timer, an
// exchange) goes away with it. The destructor waits for the action when it is running on
// another thread (CancelSignal::remove), so the target outlives every run of it.
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
