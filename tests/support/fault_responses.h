#pragma once
// fault_upstream's Responses API (POST /v1/responses): realistic Response objects and event
// streams as OpenAI sends them — a message, a web_search_call before it when the request has a
// web_search tool, a function_call for fault-tool-calls — and the malformed ones the gateway
// must survive. JSON only: fault_upstream.cpp writes what this builds.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace fault_responses {

using Json = nlohmann::ordered_json;

// How an answer is shaped or broken (tests/support/README.md, "Responses").
enum class Shape {
  kNormal,
  kToolCall,         // a function_call item instead of a message
  kMalformedUsage,   // usage counts of the wrong types
  kNoOutput,         // no `output` at all
  kMalformedOutput,  // `output` a string (whole) or [42] (the stream's final response)
  kFailed,           // status failed with an error (whole); a response.failed event (stream)
  kUnfinished,       // stream: ends after the text without response.completed
  kMalformedEvent,   // stream: `data: {not json` after the first delta; whole: `{not json`
};

struct Request {
  std::string model;
  bool stream = false;
  std::int64_t pieces = 8;  // max_output_tokens, or 8
  bool web_search = false;  // a tool of type web_search or web_search_preview
  std::string query;        // the last input text: what the web search looks for
  std::int64_t input_tokens = 0;
  Json echo = Json::object();  // instructions, tools, store, ... as the request had them
};

// A request the client must fix: the message and the field.
struct BadField {
  std::string message;
  std::string param;
};

// Reads a request body; a BadField for a missing input or a field of the wrong type.
std::optional<BadField> parse_request(const Json& body, Request& out);

// The whole Response as JSON text (`{not json` for kMalformedEvent).
std::string whole(const Request& request, const std::string& id, Shape shape);

// The stream's SSE events, each framed (`event: TYPE\ndata: {...}\n\n`), in order.
std::vector<std::string> stream(const Request& request, const std::string& id, Shape shape);

}  // namespace fault_responses
