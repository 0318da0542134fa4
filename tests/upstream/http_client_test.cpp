#include "upstream/http_client.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::upstream {
namespace {

TEST(BaseUrlTest, ParsesSchemesHostsPortsAndPaths) {
  auto a = parse_base_url("https://api.openai.com/v1");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->tls);
  EXPECT_EQ(a->host, "api.openai.com");
  EXPECT_EQ(a->port, "443");
  EXPECT_EQ(a->base_path, "/v1");
  auto b = parse_base_url("http://127.0.0.1:8081/");
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->tls);
  EXPECT_EQ(b->port, "8081");
  EXPECT_EQ(b->base_path, "");
  auto c = parse_base_url("http://[::1]:9000/v1");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, "9000");
  EXPECT_FALSE(parse_base_url("ftp://x").ok());
  EXPECT_FALSE(parse_base_url("http://:80").ok());
  EXPECT_FALSE(parse_base_url("http://host:port/").ok());
}

TEST(RetryAfterTest, SecondsAndHttpDates) {
  EXPECT_EQ(parse_retry_after("3")->count(), 3000);
  EXPECT_EQ(parse_retry_after("0")->count(), 0);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")->count(), 0);  // in the past
  EXPECT_FALSE(parse_retry_after("soon").has_value());
  EXPECT_FALSE(parse_retry_after("").has_value());
}

// A one-shot upstream on loopback: reads one request, answers 200 with `{}`, then waits for
// the client to close.
net::awaitable<void> answer_once(net::tcp::acceptor& acceptor) {
  auto socket = co_await acceptor.async_accept(net::use_awaitable);
  net::beast::flat_buffer buffer;
  net::http::request<net::http::string_body> req;
  co_await net::http::async_read(socket, buffer, req, net::use_awaitable);
  const std::string response =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
  co_await net::asio::async_write(socket, net::asio::buffer(response), net::use_awaitable);
  char byte = 0;
  boost::system::error_code ec;
  co_await socket.async_read_some(net::asio::buffer(&byte, 1),
                                  net::asio::redirect_error(net::use_awaitable, ec));
}

// This test is about the connection, not about what may leave: every body goes.
class AdmitEverything final : public EgressGuard {
 protected:
  net::awaitable<std::optional<EgressRefusal>> inspect(const std::string& /*bytes*/,
                                                       const EgressSend& /*send*/) override {
    co_return std::nullopt;
  }
};

// cancel() posts the socket's close; a caller may cancel and destroy the exchange at once
// (Upstream::attempt does when the client went away). The close must then do nothing. Found
// by bench/soak.sh as a crash; scripts/sanitize.sh asan reports the use-after-free without
// the fix.
TEST(HttpExchangeTest, CancelThenDestroyAtOnceIsSafe) {
  net::asio::io_context ioc;
  net::tcp::acceptor acceptor(ioc, {net::asio::ip::make_address("127.0.0.1"), 0});
  const Endpoint at{false, "127.0.0.1", std::to_string(acceptor.local_endpoint().port()), ""};
  auto tls = make_tls_context(false, "");
  bool opened = false;
  net::asio::co_spawn(ioc, answer_once(acceptor), net::asio::detached);
  net::asio::co_spawn(
      ioc,
      [&]() -> net::awaitable<void> {
        AdmitEverything guard;
        const EgressSend send;
        std::string body = "{}";
        auto admitted = co_await guard.admit(std::move(body), send);
        HttpRequest request("POST", "/chat/completions", std::get<GuardedBody>(admitted));
        auto result = co_await open_exchange(*tls, at, request, config::Timeouts{}, 1024);
        auto* exchange = std::get_if<std::unique_ptr<HttpExchange>>(&result);
        if (exchange == nullptr) {
          co_return;
        }
        opened = (*exchange)->status() == 200;
        (*exchange)->cancel();  // posts the close...
        exchange->reset();      // ...and the exchange is gone before it runs
      },
      net::asio::detached);
  ioc.run();
  EXPECT_TRUE(opened);
}

}  // namespace
}  // namespace tandem::upstream
