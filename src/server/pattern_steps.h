#pragma once
// The steps the routing patterns (pattern_*.cpp) share: a cloud answer judged by its own
// confidence, pieces sent to the client, a revision, the end of a response. Internal to the
// server component.
//
// Thread-safety: each call works on one request's Run, on that request's strand.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>

#include "config/config.h"
#include "engine/generation.h"
#include "routing/confidence.h"
#include "server/gateway.h"
#include "upstream/upstream.h"

namespace tandem::server::pattern_steps {

using CloudResult = std::variant<Gateway::CloudAnswer, ApiError>;

// The cloud's confidence in its own answer, from the token logprobs it returned: the same
// learned combination as the edge's, with the signals the API exposes (logprobs only).
std::optional<double> cloud_confidence(const nlohmann::json& logprobs, upstream::ApiKind kind,
                                       const config::ConfidenceWeights& weights);

// The request body for a whole cloud answer, with logprobs asked for so that the cloud's
// confidence can be judged.
nlohmann::json with_logprobs(nlohmann::json body, upstream::ApiKind kind);

// A whole cloud answer as one piece for the client: its text, and its reasoning and tool calls
// (which the judges, reading the text, leave aside but the client must receive).
Piece answer_piece(const Gateway::CloudAnswer& cloud, bool with_logprobs);

// Starts the answer as `tier` (when not started) and sends the piece; false once the client
// is gone.
net::awaitable<bool> emit(Gateway& gateway, Gateway::Run& run, const std::string& tier,
                          Piece piece);

// Ends the response with its latency in the record.
net::awaitable<void> finish(Gateway::Run& run, const std::string& finish_reason,
                            const TierUsage& usage);

// Withdraws what the client has seen (when it has seen anything) in favour of `to_tier`.
net::awaitable<bool> revise(Gateway::Run& run, const std::string& from_tier,
                            const std::string& to_tier, const std::string& reason);

// OpenAI's finish_reason for an edge generation's end.
std::string finish_name(engine::FinishReason reason);

}  // namespace tandem::server::pattern_steps
