#pragma once
// The routing patterns, each composed from the gateway's tier building blocks. Each one
// finishes the response and returns nullopt, or returns the error that stopped it (then the
// gateway may fall back to another tier if nothing reached the client yet).

#include <optional>
#include <string>

#include "server/gateway.h"

namespace tandem::server {

// P1: the edge answers; below the confidence threshold the cloud answers instead. The edge
// stops as soon as escalation is certain.
net::awaitable<std::optional<ApiError>> run_cascade(Gateway& gateway, Gateway::Run& run);

// P3: the edge answer streams at once; the cloud verifies it and a marked revision follows
// when the judge says the edge was wrong.
net::awaitable<std::optional<ApiError>> run_speculative(Gateway& gateway, Gateway::Run& run);

// Token-level collaboration: the edge decodes; where its entropy is high, the cloud continues
// the text for a few tokens.
net::awaitable<std::optional<ApiError>> run_collaborate(Gateway& gateway, Gateway::Run& run);

// The human tier: the query enters the review queue; the client gets a ticket.
net::awaitable<std::optional<ApiError>> run_review(Gateway& gateway, Gateway::Run& run,
                                                   const std::string& reason,
                                                   const std::string& draft,
                                                   const std::string& draft_tier);

}  // namespace tandem::server
