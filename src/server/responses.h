#pragma once
// OpenAI response objects: whole completions, stream chunks, the model list. All JSON the
// server writes is built here.
//
// Thread-safety: pure functions over plain values (the ids draw from a per-thread generator).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/gateway.h"

namespace tandem::server {

struct ResponseIds {
  std::string id;  // "chatcmpl-…" or "cmpl-…"
  int64_t created = 0;
  std::string model;  // as the client named it
};

ResponseIds new_response_ids(upstream::ApiKind kind, const std::string& model);
// A fresh request id: `prefix` and 24 random letters and digits ("embd-…").
std::string new_request_id(const std::string& prefix);

// The whole non-streaming response. Chat: message.reasoning_content when there is reasoning,
// message.tool_calls when there are calls, and then a null content when there is no text (as
// OpenAI answers).
nlohmann::json completion_response(upstream::ApiKind kind, const ResponseIds& ids,
                                   const WholeAnswer& answer, const Outcome& outcome,
                                   const DecisionRecord& record);
// The same response as JSON text, written without building a tree (what a non-streaming
// chat or completions client receives).
std::string completion_response_text(upstream::ApiKind kind, const ResponseIds& ids,
                                     const WholeAnswer& answer, const Outcome& outcome,
                                     const DecisionRecord& record);
// A text answer.
nlohmann::json completion_response(upstream::ApiKind kind, const ResponseIds& ids,
                                   const std::string& text, const nlohmann::json& logprobs,
                                   const Outcome& outcome, const DecisionRecord& record);

// A content chunk; `first` adds the assistant role (chat). Chat: delta.content when the piece
// has text or nothing else (a plain text piece renders as it always has), delta.reasoning_content
// and delta.tool_calls when it has them (a call's id, type and name only where the delta has
// them, as OpenAI streams a call: on its first delta). Completions render the text only.
nlohmann::json content_chunk(upstream::ApiKind kind, const ResponseIds& ids, const Piece& piece,
                             bool first);
// The chunk that carries finish_reason (and `tandem` when it is the last one).
nlohmann::json finish_chunk(upstream::ApiKind kind, const ResponseIds& ids,
                            const std::string& finish_reason);
// The usage chunk (stream_options.include_usage): no choices.
nlohmann::json usage_chunk(upstream::ApiKind kind, const ResponseIds& ids, const TierUsage& usage);

// The same chunks as JSON text, written without building a tree (a stream writes one per
// token). `record`, when given, adds the decision record as `tandem` (the stream's last chunk).
std::string content_chunk_text(upstream::ApiKind kind, const ResponseIds& ids, const Piece& piece,
                               bool first);
std::string finish_chunk_text(upstream::ApiKind kind, const ResponseIds& ids,
                              const std::string& finish_reason,
                              const DecisionRecord* record = nullptr);
std::string usage_chunk_text(upstream::ApiKind kind, const ResponseIds& ids, const TierUsage& usage,
                             const DecisionRecord* record = nullptr);
// A chunk without choices (OpenAI clients append nothing) whose `tandem.revision` announces a
// revision: the text sent so far is withdrawn.
std::string revision_chunk_text(upstream::ApiKind kind, const ResponseIds& ids,
                                const Revision& revision);

nlohmann::json models_response(const std::vector<ModelInfo>& models);

// Appends piece logprobs to an accumulated value in the API's shape.
void append_logprobs(upstream::ApiKind kind, nlohmann::json& all, const nlohmann::json& piece);

// Adds tool call deltas to whole calls, kept in index order: a new index starts a call; for a
// known one the id and name are kept from the first delta that has them and the arguments are
// appended.
void append_tool_calls(std::vector<ToolCallDelta>& calls, const std::vector<ToolCallDelta>& deltas);

// A cloud event's tool call deltas as the gateway's (the upstream layer has its own type).
std::vector<ToolCallDelta> tool_call_deltas(
    const std::vector<upstream::CloudToolCallDelta>& deltas);

// JSON text safe for any bytes (invalid UTF-8 replaced).
std::string dump(const nlohmann::json& value);

}  // namespace tandem::server
