#pragma once
// The Responses API with an upstream that speaks it (`api: responses`): what such an upstream
// receives for a request, and how its answer becomes Tandem's. The request goes as the client
// sent it, but for what only Tandem knows: Tandem's previous_response_id is its own store's
// (the conversation is expanded into `input`), and the upstream keeps nothing (`store: false`;
// Tandem keeps the response itself). The answer keeps the upstream's output items as they are —
// a built-in tool's calls included — under Tandem's response id.
//
// JSON only, no I/O. Thread-safety: the functions are reentrant.

#include <nlohmann/json.hpp>

#include "server/gateway.h"
#include "server/responses_api.h"

namespace tandem::server {

// The body a native upstream receives: the client's own with previous_response_id replaced by
// the stored conversation's items ahead of this turn's input, and store: false. The upstream
// sets `model` and `stream`.
nlohmann::json native_responses_body(const ResponsesRequest& request);

// A stored conversation (chat messages, and items kept as they came, which have no role) as
// Responses input items: messages, function_call items for an assistant's tool calls,
// function_call_output items for tool messages, the kept items unchanged.
nlohmann::json input_items_of(const nlohmann::json& conversation);

// An upstream's Response object as Tandem answers it: Tandem's id, the model as the client
// named it, the request's own store and previous_response_id, and `record` as `tandem` (none
// when null).
nlohmann::json relabelled_response(const ResponseHead& head, const ResponsesRequest& request,
                                   nlohmann::json response, const DecisionRecord* record);

}  // namespace tandem::server
