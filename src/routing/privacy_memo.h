#pragma once
// The short strings a scanner found nothing in, remembered per thread. Every OpenAI body
// repeats the same keys ("model", "messages", "role", "content"), roles and model names, and the
// egress guard scans each key and value of every body it sends; a scan sets up folding, the
// built-in detectors and the configured patterns even for "role", so a hit here replaces ~1,000
// instructions with a hash lookup.
//
// Sound because a verdict depends only on the text and the scanner's compiled rules, which
// never change: entries are kept under the rules' id, in one memo per set of rules (up to
// kMemoScanners per thread, the least recently used making way). Only clean verdicts are kept
// (findings carry offsets and masks worth recomputing), only for text of at most kMaxMemoBytes,
// and at most kMaxMemoEntries per memo (then it starts over), so memory is bounded whatever
// the traffic.
//
// Internal to the routing library. Thread-safety: each thread has its own memo.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tandem::routing::privacy_detail {

inline constexpr size_t kMaxMemoBytes = 64;
inline constexpr size_t kMaxMemoEntries = 1024;
inline constexpr size_t kMemoScanners = 4;

// Whether `text` is known to scan clean under the rules with id `rules_id`.
bool known_clean(uint64_t rules_id, std::string_view text);
// Remembers that `text` scanned clean under `rules_id` (ignored when longer than kMaxMemoBytes).
void remember_clean(uint64_t rules_id, std::string_view text);
// Entries this thread holds over all its memos, for tests.
size_t memo_size();

}  // namespace tandem::routing::privacy_detail
