#pragma once
// Deletes a consistency memory's expired routes on a timer, on a thread of its own: lookups
// ignore expired routes but never delete them, so without this a client's old routes would stay
// in the table (or, in Redis, in its per-client index) for as long as the gateway runs. With it
// the table holds at most the routes stored within one TTL plus one sweep interval, and no I/O
// thread ever waits for the delete itself (a lookup may wait for the database a sweep holds).
//
// Thread-safety: sweep_once() and the accessors may be called from any thread; stop() and the
// destructor from any thread but the sweeper's own.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "common/result.h"
#include "store/consistency_memory.h"

namespace tandem::store {

class ExpirySweeper {
 public:
  using Now = std::function<int64_t()>;  // wall-clock milliseconds, as the memory stores them

  // Sweeps `memory` every `interval` (the first sweep one interval after the start) until
  // stopped. `memory` must outlive the sweeper.
  ExpirySweeper(ConsistencyMemory& memory, std::chrono::milliseconds interval, Now now);
  ~ExpirySweeper();
  ExpirySweeper(const ExpirySweeper&) = delete;
  ExpirySweeper& operator=(const ExpirySweeper&) = delete;

  // Stops the timer and joins its thread; idempotent.
  void stop();

  // One sweep now, on the calling thread: what the timer runs. A failure is logged and
  // returned; the next sweep tries again.
  Result<size_t> sweep_once();

  uint64_t sweeps() const;   // sweeps that completed, successfully or not
  uint64_t deleted() const;  // routes deleted by them

  // The interval for a TTL: a quarter of it, between 1 s and 60 s, so expired routes stay at
  // most a quarter of a TTL (a minute at most) beyond their expiry.
  static std::chrono::milliseconds interval_for(std::chrono::seconds ttl);

 private:
  void run();

  ConsistencyMemory& memory_;
  const std::chrono::milliseconds interval_;
  const Now now_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;  // stop() was called
  bool stopping_ = false;         // guarded by mutex_
  uint64_t sweeps_ = 0;           // guarded by mutex_
  uint64_t deleted_ = 0;          // guarded by mutex_
  std::thread thread_;            // last: started once everything above exists
};

}  // namespace tandem::store
