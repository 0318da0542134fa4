#pragma once
// Pieces the upstream client's parts share (upstream.cpp for chat and completions,
// cloud_responses.cpp for the Responses API): failures named after their upstream, and token
// counts of an nlohmann::json usage read without throwing (an error body's message is
// cloud_reply.h's error_message_of). Internal to the upstream component.

#include <nlohmann/json.hpp>
#include <string>

#include "upstream/upstream.h"

namespace tandem::upstream::detail {

// A failure of `upstream` of `kind`, with `message` as written.
UpstreamFailure make_failure(const std::string& upstream, HttpFailure::Kind kind,
                             std::string message);

// A transport failure of `upstream`, its message prefixed with the upstream's name.
UpstreamFailure named_failure(const std::string& upstream, HttpFailure http);

// A token count from an upstream's usage object: 0 when absent, and 0 with a note in `problems`
// ("usage.prompt_tokens is null") when it is not an integer in [0, INT32_MAX]. A malformed usage
// is not worth failing an answer over, and reading it never throws.
int token_count(const nlohmann::json& usage, const char* key, const char* where,
                std::string& problems);

}  // namespace tandem::upstream::detail
