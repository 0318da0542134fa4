#pragma once
// Timestamps as people read them in reports and files: ISO 8601 in UTC.

#include <cstdint>
#include <string>

namespace tandem {

// "2026-11-30T09:47:21Z" for a time in milliseconds since the epoch (seconds precision).
std::string utc_iso8601(int64_t unix_ms);

}  // namespace tandem
