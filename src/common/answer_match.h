#pragma once
// Comparing two answers to the same query by their final answer, not their wording: the P3
// "match" judge compares the edge's answer with the cloud's this way, and the routing traces
// keep only the hash of the edge's normalised answer, so that a reviewer's later answer can
// label the edge answer good or bad without the trace ever holding answer text.
//
// Thread-safety: pure functions.

#include <string>
#include <string_view>

namespace tandem {

// The final answer when the text marks one — what follows the last "####", else the last
// "answer is", else the last "answer:" — or else the whole text; lower case, ASCII letters and
// digits only: "The answer is: B." and "b" match, "#### 42" and "42" match.
std::string normalised_answer(std::string_view text);

// Lower-case hex sha256 of normalised_answer(text): two answers match when their hashes do.
std::string answer_hash(std::string_view text);

}  // namespace tandem
