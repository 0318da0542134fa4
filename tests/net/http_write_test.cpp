#include "net/http_write.h"

#include <array>
#include <cstdio>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "connected_pair.h"

namespace tandem::net {
namespace {

using boost::system::error_code;
using testing::connected_pair;

// The bytes Beast's own serializer writes for `message`.
template <typename Message>
std::string beast_bytes(const Message& message) {
  std::ostringstream out;
  out << message;
  return out.str();
}

StringResponse response(unsigned code, std::string body) {
  StringResponse res{static_cast<http::status>(code), 11};
  res.set(http::field::content_type, "application/json");
  res.set("X-Tandem-Route", "cloud");
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

TEST(HttpWriteTest, ResponseHeadsAreTheBytesBeastWrites) {
  std::vector<StringResponse> cases;
  cases.push_back(response(200, "{\"ok\":true}"));
  cases.push_back(response(429, ""));
  cases.push_back(response(599, "unknown status"));  // no standard reason
  StringResponse reason = response(503, "x");
  reason.reason("Busy Right Now");
  cases.push_back(reason);
  StringResponse old = response(404, "gone");
  old.version(10);
  old.keep_alive(false);
  cases.push_back(old);
  StringResponse many = response(200, std::string(5000, 'b'));
  for (int i = 0; i < 40; ++i) {
    many.insert("X-Field-" + std::to_string(i), std::string(i, 'v'));
  }
  many.insert("X-Field-1", "a repeated name keeps both");
  cases.push_back(many);
  for (const auto& res : cases) {
    EXPECT_EQ(message_head(res) + res.body(), beast_bytes(res)) << res.result_int();
  }
}

TEST(HttpWriteTest, RequestHeadsAreTheBytesBeastWrites) {
  StringRequest post{http::verb::post, "/v1/chat/completions?x=1", 11};
  post.set(http::field::host, "127.0.0.1:8080");
  post.set(http::field::authorization, "Bearer sk-test");
  post.body() = R"({"model":"m","messages":[]})";
  post.prepare_payload();
  StringRequest get{http::verb::get, "/health", 10};
  StringRequest custom{http::verb::unknown, "/", 11};
  custom.method_string("PURGE");
  for (const auto& req : {post, get, custom}) {
    EXPECT_EQ(message_head(req) + req.body(), beast_bytes(req)) << req.method_string();
  }
}

// A connected pair of loopback sockets on `io`.
// Reads one whole response from `socket` with Beast's parser.
StringResponse read_response(tcp::socket& socket) {
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(socket, buffer, parser);
  return parser.release();
}

TEST(HttpWriteTest, ChunkSizeLinesAreLowercaseHex) {
  for (const size_t size : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{255}, size_t{4096},
                            size_t{0xabcdef}, size_t{1} << 40}) {
    std::array<char, 32> expected{};
    std::snprintf(expected.data(), expected.size(), "%zx\r\n", size);
    EXPECT_EQ(chunk_size_line(size), expected.data());
  }
}

TEST(HttpWriteTest, PartsAreWrittenInOrderWhateverTheirCount) {
  asio::io_context io;
  auto [writer_socket, reader_socket] = connected_pair(io);
  beast::tcp_stream stream(std::move(writer_socket));
  // Six parts: more than one sendmsg here takes, so all go by the asynchronous write.
  const std::array<std::string_view, 6> six{"a", "", "bc", "def", "", "g"};
  const std::array<std::string_view, 3> three{"h", "ij", "k"};
  error_code first = asio::error::would_block;
  error_code second = asio::error::would_block;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        first = co_await write_parts(stream, six);
        second = co_await write_parts(stream, three);
      },
      asio::detached);
  io.run();
  EXPECT_FALSE(first);
  EXPECT_FALSE(second);
  std::string received(11, '\0');
  asio::read(reader_socket, asio::buffer(received));
  EXPECT_EQ(received, "abcdefghijk");
}

TEST(HttpWriteTest, AMessageLargerThanTheSocketTakesIsWrittenWhole) {
  asio::io_context io;
  auto [writer_socket, reader_socket] = connected_pair(io);
  writer_socket.set_option(asio::socket_base::send_buffer_size(4096));
  // 1 MiB: the first send takes only part, the rest waits for the reader.
  const StringResponse sent = response(200, std::string(1 << 20, 'z'));
  beast::tcp_stream stream(std::move(writer_socket));
  error_code written = asio::error::would_block;
  asio::co_spawn(
      io, [&]() -> awaitable<void> { written = co_await write_message(stream, sent); },
      asio::detached);
  StringResponse received;
  std::thread reader([&] { received = read_response(reader_socket); });
  io.run();
  reader.join();
  EXPECT_FALSE(written) << written.message();
  EXPECT_EQ(received.result_int(), 200U);
  EXPECT_EQ(received.body().size(), sent.body().size());
  EXPECT_EQ(received.body(), sent.body());
}

TEST(HttpWriteTest, WritingToAPeerThatHasGoneIsAnErrorNotASignal) {
  asio::io_context io;
  auto [writer_socket, reader_socket] = connected_pair(io);
  reader_socket.close();
  beast::tcp_stream stream(std::move(writer_socket));
  error_code written;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        // The first write may still be taken; the peer's reset then fails a later one.
        const StringResponse message = response(200, std::string(1000, 'q'));
        for (int i = 0; i < 50; ++i) {
          written = co_await write_message(stream, message);
          if (written) {
            break;
          }
        }
      },
      asio::detached);
  io.run();
  EXPECT_TRUE(written == asio::error::broken_pipe || written == asio::error::connection_reset)
      << written.message();
}

TEST(HttpWriteTest, AChunkedMessageIsLeftToBeastsSerializer) {
  asio::io_context io;
  auto [writer_socket, reader_socket] = connected_pair(io);
  StringResponse chunked{http::status::ok, 11};
  chunked.chunked(true);
  chunked.body() = "streamed";
  beast::tcp_stream stream(std::move(writer_socket));
  error_code written = asio::error::would_block;
  asio::co_spawn(
      io, [&]() -> awaitable<void> { written = co_await write_message(stream, chunked); },
      asio::detached);
  io.run();
  EXPECT_FALSE(written) << written.message();
  const StringResponse received = read_response(reader_socket);
  EXPECT_TRUE(received.chunked());
  EXPECT_EQ(received.body(), "streamed");
}

}  // namespace
}  // namespace tandem::net
