#include "server/sse_writer.h"

#include <array>
#include <chrono>
#include <span>
#include <string_view>

#include "net/http_write.h"
#include "net/sse.h"

namespace tandem::server {

namespace http = net::http;

namespace {
constexpr std::string_view kChunkEnd = "\r\n";
}  // namespace

net::awaitable<bool> SseWriter::headers(const std::string& tier) {
  net::StringResponse res{http::status::ok, 11};
  res.set(http::field::content_type, "text/event-stream");
  res.set(http::field::cache_control, "no-cache");
  res.set(http::field::server, "tandem");
  res.set("X-Tandem-Tier", tier);
  res.keep_alive(keep_alive_);
  res.chunked(true);
  const std::string head = net::message_head(res);
  const std::array<std::string_view, 1> parts{head};
  stream_.expires_after(write_timeout_);
  const boost::system::error_code ec = co_await net::write_parts(stream_, parts);
  began_ = true;
  broken_ = static_cast<bool>(ec);
  co_return !broken_;
}

net::awaitable<bool> SseWriter::write(const std::string& event) {
  if (broken_) {
    co_return false;
  }
  const std::string size = net::chunk_size_line(event.size());
  const std::array<std::string_view, 3> parts{size, event, kChunkEnd};
  stream_.expires_after(write_timeout_);
  const boost::system::error_code ec = co_await net::write_parts(stream_, parts);
  broken_ = static_cast<bool>(ec);
  co_return !broken_;
}

net::awaitable<void> SseWriter::end(bool done_marker) {
  static const std::string kDone = net::sse_event("[DONE]");
  static const std::string kDoneSize = net::chunk_size_line(kDone.size());
  static constexpr std::string_view kLastChunk = "0\r\n\r\n";
  // The [DONE] chunk and the last chunk leave together.
  const std::array<std::string_view, 4> with_done{kDoneSize, kDone, kChunkEnd, kLastChunk};
  const std::span<const std::string_view> parts =
      done_marker ? std::span<const std::string_view>(with_done)
                  : std::span<const std::string_view>(with_done).last(1);
  stream_.expires_after(write_timeout_);
  const boost::system::error_code ec = co_await net::write_parts(stream_, parts);
  broken_ = broken_ || static_cast<bool>(ec);
}

}  // namespace tandem::server
