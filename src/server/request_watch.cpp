#include "server/request_watch.h"

#include <cerrno>
#include <optional>
#include <vector>

#include <sys/socket.h>

namespace tandem::server {

namespace asio = net::asio;

// The watches of one io_context, and its timer. The timer runs only while the list holds a
// watch: an idle server does not wake.
class RequestWatch::List final : public asio::execution_context::service {
 public:
  // NOLINTNEXTLINE(readability-identifier-naming): the name Asio's use_service requires.
  inline static asio::execution_context::id id;

  explicit List(asio::execution_context& context) : asio::execution_context::service(context) {}

  void add(RequestWatch& watch, const asio::any_io_executor& executor) {
    watch.next_ = head_;
    if (head_ != nullptr) {
      head_->previous_ = &watch;
    }
    head_ = &watch;
    if (!timer_ && !shut_down_) {
      timer_.emplace(executor);
    }
    arm();
  }

  void remove(RequestWatch& watch) {
    (watch.previous_ != nullptr ? watch.previous_->next_ : head_) = watch.next_;
    if (watch.next_ != nullptr) {
      watch.next_->previous_ = watch.previous_;
    }
  }

 private:
  // The timer goes now, while the timer service it was made after still exists: services are
  // destroyed in the reverse order of their making, so this one would outlive that one.
  void shutdown() override {
    shut_down_ = true;
    timer_.reset();
  }

  void arm() {
    if (armed_ || head_ == nullptr || shut_down_) {
      return;
    }
    armed_ = true;
    timer_->expires_after(kTick);
    timer_->async_wait([this](boost::system::error_code ec) {
      armed_ = false;
      if (ec || shut_down_) {
        return;
      }
      tick();
      arm();
    });
  }

  // The cancels run after the walk: a cancel runs its request's actions, which must not find
  // the list half walked.
  void tick() {
    const Clock::time_point now = Clock::now();
    std::vector<CancelSignal*> due;
    for (RequestWatch* watch = head_; watch != nullptr; watch = watch->next_) {
      if (watch->check(now)) {
        due.push_back(&watch->cancel_);
      }
    }
    for (CancelSignal* cancel : due) {
      cancel->cancel();
    }
  }

  RequestWatch* head_ = nullptr;
  std::optional<asio::steady_timer> timer_;
  bool armed_ = false;
  bool shut_down_ = false;
};

namespace {

RequestWatch::List& list_of(net::beast::tcp_stream& stream) {
  auto& context = asio::query(stream.get_executor(), asio::execution::context);
  return asio::use_service<RequestWatch::List>(context);
}

}  // namespace

RequestWatch::RequestWatch(net::beast::tcp_stream& stream, CancelSignal& cancel,
                           std::chrono::milliseconds timeout)
    : list_(list_of(stream)),
      stream_(stream),
      cancel_(cancel),
      started_(Clock::now()),
      deadline_(started_ + timeout) {
  list_.add(*this, stream.get_executor());
}

RequestWatch::~RequestWatch() {
  list_.remove(*this);
  if (ended_) {
    *ended_ = true;
    boost::system::error_code ignored;
    stream_.socket().cancel(ignored);  // ends the disconnect watch
  }
}

bool RequestWatch::check(Clock::time_point now) {
  if (!cancelled_ && now >= deadline_) {
    cancelled_ = true;
    return true;
  }
  if (!ended_ && now - started_ >= kWatchAfter) {
    watch_disconnect();
  }
  return false;
}

// Waits for the idle-reading socket to become readable: the peer closing it (EOF or reset)
// means the client is gone, and its request is cancelled. Data (a pipelined request) just ends
// the watch; it stays in the socket for the next read.
void RequestWatch::watch_disconnect() {
  ended_ = std::make_shared<bool>(false);
  auto& socket = stream_.socket();
  socket.async_wait(
      net::tcp::socket::wait_read, [this, ended = ended_](boost::system::error_code ec) {
        if (*ended || ec) {
          return;
        }
        char probe = 0;
        const auto n = ::recv(stream_.socket().native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
          cancelled_ = true;
          cancel_.cancel();
        }
      });
}

}  // namespace tandem::server
