#pragma once
// Structured logs: one JSON object per line on stderr, e.g.
//   {"ts":"2026-11-30T04:50:01.123Z","level":"warn","component":"upstream","event":
//    "circuit_open","upstream":"openai","message":"5 consecutive failures"}
// Never pass prompt text or secrets here. Thread-safe (one write(2) per line).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tandem {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

using LogFields = std::vector<std::pair<std::string, std::string>>;

void log_event(LogLevel level, std::string_view component, std::string_view event,
               const LogFields& fields = {});

// Lines below this level are dropped (default kInfo).
void set_log_level(LogLevel level);

}  // namespace tandem
