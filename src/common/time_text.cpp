#include "common/time_text.h"

#include <ctime>

namespace tandem {

std::string utc_iso8601(int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  if (gmtime_r(&seconds, &tm) == nullptr) {
    return "(invalid time)";
  }
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace tandem
