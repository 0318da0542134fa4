#pragma once
// OpenAI response objects: whole completions, stream chunks, the model list. All JSON the
// server writes is built here.

#include <nlohmann/json.hpp>
#include <string>

#include "server/gateway.h"

namespace tandem::server {

struct ResponseIds {
  std::string id;  // "chatcmpl-…" or "cmpl-…"
  int64_t created = 0;
  std::string model;  // as the client named it
};

ResponseIds new_response_ids(upstream::ApiKind kind, const std::string& model);

// The whole non-streaming response. `logprobs` is the concatenation of the pieces' logprobs.
nlohmann::json completion_response(upstream::ApiKind kind, const ResponseIds& ids,
                                   const std::string& text, const nlohmann::json& logprobs,
                                   const Outcome& outcome, const DecisionRecord& record);

// A content chunk; `first` adds the assistant role (chat).
nlohmann::json content_chunk(upstream::ApiKind kind, const ResponseIds& ids, const Piece& piece,
                             bool first);
// The chunk that carries finish_reason (and `tandem` when it is the last one).
nlohmann::json finish_chunk(upstream::ApiKind kind, const ResponseIds& ids,
                            const std::string& finish_reason);
// The usage chunk (stream_options.include_usage): no choices.
nlohmann::json usage_chunk(upstream::ApiKind kind, const ResponseIds& ids, const TierUsage& usage);

nlohmann::json models_response(const std::vector<ModelInfo>& models);

// Appends piece logprobs to an accumulated value in the API's shape.
void append_logprobs(upstream::ApiKind kind, nlohmann::json& all, const nlohmann::json& piece);

// JSON text safe for any bytes (invalid UTF-8 replaced).
std::string dump(const nlohmann::json& value);

}  // namespace tandem::server
