#pragma once
// Server-sent events over a chunked HTTP/1.1 response: the headers once, then one chunk per
// event, then the end. What chat completions and the Responses API stream through.
// Thread-safety: one stream's coroutine at a time, like the session that owns the socket.

#include <chrono>
#include <string>

#include "net/asio.h"

namespace tandem::server {

class SseWriter {
 public:
  // A reader that takes none of a write for `write_timeout` is dropped (server.write_timeout_ms).
  SseWriter(net::beast::tcp_stream& stream, bool keep_alive,
            std::chrono::milliseconds write_timeout)
      : stream_(stream), keep_alive_(keep_alive), write_timeout_(write_timeout) {}

  // 200, text/event-stream, chunked, X-Tandem-Tier. False: the client is gone.
  net::awaitable<bool> headers(const std::string& tier);
  // One framed event ("data: ...\n\n", or with an "event:" line) as one chunk.
  net::awaitable<bool> write(const std::string& event);
  // `[DONE]` first when `done_marker` (chat completions end so; Responses streams do not),
  // then the last chunk.
  net::awaitable<void> end(bool done_marker);

  bool began() const { return began_; }
  bool broken() const { return broken_; }

 private:
  net::beast::tcp_stream& stream_;
  bool keep_alive_;
  std::chrono::milliseconds write_timeout_;
  bool began_ = false;
  bool broken_ = false;
};

}  // namespace tandem::server
