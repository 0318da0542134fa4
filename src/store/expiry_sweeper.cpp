#include "store/expiry_sweeper.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/log.h"

namespace tandem::store {

ExpirySweeper::ExpirySweeper(ConsistencyMemory& memory, std::chrono::milliseconds interval, Now now)
    : memory_(memory),
      interval_(std::max(interval, std::chrono::milliseconds(1))),
      now_(std::move(now)),
      thread_([this] { run(); }) {}

ExpirySweeper::~ExpirySweeper() {
  stop();
}

void ExpirySweeper::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) {
    thread_.join();
  }
}

Result<size_t> ExpirySweeper::sweep_once() {
  auto pruned = memory_.prune_expired(now_());
  std::lock_guard lock(mutex_);
  ++sweeps_;
  if (!pruned) {
    log_event(LogLevel::kWarn, "store", "consistency_sweep_failed",
              {{"backend", memory_.backend()}, {"message", pruned.error().message}});
    return pruned;
  }
  deleted_ += pruned.value();
  return pruned;
}

uint64_t ExpirySweeper::sweeps() const {
  std::lock_guard lock(mutex_);
  return sweeps_;
}

uint64_t ExpirySweeper::deleted() const {
  std::lock_guard lock(mutex_);
  return deleted_;
}

std::chrono::milliseconds ExpirySweeper::interval_for(std::chrono::seconds ttl) {
  const auto quarter = std::chrono::duration_cast<std::chrono::milliseconds>(ttl) / 4;
  return std::clamp<std::chrono::milliseconds>(quarter, std::chrono::seconds(1),
                                               std::chrono::seconds(60));
}

void ExpirySweeper::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
      return;
    }
    lock.unlock();
    (void)sweep_once();  // logs its own failure; the next sweep tries again
    lock.lock();
  }
}

}  // namespace tandem::store
