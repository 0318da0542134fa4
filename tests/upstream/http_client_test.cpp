#include "upstream/http_client.h"

#include <optional>
#include <sstream>
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

// A one-shot upstream that keeps the request's bytes as they came and answers `response`.
net::awaitable<void> record_and_answer(net::tcp::acceptor& acceptor, std::string& received,
                                       const std::string& response) {
  auto socket = co_await acceptor.async_accept(net::use_awaitable);
  net::beast::flat_buffer buffer;
  net::http::request<net::http::string_body> req;
  co_await net::http::async_read(socket, buffer, req, net::use_awaitable);
  std::ostringstream text;
  text << req;
  received = text.str();
  co_await net::asio::async_write(socket, net::asio::buffer(response), net::use_awaitable);
  char byte = 0;
  boost::system::error_code ec;
  co_await socket.async_read_some(net::asio::buffer(&byte, 1),
                                  net::asio::redirect_error(net::use_awaitable, ec));
}

struct Exchanged {
  std::string request;  // what the upstream read
  std::optional<HttpFailure> failure;
  int status = 0;
  std::string content_type;
  std::string retry_after;
  std::string body;
};

// One request through open_exchange to a recording upstream, its body read to the end.
Exchanged exchange_once(const HttpRequest& request, const std::string& response) {
  net::asio::io_context ioc;
  net::tcp::acceptor acceptor(ioc, {net::asio::ip::make_address("127.0.0.1"), 0});
  const Endpoint at{false, "127.0.0.1", std::to_string(acceptor.local_endpoint().port()), "/v1"};
  auto tls = make_tls_context(false, "");
  Exchanged out;
  net::asio::co_spawn(ioc, record_and_answer(acceptor, out.request, response), net::asio::detached);
  net::asio::co_spawn(
      ioc,
      [&]() -> net::awaitable<void> {
        auto result = co_await open_exchange(*tls, at, request, config::Timeouts{}, 1 << 20);
        if (auto* failed = std::get_if<HttpFailure>(&result)) {
          out.failure = *failed;
          acceptor.close();
          co_return;
        }
        auto& exchange = std::get<std::unique_ptr<HttpExchange>>(result);
        out.status = exchange->status();
        out.content_type = exchange->content_type();
        out.retry_after = exchange->retry_after();
        auto body = co_await exchange->read_all(1 << 20);
        if (auto* text = std::get_if<std::string>(&body)) {
          out.body = *text;
        }
      },
      net::asio::detached);
  ioc.run();
  return out;
}

HttpRequest post_request(std::string body) {
  net::asio::io_context ioc;
  std::optional<HttpRequest> made;
  net::asio::co_spawn(
      ioc,
      [&]() -> net::awaitable<void> {
        AdmitEverything guard;
        const EgressSend send;
        auto admitted = co_await guard.admit(std::move(body), send);
        made.emplace("POST", "/chat/completions", std::get<GuardedBody>(admitted));
      },
      net::asio::detached);
  ioc.run();
  return std::move(*made);
}

const std::string kOk =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

TEST(HttpExchangeTest, WritesTheRequestHeadFieldByField) {
  HttpRequest request = post_request(R"({"model":"m"})");
  request.headers["Accept"] = "application/json";
  request.headers["Authorization"] = "Bearer k";
  const Exchanged got = exchange_once(request, kOk);
  ASSERT_FALSE(got.failure.has_value()) << got.failure->message;
  const std::string host = got.request.substr(got.request.find("Host: "));
  EXPECT_EQ(got.request.substr(0, got.request.find("\r\n")), "POST /v1/chat/completions HTTP/1.1");
  EXPECT_EQ(host.substr(host.find("\r\n") + 2),
            "User-Agent: tandem/0.1\r\nAccept: application/json\r\nAuthorization: Bearer "
            "k\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n"
            R"({"model":"m"})");
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "{}");
}

// A header's own value replaces the default; the body's type and length are always the head's.
TEST(HttpExchangeTest, RequestHeadersDoNotDuplicateTheHeadsOwnFields) {
  HttpRequest request = post_request("{}");
  request.headers["user-agent"] = "custom/1";
  request.headers["Content-Length"] = "999";
  const Exchanged got = exchange_once(request, kOk);
  ASSERT_FALSE(got.failure.has_value()) << got.failure->message;
  EXPECT_NE(got.request.find("User-Agent: custom/1\r\n"), std::string::npos) << got.request;
  EXPECT_EQ(got.request.find("tandem/0.1"), std::string::npos) << got.request;
  EXPECT_EQ(got.request.find("999"), std::string::npos) << got.request;
  EXPECT_NE(got.request.find("Content-Length: 2\r\n"), std::string::npos) << got.request;
}

// A value with a line break would end its field early and smuggle the rest in as fields of
// their own: nothing is sent, and the failure names the header.
TEST(HttpExchangeTest, RefusesAHeaderWithALineBreak) {
  HttpRequest request = post_request("{}");
  request.headers["Authorization"] = "Bearer k\r\nX-Injected: 1";
  const Exchanged got = exchange_once(request, kOk);
  ASSERT_TRUE(got.failure.has_value());
  EXPECT_EQ(got.failure->kind, HttpFailure::Kind::kProtocol);
  EXPECT_NE(got.failure->message.find("'Authorization'"), std::string::npos)
      << got.failure->message;
  EXPECT_TRUE(got.request.empty());
}

// The fields the gateway reads are kept whatever else the head holds, and a chunked body larger
// than one read buffer arrives whole.
TEST(HttpExchangeTest, ReadsTheFieldsItUsesAndALargeChunkedBody) {
  const std::string large(40000, 'x');
  std::ostringstream chunked;
  chunked << std::hex << large.size() << "\r\n" << large << "\r\n3\r\nend\r\n0\r\n\r\n";
  const std::string response =
      "HTTP/1.1 503 Service Unavailable\r\nServer: up\r\ncontent-type: text/plain\r\n"
      "X-Other: 1\r\nRetry-After: 7\r\nTransfer-Encoding: chunked\r\n\r\n" +
      chunked.str();
  const Exchanged got = exchange_once(post_request("{}"), response);
  ASSERT_FALSE(got.failure.has_value()) << got.failure->message;
  EXPECT_EQ(got.status, 503);
  EXPECT_EQ(got.content_type, "text/plain");
  EXPECT_EQ(got.retry_after, "7");
  EXPECT_EQ(got.body, large + "end");
}

}  // namespace
}  // namespace tandem::upstream
