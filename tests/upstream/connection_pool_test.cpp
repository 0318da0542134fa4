#include "upstream/connection_pool.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "upstream/http_client.h"

namespace tandem::upstream {
namespace {

// A keep-alive upstream on loopback: answers every request of every connection with 200 `{}`
// and counts the connections it accepted and those the client closed.
struct KeepAliveUpstream {
  explicit KeepAliveUpstream(net::asio::io_context& ioc)
      : acceptor(ioc, {net::asio::ip::make_address("127.0.0.1"), 0}) {
    net::asio::co_spawn(ioc, accept_loop(), net::asio::detached);
  }

  Endpoint endpoint() const {
    return {false, "127.0.0.1", std::to_string(acceptor.local_endpoint().port()), ""};
  }

  net::awaitable<void> accept_loop() {
    while (true) {
      boost::system::error_code ec;
      auto socket =
          co_await acceptor.async_accept(net::asio::redirect_error(net::use_awaitable, ec));
      if (ec) {
        co_return;
      }
      ++accepted;
      net::asio::co_spawn(acceptor.get_executor(), serve(std::move(socket)), net::asio::detached);
    }
  }

  net::awaitable<void> serve(net::tcp::socket socket) {
    net::beast::flat_buffer buffer;
    while (true) {
      boost::system::error_code ec;
      net::http::request<net::http::string_body> req;
      co_await net::http::async_read(socket, buffer, req,
                                     net::asio::redirect_error(net::use_awaitable, ec));
      if (ec) {
        ++closed_by_client;
        co_return;
      }
      const std::string response =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
      co_await net::asio::async_write(socket, net::asio::buffer(response),
                                      net::asio::redirect_error(net::use_awaitable, ec));
    }
  }

  net::tcp::acceptor acceptor;
  int accepted = 0;
  int closed_by_client = 0;
};

// This test is about connections, not about what may leave: every body goes.
class AdmitEverything final : public EgressGuard {
 protected:
  net::awaitable<std::optional<EgressRefusal>> inspect(const std::string& /*bytes*/,
                                                       const EgressSend& /*send*/) override {
    co_return std::nullopt;
  }
};

// One request through `pool`, read to the end (so the connection may go back): true on 200.
net::awaitable<bool> one_request(const Endpoint& at, ConnectionPool& pool) {
  static const auto tls = make_tls_context(false, "");
  AdmitEverything guard;
  const EgressSend send;
  std::string body = "{}";  // named: GCC 12 mishandles temporaries in co_await arguments
  auto admitted = co_await guard.admit(std::move(body), send);
  HttpRequest request("POST", "/chat/completions", std::get<GuardedBody>(admitted));
  const config::Timeouts timeouts;
  auto opened = co_await open_exchange(*tls, at, request, timeouts, 1024, &pool);
  auto* exchange = std::get_if<std::unique_ptr<HttpExchange>>(&opened);
  if (exchange == nullptr) {
    co_return false;
  }
  auto answer = co_await (*exchange)->read_all(1024);
  co_return (*exchange)->status() == 200 && std::holds_alternative<std::string>(answer);
}

// Runs `ioc` until `done` holds (the upstream's loops never end by themselves), 5 s at most.
void run_until(net::asio::io_context& ioc, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    ioc.run_one_for(std::chrono::milliseconds(10));
  }
}

// Spawns `count` requests at once on `ioc` and runs until all have answered; returns the
// number answered 200.
int concurrent_requests(net::asio::io_context& ioc, const Endpoint& at, ConnectionPool& pool,
                        int count) {
  int answered = 0;
  int ok = 0;
  for (int i = 0; i < count; ++i) {
    net::asio::co_spawn(
        ioc,
        [&]() -> net::awaitable<void> {
          const bool good = co_await one_request(at, pool);
          ok += good ? 1 : 0;
          ++answered;
        },
        net::asio::detached);
  }
  run_until(ioc, [&] { return answered == count; });
  return ok;
}

TEST(ConnectionPoolTest, SequentialRequestsShareOneConnection) {
  net::asio::io_context ioc;
  KeepAliveUpstream upstream(ioc);
  ConnectionPool pool;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(concurrent_requests(ioc, upstream.endpoint(), pool, 1), 1);
  }
  EXPECT_EQ(upstream.accepted, 1);
  EXPECT_EQ(pool.idle(ioc), 1U);
}

TEST(ConnectionPoolTest, ClosesWhatExceedsItsBound) {
  net::asio::io_context ioc;
  KeepAliveUpstream upstream(ioc);
  ConnectionPool pool(2);
  EXPECT_EQ(concurrent_requests(ioc, upstream.endpoint(), pool, 4), 4);
  run_until(ioc, [&] { return upstream.closed_by_client == 2; });
  EXPECT_EQ(upstream.accepted, 4);
  EXPECT_EQ(upstream.closed_by_client, 2);
  EXPECT_EQ(pool.idle(ioc), 2U);
}

// A socket belongs to its io_context's reactor: another io_context never gets it, and the
// pool may outlive the io_context (its sockets go with the io_context; ASan checks the rest).
TEST(ConnectionPoolTest, AnotherIoContextNeverGetsTheSocketsAndThePoolMayOutliveThem) {
  ConnectionPool pool;
  net::asio::io_context other;
  {
    net::asio::io_context ioc;
    KeepAliveUpstream upstream(ioc);
    EXPECT_EQ(concurrent_requests(ioc, upstream.endpoint(), pool, 1), 1);
    EXPECT_EQ(pool.idle(ioc), 1U);
    EXPECT_EQ(pool.idle(other), 0U);
    EXPECT_FALSE(pool.take(other).has_value());
  }
  EXPECT_FALSE(pool.take(other).has_value());
}

// An upstream that is gone leaves no open connection behind on an io_context that lives on.
TEST(ConnectionPoolTest, TheSocketsOfAPoolThatIsGoneAreClosed) {
  net::asio::io_context ioc;
  KeepAliveUpstream upstream(ioc);
  auto gone = std::make_unique<ConnectionPool>();
  EXPECT_EQ(concurrent_requests(ioc, upstream.endpoint(), *gone, 1), 1);
  gone.reset();
  ConnectionPool next;
  EXPECT_EQ(concurrent_requests(ioc, upstream.endpoint(), next, 1), 1);
  run_until(ioc, [&] { return upstream.closed_by_client == 1; });
  EXPECT_EQ(upstream.accepted, 2);
  EXPECT_EQ(upstream.closed_by_client, 1);
}

}  // namespace
}  // namespace tandem::upstream
