#include "engine/text_stream.h"

#include <algorithm>

namespace tandem::engine {
namespace {

// Number of bytes a UTF-8 sequence starting with `lead` has, or 0 for a byte that cannot lead.
size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) {
    return 1;
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    return 2;
  }
  if (lead >= 0xE0 && lead <= 0xEF) {
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    return 4;
  }
  return 0;
}

bool is_continuation(unsigned char byte) {
  return (byte & 0xC0) == 0x80;
}

// Whether bytes[1..n) are valid continuations for this lead (including the overlong and
// surrogate exclusions of RFC 3629), checking only the bytes that are present.
bool valid_prefix(std::string_view seq) {
  const auto lead = static_cast<unsigned char>(seq[0]);
  for (size_t i = 1; i < seq.size(); ++i) {
    const auto byte = static_cast<unsigned char>(seq[i]);
    if (!is_continuation(byte)) {
      return false;
    }
    if (i == 1) {
      if ((lead == 0xE0 && byte < 0xA0) || (lead == 0xED && byte > 0x9F) ||
          (lead == 0xF0 && byte < 0x90) || (lead == 0xF4 && byte > 0x8F)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

size_t utf8_complete_prefix_length(std::string_view text) {
  // Only the last (up to 3) bytes can be an unfinished sequence.
  const size_t n = text.size();
  for (size_t back = 1; back <= std::min<size_t>(3, n); ++back) {
    const size_t start = n - back;
    const auto byte = static_cast<unsigned char>(text[start]);
    if (is_continuation(byte)) {
      continue;
    }
    const size_t need = sequence_length(byte);
    if (need > back && valid_prefix(text.substr(start))) {
      return start;
    }
    return n;
  }
  return n;
}

std::string utf8_sanitize(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t need = sequence_length(static_cast<unsigned char>(text[i]));
    if (need == 0 || i + need > text.size() || !valid_prefix(text.substr(i, need))) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(text.substr(i, need));
    i += need;
  }
  return out;
}

TextStream::TextStream(std::vector<std::string> stop_strings) : stops_(std::move(stop_strings)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

size_t TextStream::longest_stop_prefix_suffix() const {
  size_t longest = 0;
  for (const auto& stop : stops_) {
    const size_t max_len = std::min(stop.size() - 1, pending_.size());
    for (size_t len = max_len; len > longest; --len) {
      if (std::string_view(pending_).substr(pending_.size() - len) ==
          std::string_view(stop).substr(0, len)) {
        longest = len;
        break;
      }
    }
  }
  return longest;
}

TextStream::Update TextStream::push(std::string_view piece) {
  Update update;
  if (stopped_) {
    update.stopped = true;
    return update;
  }
  pending_.append(piece);

  // The earliest stop string wins: it is where the client-visible text ends.
  size_t cut = std::string::npos;
  for (const auto& stop : stops_) {
    cut = std::min(cut, pending_.find(stop));
  }
  if (cut != std::string::npos) {
    update.text = utf8_sanitize(std::string_view(pending_).substr(0, cut));
    released_ += update.text;
    pending_.clear();
    stopped_ = true;
    update.stopped = true;
    return update;
  }

  size_t releasable = pending_.size() - longest_stop_prefix_suffix();
  releasable = utf8_complete_prefix_length(std::string_view(pending_).substr(0, releasable));
  update.text = utf8_sanitize(std::string_view(pending_).substr(0, releasable));
  pending_.erase(0, releasable);
  released_ += update.text;
  return update;
}

std::string TextStream::finish() {
  if (stopped_) {
    return {};
  }
  std::string tail = utf8_sanitize(pending_);
  pending_.clear();
  released_ += tail;
  return tail;
}

}  // namespace tandem::engine
