#include "net/sse.h"

namespace tandem::net {

void SseParser::take_line(std::string_view line, std::vector<std::string>& events) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  if (line.empty()) {  // a blank line ends the event
    if (has_data_) {
      events.push_back(std::move(data_));
    }
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') {
    return;  // comment, e.g. keep-alive pings
  }
  const auto colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  if (field != "data") {
    return;
  }
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') {
    value.remove_prefix(1);
  }
  if (has_data_) {
    data_.push_back('\n');
  }
  data_.append(value);
  has_data_ = true;
}

Status SseParser::feed(std::string_view bytes, std::vector<std::string>& events) {
  while (!bytes.empty()) {
    const auto newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      line_.append(bytes);
      break;
    }
    line_.append(bytes.substr(0, newline));
    bytes.remove_prefix(newline + 1);
    take_line(line_, events);
    line_.clear();
  }
  if (line_.size() + data_.size() > max_event_bytes_) {
    return make_error(ErrorCode::kInternal, "upstream sent a server-sent event larger than " +
                                                std::to_string(max_event_bytes_) + " bytes");
  }
  return {};
}

std::string sse_event(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  out.append("data: ").append(payload).append("\n\n");
  return out;
}

}  // namespace tandem::net
