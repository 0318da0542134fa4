#pragma once
// Cancels a request when its client leaves or its deadline passes.
//
// Most requests end within milliseconds, and watching each one from its start cost more than
// relaying it: a coroutine spawned to wait on the socket (an epoll_ctl every time), a timer
// per request, and two cancelled operations run through the scheduler when it ended. Instead
// the requests of one io_context are kept in a list that one timer per io_context reads every
// kTick: a request past its deadline is cancelled, and one that has run for kWatchAfter gets
// its disconnect watch then. A request that ends sooner costs two list links.
//
// A request's deadline is so kept to within kTick, and a client that leaves is noticed once its
// request has run kWatchAfter: a request that ends before then has nothing left to cancel.
//
// Thread-safety: a watch is made and destroyed on the thread that runs its stream's io_context
// (a session's coroutine always runs there), and that io_context is run by one thread, which
// also runs the timer: nothing here is shared between threads. It must be destroyed before
// `cancel`, however the request ends (an exception included).

#include <chrono>
#include <memory>

#include "common/cancel.h"
#include "net/asio.h"

namespace tandem::server {

class RequestWatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kTick{50};
  static constexpr std::chrono::milliseconds kWatchAfter{50};

  RequestWatch(net::beast::tcp_stream& stream, CancelSignal& cancel,
               std::chrono::milliseconds timeout);
  ~RequestWatch();
  RequestWatch(const RequestWatch&) = delete;
  RequestWatch& operator=(const RequestWatch&) = delete;

  class List;

 private:
  friend class List;

  // From the list's timer: true when the deadline has passed (the caller cancels), else starts
  // the disconnect watch when it is due.
  bool check(Clock::time_point now);
  void watch_disconnect();

  List& list_;
  net::beast::tcp_stream& stream_;
  CancelSignal& cancel_;
  const Clock::time_point started_;
  const Clock::time_point deadline_;
  bool cancelled_ = false;
  // Set once the disconnect watch has begun; true when this watch is gone, so that the socket
  // wait's handler, which may run after, does nothing.
  std::shared_ptr<bool> ended_;
  RequestWatch* previous_ = nullptr;
  RequestWatch* next_ = nullptr;
};

}  // namespace tandem::server
