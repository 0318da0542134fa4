#pragma once
// Tandem's generic tool-call format, for chat templates that cannot show tools (and models
// without a template): the tools and the answer format go into a system message, the answer
// is one JSON object — {"tool_calls": [{name, arguments}]} or {"response": text} — that a
// grammar holds the model to, and it is read back as it streams. Internal to the engine.
//
// Thread-safety: free functions without shared state.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat.h"
#include "engine/chat_format.h"

namespace tandem::engine {

// The schema of a generic answer: calls to the tools (each with its own parameters schema),
// or, unless a call is required, a plain response. Ordered: the grammar then has the model
// write a call's name before its arguments (so the call can stream) and the arguments'
// properties in the order the tool declares them.
nlohmann::ordered_json generic_schema(const ChatRequest& request);

// The conversation for a template without tools: the tools and the answer format in a system
// message, earlier calls as the JSON the model would have written, results as tool messages.
std::vector<ChatMessage> generic_messages(const ChatRequest& request);

// A generic answer read as far as it is written, for streaming: the response's text so far,
// or each call's name once complete and its arguments' raw JSON text so far. Both only grow
// as more text comes, so what was sent never has to be taken back. A cut-off envelope is
// never shown as text.
common_chat_msg read_generic_answer(const std::string& text);

}  // namespace tandem::engine
