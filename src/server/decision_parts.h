#pragma once
// The parts of the decision record (DecisionRecord, gateway.h) that only some requests have,
// as native values. Each is set by the part of Tandem it describes (the router, a routing
// pattern, the review queue, the consistency memory, shadow mode) and read by the traces and
// the logs; only DecisionRecord::write_json turns them into JSON
// (server/decision_parts_json.h). A part the record leaves unset is absent from its JSON.
//
// Plain values: safe to copy; one request's record is used on that request's strand only.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "routing/confidence.h"
#include "routing/route_explanation.h"

namespace tandem::server {

// `routing`: the router's decision, the signals behind it and the thresholds in force.
using RoutingPart = routing::RouteExplanation;

// `confidence`: the edge's running confidence when the cascade decided.
struct ConfidencePart {
  routing::ConfidenceSnapshot snapshot;  // the edge's token signals and their combination
  double threshold = 0.0;                // the confidence the edge needed to answer
};

// A confidence that was judged: null (nullopt) when there was nothing to judge it by (the cloud
// returned no logprobs).
struct JudgedConfidence {
  std::optional<double> value;  // P(good) under the learned weights; nullopt: unknown
};

// `escalation` (P1): why and when the edge handed over to the cloud.
struct EscalationPart {
  std::string reason;             // why, for people
  bool early_stop = false;        // no continuation could have reached the threshold
  bool prefix_decision = false;   // decided on the held prefix, before the edge finished
  size_t at_token = 0;            // the edge's tokens when it handed over
  int edge_tokens_discarded = 0;  // the edge's completion tokens the client never saw
  // The cloud's confidence in its own answer, judged when unsure answers go to review
  // (routing.review); absent when review is off or the cloud did not answer.
  std::optional<JudgedConfidence> cloud_confidence;
};

// `verification` (P3): the cloud's verdict on the edge's answer.
struct VerificationPart {
  std::string judge;  // how the cloud judged: "match", "confidence" or "prompt"
  // "agreed", "disagreed", "disagreed_unrevised" (the cloud's own answer failed) or
  // "unverified" (the cloud gave no verdict).
  std::string status;
  std::optional<std::string> error;  // why unverified or unrevised
  // The "confidence" judge's reading of the cloud's answer, once the cloud answered.
  std::optional<JudgedConfidence> cloud_confidence;
  std::optional<std::string> cloud_reply;  // the "prompt" judge's reply, as the cloud wrote it
};

// `revision`, and a stream's tandem.revision event: everything sent so far is replaced by what
// follows.
struct Revision {
  std::string id;         // "rev-<n>", unique within the response
  std::string from_tier;  // whose text is withdrawn
  std::string to_tier;    // whose text replaces it
  std::string reason;     // why, for people
  nlohmann::json to_json() const;
};

// One stretch of a collaborative answer written by one tier.
struct CollaborationSegment {
  // The edge's prompt for a segment it wrote: every token of it, and those found in the
  // prompt cache.
  struct EdgePrompt {
    int prompt_tokens = 0;
    int cached_prompt_tokens = 0;
  };
  std::string tier;                  // "edge" or "cloud"
  int tokens = 0;                    // the tokens it wrote
  std::optional<EdgePrompt> prompt;  // edge segments only
};

// `collaboration`: token-level collaboration, the edge handing uncertain positions over.
struct CollaborationPart {
  uint32_t handoffs = 0;                       // times the cloud took over
  int edge_tokens = 0;                         // tokens the edge wrote
  int cloud_tokens = 0;                        // tokens the cloud wrote
  double entropy_threshold = 0.0;              // the entropy that handed a position over
  std::vector<CollaborationSegment> segments;  // in the answer's order
  // Why the cloud could not take over (the edge then finished alone); nullopt: it could.
  std::optional<std::string> cloud_failure;
};

// `review`: the human tier's ticket.
struct ReviewPart {
  std::string ticket;                   // the review queue's ticket id
  std::string status;                   // "pending_review" (the client waits) or "answered"
  std::optional<std::string> reason;    // pending: why a person must answer
  std::optional<std::string> poll;      // pending: where the client asks for the answer
  std::optional<std::string> reviewer;  // answered: who answered ("" when unnamed)
};

// `consistency`: the consistency memory's part in the decision.
struct ConsistencyPart {
  // When the memory decided: whether it changed the decision, and what the router alone would
  // have chosen.
  struct Override {
    bool overrode = false;        // the remembered tier differs from the router's own choice
    std::string would_have_been;  // the router's own pattern
  };
  std::string client;                      // whose memory was consulted
  bool used = false;                       // a remembered tier decided
  std::optional<Override> without_memory;  // set when used and the router's own choice is known
};

// `shadow`: shadow mode's sample of this request.
struct ShadowPart {
  // Both tiers answered and were compared.
  struct Comparison {
    bool agreed = false;  // the normalised answers are equal
    double f1 = 0.0;      // token-overlap F1 of the two answers, 0..1
  };
  bool sampled = false;         // the edge answers this request too
  std::string would_have_been;  // the pattern the request would have had without shadow mode
  // Sampled requests only: "compared", "pending" (the edge is still answering), "cloud_failed",
  // "cancelled", or why the edge did not answer ("edge_busy", "edge_failed").
  std::optional<std::string> status;
  std::optional<Comparison> comparison;  // status "compared"
};

}  // namespace tandem::server
