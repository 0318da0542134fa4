#pragma once
// Delivers engine events to request callbacks on one thread of its own, in the order they
// were queued, so that slow client code (a socket write, a JSON dump) never stalls decoding
// and callbacks never run on the inference thread.
//
// Built for a hot path that produces thousands of events a second:
//   - waking a sleeping thread costs a system call and, on virtual machines, a trip through
//     the hypervisor, so the producer enqueue()s without waking and flush()es once a step is
//     done, at most about once a millisecond, and before it goes idle;
//   - events are moved into a vector that the two threads swap, and callbacks are shared by
//     pointer, so the steady state allocates nothing (memory freed on the other thread would
//     also contend for the producer's malloc arena).
// Thread-safe: any thread may call any member.

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "engine/generation.h"

namespace tandem::engine {

// Work for the delivery thread that is not a generation's event (an embeddings answer).
using EngineTask = std::function<void()>;

struct EngineEvent {
  std::shared_ptr<const GenerationCallbacks> callbacks;  // null for a task
  std::variant<TokenEvent, CompletionSummary, Error, EngineTask> payload;
};

class EventDispatcher {
 public:
  EventDispatcher();
  ~EventDispatcher();  // delivers every event already queued, then joins
  EventDispatcher(const EventDispatcher&) = delete;
  EventDispatcher& operator=(const EventDispatcher&) = delete;

  // Queues an event without waking the delivery thread; it is delivered after flush().
  void enqueue(EngineEvent event);
  // Wakes the delivery thread if anything was queued since the last flush.
  void flush();

 private:
  void run();
  static void deliver(EngineEvent& event);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<EngineEvent> queued_;  // guarded by mutex_
  bool unflushed_ = false;           // guarded by mutex_
  bool stopping_ = false;            // guarded by mutex_
  std::thread thread_;
};

}  // namespace tandem::engine
