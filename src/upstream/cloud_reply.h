#pragma once
// Reading what a cloud upstream answers: one chunk of its event stream, a whole non-streaming
// answer, or the message of an error body. These run once per chunk on the I/O threads, so they
// read the JSON with simdjson (a tape, no tree of heap nodes: about a tenth of the instructions
// of building an nlohmann::json for a typical answer) and copy out only the fields Tandem uses.

#include <string>

#include "common/result.h"
#include "upstream/cloud_event.h"

namespace tandem::upstream {

// Parses one upstream stream chunk (`data:` payload), or with `whole` a complete
// non-streaming response (choices[0].message instead of .delta). Fails (a malformed reply, which
// the caller treats like any protocol failure of the upstream: retried, counted by the circuit,
// then the next upstream or tier) on JSON errors (including an integer beyond 64 bits), an
// {"error": ...} object, `choices` that is not a list (null reads as absent), a choices[0] that
// is not an object, a chat message/delta that is not an object, and for a whole answer no
// choices or no message. Fields inside the answer of the wrong type are ignored: text,
// reasoning and finish_reason that are not strings, tool call items that are not objects, have
// an index that is not an integer in [0, kMaxToolCalls), a type other than "function", or carry
// no id, name or arguments; arguments sent as a JSON value rather than text are relayed as that
// value's JSON text. Usage counts that are not integers in [0, INT32_MAX] read as 0 and are
// named in usage_problem. A key that appears twice counts with its last value. Never throws.
Result<CloudEvent> parse_cloud_chunk(const std::string& data, ApiKind kind, bool whole = false);

// The message inside an OpenAI error body ({"error": {"message": ...}} or {"error": "..."}), or
// the body's first 200 bytes when it has none.
std::string error_message_of(const std::string& body);

}  // namespace tandem::upstream
