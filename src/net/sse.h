#pragma once
// Server-sent events: an incremental parser for upstream streams and the writer's framing.
// The parser takes bytes as they arrive (an event may span reads, a read may hold several
// events) and yields each event's data. Comments (":" lines) and fields other than "data"
// are ignored, as OpenAI-compatible servers use only data lines.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tandem::net {

class SseParser {
 public:
  // `max_event_bytes` bounds one event, so a stream without blank lines cannot grow memory.
  explicit SseParser(size_t max_event_bytes = 4 << 20) : max_event_bytes_(max_event_bytes) {}

  // Feeds bytes; appends the data of every completed event to `events`. Fails (kInternal,
  // message naming the limit) when an event exceeds max_event_bytes.
  Status feed(std::string_view bytes, std::vector<std::string>& events);

 private:
  void take_line(std::string_view line, std::vector<std::string>& events);

  size_t max_event_bytes_;
  std::string line_;  // the unfinished line
  std::string data_;  // data lines of the current event, joined by '\n'
  bool has_data_ = false;
};

// "data: <payload>\n\n"
std::string sse_event(std::string_view payload);

}  // namespace tandem::net
