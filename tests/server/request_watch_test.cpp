#include "server/request_watch.h"

#include <gtest/gtest.h>

namespace tandem::server {
namespace {

namespace asio = net::asio;
using std::chrono::milliseconds;

// A server-side stream and the client socket connected to it, on `io`.
net::tcp::socket accepted(asio::io_context& io, net::tcp::socket& client) {
  net::tcp::acceptor acceptor(io, net::tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  client.connect(acceptor.local_endpoint());
  return acceptor.accept();
}

struct Connection {
  explicit Connection(asio::io_context& io) : client(io), server(accepted(io, client)) {}
  net::tcp::socket client;
  net::beast::tcp_stream server;
};

// Runs `io` for `duration`, or until it has no work left (then io.stopped() is true).
void run_for(asio::io_context& io, milliseconds duration) {
  io.restart();
  io.run_for(duration);
}

// One request's connection and cancel signal, on an io_context of its own.
class RequestWatchTest : public ::testing::Test {
 protected:
  asio::io_context io;
  Connection connection{io};
  CancelSignal cancel;
};

TEST_F(RequestWatchTest, ARequestPastItsDeadlineIsCancelled) {
  const RequestWatch watch(connection.server, cancel, milliseconds(10));
  EXPECT_FALSE(cancel.cancelled());
  run_for(io, RequestWatch::kTick * 4);
  EXPECT_TRUE(cancel.cancelled());
}

TEST_F(RequestWatchTest, AClientThatLeavesIsNoticedOnceItsRequestHasRunAWhile) {
  const RequestWatch watch(connection.server, cancel, milliseconds(60000));
  connection.client.close();
  run_for(io, RequestWatch::kWatchAfter + RequestWatch::kTick * 4);
  EXPECT_TRUE(cancel.cancelled());
}

TEST_F(RequestWatchTest, APipelinedRequestIsNotALeavingClientAndStaysInTheSocket) {
  {
    const RequestWatch watch(connection.server, cancel, milliseconds(60000));
    asio::write(connection.client, asio::buffer(std::string_view("GET / HTTP/1.1\r\n")));
    run_for(io, RequestWatch::kWatchAfter + RequestWatch::kTick * 4);
    EXPECT_FALSE(cancel.cancelled());
  }
  std::string received(16, '\0');
  asio::read(connection.server.socket(), asio::buffer(received));
  EXPECT_EQ(received, "GET / HTTP/1.1\r\n");
}

TEST_F(RequestWatchTest, AWatchGoneBeforeItsClientLeavesCancelsNothing) {
  {
    const RequestWatch watch(connection.server, cancel, milliseconds(60000));
    run_for(io, RequestWatch::kWatchAfter + RequestWatch::kTick * 2);  // the watch has begun
  }
  connection.client.close();
  run_for(io, RequestWatch::kTick * 4);
  EXPECT_FALSE(cancel.cancelled());
}

TEST_F(RequestWatchTest, WithNoRequestLeftTheTimerStopsAndTheIoContextRunsOut) {
  { const RequestWatch watch(connection.server, cancel, milliseconds(60000)); }
  run_for(io, milliseconds(5000));
  EXPECT_TRUE(io.stopped());
}

TEST(RequestWatchListTest, ManyRequestsAreEachCancelledAtTheirOwnDeadline) {
  asio::io_context io;
  std::vector<std::unique_ptr<Connection>> connections;
  std::vector<std::unique_ptr<CancelSignal>> cancels;
  std::vector<std::unique_ptr<RequestWatch>> watches;
  for (int i = 0; i < 6; ++i) {
    connections.push_back(std::make_unique<Connection>(io));
    cancels.push_back(std::make_unique<CancelSignal>());
    // Even ones expire at once, odd ones never within the test.
    const milliseconds timeout = i % 2 == 0 ? milliseconds(1) : milliseconds(60000);
    watches.push_back(
        std::make_unique<RequestWatch>(connections.back()->server, *cancels.back(), timeout));
  }
  watches.erase(watches.begin() + 2);  // one gone from the middle of the list
  run_for(io, RequestWatch::kTick * 4);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(cancels[i]->cancelled(), i % 2 == 0 && i != 2) << i;
  }
  watches.clear();
}

}  // namespace
}  // namespace tandem::server
