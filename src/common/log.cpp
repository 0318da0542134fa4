#include "common/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

#include <unistd.h>

namespace tandem {
namespace {

std::atomic<LogLevel> g_min_level{LogLevel::kInfo};

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[96];  // generous: the compiler cannot bound the int fields
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis));
  return text;
}

}  // namespace

void set_log_level(LogLevel level) {
  g_min_level.store(level);
}

void log_event(LogLevel level, std::string_view component, std::string_view event,
               const LogFields& fields) {
  if (level < g_min_level.load()) {
    return;
  }
  std::string line =
      "{\"ts\":\"" + timestamp() + "\",\"level\":\"" + level_name(level) + "\",\"component\":";
  append_json_string(line, component);
  line += ",\"event\":";
  append_json_string(line, event);
  for (const auto& [key, value] : fields) {
    line.push_back(',');
    append_json_string(line, key);
    line.push_back(':');
    append_json_string(line, value);
  }
  line += "}\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace tandem
