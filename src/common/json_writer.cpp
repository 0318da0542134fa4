#include "common/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "common/json_plain.h"
#include "common/utf8.h"

namespace tandem {
namespace {

// Keys and most values are short and plain ASCII (field names, ids, model names, reason
// codes). Such a text goes out in one append, separator and quotes included, where the
// general path makes four; a response writes some fifty of them. False (nothing written) for
// anything else.
constexpr size_t kShortText = 64;

// `n` with its bound hidden from the optimiser. Knowing the append below copies at most
// kShortText + 4 bytes, GCC inlines the copy (`rep movsq` under its generic tuning, a vector
// loop under ours, CMakeLists.txt), and either made this function 1.8–3.6 times as slow as a
// call to glibc's memcpy does (perf samples under wrk, docs/BENCHMARKS.md).
size_t unbounded(size_t n) {
  asm("" : "+r"(n));
  return n;
}

bool append_short_plain(std::string& out, bool comma, std::string_view text, char after) {
  if (text.size() > kShortText || json_plain_run_end(text, 0) != text.size()) {
    return false;
  }
  char buffer[kShortText + 4];
  size_t n = 0;
  if (comma) {
    buffer[n++] = ',';
  }
  buffer[n++] = '"';
  std::memcpy(buffer + n, text.data(), text.size());
  n += text.size();
  buffer[n++] = '"';
  if (after != 0) {
    buffer[n++] = after;
  }
  out.append(buffer, unbounded(n));
  return true;
}

void append_escaped_control(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
  out.append(escaped, sizeof(escaped));
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  size_t i = 0;
  while (i < text.size()) {
    const size_t run = json_plain_run_end(text, i);
    out.append(text.data() + i, run - i);
    i = run;
    if (i == text.size()) {
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      append_escaped_control(out, c);
      ++i;
      continue;
    }
    const size_t length = utf8_sequence(text, i);
    if (length > 0) {
      out.append(text.data() + i, length);
      i += length;
    } else {
      out += "\xef\xbf\xbd";  // one replacement character per byte that starts no character
      ++i;
    }
  }
  out += '"';
}

void JsonWriter::separate() {
  if (need_comma_) {
    out_ += ',';
  }
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  out_ += '{';
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_ += '}';
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  separate();
  out_ += '[';
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_ += ']';
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (!append_short_plain(out_, need_comma_, name, ':')) {
    separate();
    append_json_string(out_, name);
    out_ += ':';
  }
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  if (!append_short_plain(out_, need_comma_, text, 0)) {
    separate();
    append_json_string(out_, text);
  }
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::number(int64_t value) {
  separate();
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  out_.append(digits, end);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::number(double value) {
  if (!std::isfinite(value)) {
    return null();
  }
  separate();
  char digits[32];
  const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  const std::string_view text(digits, static_cast<size_t>(end - digits));
  out_ += text;
  if (text.find_first_of(".e") == std::string_view::npos) {
    out_ += ".0";
  }
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
  separate();
  out_ += value ? "true" : "false";
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  out_ += "null";
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_ += json;
  need_comma_ = true;
  return *this;
}

}  // namespace tandem
