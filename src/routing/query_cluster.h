#pragma once
// Locality-sensitive keys of a query, for the consistency memory (ConsRoute): two queries
// whose content words overlap a lot share at least one key with high probability, unrelated
// queries rarely do. MinHash over the set of content words, banded: kBands keys of kRows
// hashes each. With Jaccard similarity J, P(share a key) = 1 - (1 - J^3)^4: 0.94 at J = 0.8,
// 0.41 at 0.5, 0.10 at 0.3.

#include <cstdint>
#include <string_view>
#include <vector>

namespace tandem::routing {

inline constexpr size_t kClusterBands = 4;
inline constexpr size_t kClusterRows = 3;

// Empty when the text has no content words (nothing to be consistent about).
std::vector<uint64_t> query_cluster_keys(std::string_view text);

}  // namespace tandem::routing
