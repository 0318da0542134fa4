#include "net/http_read.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/read_file.h"
#include "connected_pair.h"

namespace tandem::net {
namespace {

using boost::system::error_code;
using testing::connected_pair;

struct ReadCase {
  std::string name;
  bool request = true;
  std::string read;  // "message", "header" or "some"
  std::vector<std::string> segments;
  bool close = false;
  std::optional<uint64_t> body_limit;
  std::optional<uint32_t> header_limit;
};

std::vector<ReadCase> load_cases() {
  const auto text = read_file(std::string(TANDEM_NET_CASES) + "/http_messages.json");
  EXPECT_TRUE(text.ok()) << text.error().message;
  std::vector<ReadCase> cases;
  if (!text.ok()) {
    return cases;
  }
  const nlohmann::json document = nlohmann::json::parse(text.value());
  for (const auto& entry : document.at("cases")) {
    ReadCase c;
    c.name = entry.at("name").get<std::string>();
    c.request = entry.at("kind").get<std::string>() == "request";
    c.read = entry.at("read").get<std::string>();
    c.segments = entry.at("segments").get<std::vector<std::string>>();
    c.close = entry.value("close", false);
    if (entry.contains("body_limit")) {
      c.body_limit = entry["body_limit"].get<uint64_t>();
    }
    if (entry.contains("header_limit")) {
      c.header_limit = entry["header_limit"].get<uint32_t>();
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// What a read ended with: compared between the two readers.
struct Outcome {
  std::string error;  // the error's category and message, "" for none
  bool header_done = false;
  bool done = false;
  std::string message;  // the start line, fields and body as parsed
  std::string left;     // the bytes left in the buffer

  friend bool operator==(const Outcome&, const Outcome&) = default;
};

std::ostream& operator<<(std::ostream& out, const Outcome& o) {
  return out << "{error: \"" << o.error << "\", header_done: " << o.header_done
             << ", done: " << o.done << ", message: \"" << o.message << "\", left: \"" << o.left
             << "\"}";
}

std::string describe(const error_code& ec) {
  return ec ? std::string(ec.category().name()) + ": " + ec.message() : "";
}

template <typename Parser>
void configure(Parser& parser, const ReadCase& c) {
  if (c.body_limit) {
    parser.body_limit(*c.body_limit);
  }
  if (c.header_limit) {
    parser.header_limit(*c.header_limit);
  }
}

template <typename Parser>
std::string parsed_text(Parser& parser) {
  std::ostringstream out;
  out << parser.get().base() << "|" << parser.get().body();
  return out.str();
}

// Reads with Beast's operations (`beast_reads`) or with net/http_read.h.
template <bool kIsRequest>
awaitable<Outcome> read_case(beast::tcp_stream& stream, const ReadCase& c, bool beast_reads) {
  beast::flat_buffer buffer;
  Outcome outcome;
  error_code ec;
  if (c.read == "some") {
    // The body through an 8-byte window, as the upstream client reads a stream.
    http::parser<kIsRequest, http::buffer_body> parser;
    configure(parser, c);
    std::string body;
    while (!parser.is_done()) {
      char window[8];
      parser.get().body().data = window;
      parser.get().body().size = sizeof(window);
      if (beast_reads) {
        co_await http::async_read_some(stream, buffer, parser,
                                       asio::redirect_error(use_awaitable, ec));
      } else {
        ec = co_await read_some(stream, buffer, parser);
      }
      body.append(window, sizeof(window) - parser.get().body().size);
      if (ec && ec != http::error::need_buffer) {
        break;
      }
      ec = {};
    }
    outcome.message = body;
    outcome.header_done = parser.is_header_done();
    outcome.done = parser.is_done();
  } else {
    http::parser<kIsRequest, http::string_body> parser;
    configure(parser, c);
    const bool whole = c.read == "message";
    if (beast_reads && whole) {
      co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
    } else if (beast_reads) {
      co_await http::async_read_header(stream, buffer, parser,
                                       asio::redirect_error(use_awaitable, ec));
    } else if (whole) {
      ec = co_await read_message(stream, buffer, parser);
    } else {
      ec = co_await read_header(stream, buffer, parser);
    }
    outcome.header_done = parser.is_header_done();
    outcome.done = parser.is_done();
    if (!ec) {
      outcome.message = parsed_text(parser);
    }
  }
  outcome.error = describe(ec);
  outcome.left = beast::buffers_to_string(buffer.data());
  co_return outcome;
}

Outcome run_case(const ReadCase& c, bool beast_reads) {
  asio::io_context io;
  auto [writer, reader] = connected_pair(io);
  beast::tcp_stream stream(std::move(reader));
  stream.expires_after(std::chrono::seconds(10));
  std::thread write([&writer = writer, &c] {
    for (const std::string& segment : c.segments) {
      asio::write(writer, asio::buffer(segment));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (c.close) {
      writer.shutdown(tcp::socket::shutdown_send);
    }
  });
  Outcome outcome;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        if (c.request) {
          outcome = co_await read_case<true>(stream, c, beast_reads);
        } else {
          outcome = co_await read_case<false>(stream, c, beast_reads);
        }
      },
      asio::detached);
  io.run();
  write.join();
  return outcome;
}

TEST(HttpReadTest, EveryCaseEndsAsBeastsOwnReadsEndIt) {
  const auto cases = load_cases();
  ASSERT_GE(cases.size(), 20U);
  for (const ReadCase& c : cases) {
    const Outcome beast_outcome = run_case(c, true);
    const Outcome ours = run_case(c, false);
    EXPECT_EQ(ours, beast_outcome) << c.name;
  }
}

TEST(HttpReadTest, TheCasesCoverSuccessErrorsAndLeftovers) {
  // The differential test above means something only if the cases reach these outcomes.
  size_t done = 0;
  size_t failed = 0;
  size_t left = 0;
  for (const ReadCase& c : load_cases()) {
    const Outcome ours = run_case(c, false);
    done += ours.done ? 1 : 0;
    failed += ours.error.empty() ? 0 : 1;
    left += ours.left.empty() ? 0 : 1;
  }
  EXPECT_GE(done, 10U);
  EXPECT_GE(failed, 6U);
  EXPECT_GE(left, 2U);
}

TEST(HttpReadTest, ASecondRequestOnTheConnectionIsReadFromTheBuffer) {
  asio::io_context io;
  auto [writer, reader] = connected_pair(io);
  beast::tcp_stream stream(std::move(reader));
  asio::write(writer, asio::buffer(std::string("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n")));
  writer.shutdown(tcp::socket::shutdown_send);
  std::vector<std::string> targets;
  error_code last;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        beast::flat_buffer buffer;
        while (true) {
          http::request_parser<http::empty_body> parser;
          last = co_await read_message(stream, buffer, parser);
          if (last) {
            break;
          }
          targets.emplace_back(parser.get().target());
        }
      },
      asio::detached);
  io.run();
  EXPECT_EQ(targets, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(last, http::error::end_of_stream);
}

TEST(HttpReadTest, TheStreamsTimeoutStillApplies) {
  asio::io_context io;
  auto [writer, reader] = connected_pair(io);
  beast::tcp_stream stream(std::move(reader));
  asio::write(writer,
              asio::buffer(std::string("POST /a HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc")));
  stream.expires_after(std::chrono::milliseconds(50));
  error_code ec;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        beast::flat_buffer buffer;
        http::request_parser<http::string_body> parser;
        ec = co_await read_message(stream, buffer, parser);
      },
      asio::detached);
  io.run();
  EXPECT_EQ(ec, beast::error::timeout) << ec.message();
}

}  // namespace
}  // namespace tandem::net
