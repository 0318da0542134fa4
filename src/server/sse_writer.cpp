#include "server/sse_writer.h"

#include <chrono>

#include "net/sse.h"

namespace tandem::server {

namespace asio = net::asio;
namespace http = net::http;

namespace {
// A reader that stalls this long on one write is dropped.
constexpr std::chrono::seconds kWriteTimeout{30};
}  // namespace

net::awaitable<bool> SseWriter::headers(const std::string& tier) {
  http::response<http::empty_body> res{http::status::ok, 11};
  res.set(http::field::content_type, "text/event-stream");
  res.set(http::field::cache_control, "no-cache");
  res.set(http::field::server, "tandem");
  res.set("X-Tandem-Tier", tier);
  res.keep_alive(keep_alive_);
  res.chunked(true);
  http::response_serializer<http::empty_body> serializer{res};
  boost::system::error_code ec;
  stream_.expires_after(kWriteTimeout);
  co_await http::async_write_header(stream_, serializer,
                                    asio::redirect_error(net::use_awaitable, ec));
  began_ = true;
  broken_ = static_cast<bool>(ec);
  co_return !broken_;
}

net::awaitable<bool> SseWriter::write(const std::string& event) {
  if (broken_) {
    co_return false;
  }
  boost::system::error_code ec;
  stream_.expires_after(kWriteTimeout);
  const auto chunk = http::make_chunk(asio::buffer(event));
  co_await asio::async_write(stream_, chunk, asio::redirect_error(net::use_awaitable, ec));
  broken_ = static_cast<bool>(ec);
  co_return !broken_;
}

net::awaitable<void> SseWriter::end(bool done_marker) {
  static const std::string kDone = net::sse_event("[DONE]");
  boost::system::error_code ec;
  if (done_marker) {
    const auto done_chunk = http::make_chunk(asio::buffer(kDone));
    co_await asio::async_write(stream_, done_chunk, asio::redirect_error(net::use_awaitable, ec));
  }
  if (!ec) {
    const auto last_chunk = http::make_chunk_last();
    co_await asio::async_write(stream_, last_chunk, asio::redirect_error(net::use_awaitable, ec));
  }
  broken_ = broken_ || static_cast<bool>(ec);
}

}  // namespace tandem::server
