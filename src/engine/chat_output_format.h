#pragma once
// How to read one request's answer back, as chat_format.cpp decides it and ChatOutput
// (chat_output.cpp) uses it. Internal to the engine: it holds llama.cpp's parser types.

#include "chat.h"
#include "engine/chat_format.h"

namespace tandem::engine {

// Thread-safety: immutable once made; shared by the requests it was made for.
struct ChatOutputFormat {
  common_chat_parser_params params;
  // Tandem's generic tool format, for templates that cannot show tools: the whole answer is
  // one JSON object, {"tool_calls": [{name, arguments}]} or {"response": text}.
  bool generic = false;
};

}  // namespace tandem::engine
