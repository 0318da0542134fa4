#include "engine/event_dispatcher.h"

namespace tandem::engine {

EventDispatcher::EventDispatcher() : thread_([this] { run(); }) {}

EventDispatcher::~EventDispatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void EventDispatcher::enqueue(EngineEvent event) {
  std::lock_guard lock(mutex_);
  queued_.push_back(std::move(event));
  unflushed_ = true;
}

void EventDispatcher::flush() {
  {
    std::lock_guard lock(mutex_);
    if (!unflushed_) {
      return;
    }
    unflushed_ = false;
  }
  wake_.notify_one();
}

void EventDispatcher::deliver(EngineEvent& event) {
  if (auto* task = std::get_if<EngineTask>(&event.payload)) {
    (*task)();
    return;
  }
  const GenerationCallbacks& cb = *event.callbacks;
  if (auto* token = std::get_if<TokenEvent>(&event.payload)) {
    if (cb.on_token) {
      cb.on_token(*token);
    }
  } else if (auto* summary = std::get_if<CompletionSummary>(&event.payload)) {
    if (cb.on_complete) {
      cb.on_complete(*summary);
    }
  } else if (cb.on_error) {
    cb.on_error(std::get<Error>(event.payload));
  }
}

void EventDispatcher::run() {
  std::vector<EngineEvent> batch;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queued_.empty(); });
    if (queued_.empty()) {
      return;  // stopping, and everything queued has been delivered
    }
    batch.swap(queued_);  // the producer keeps filling the old batch's capacity
    lock.unlock();
    for (auto& event : batch) {
      deliver(event);
    }
    batch.clear();
    lock.lock();
  }
}

}  // namespace tandem::engine
