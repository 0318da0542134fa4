#pragma once
// A single thread that runs callbacks in the order they were posted. The inference thread
// posts here so that slow client code (a socket write, a JSON dump) never stalls decoding.
// Thread-safe: post() may be called from any thread.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace tandem::engine {

class CallbackExecutor {
 public:
  CallbackExecutor();
  ~CallbackExecutor();  // runs every callback already posted, then joins
  CallbackExecutor(const CallbackExecutor&) = delete;
  CallbackExecutor& operator=(const CallbackExecutor&) = delete;

  void post(std::function<void()> task);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;  // guarded by mutex_
  bool stopping_ = false;                    // guarded by mutex_
  std::thread thread_;
};

}  // namespace tandem::engine
