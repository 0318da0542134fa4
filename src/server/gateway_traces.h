#pragma once
// The routing trace of one request (store/trace_log.h), assembled from the router's signals
// and the decision record. Internal to the server component: gateway.cpp fills a trace as the
// request goes, and Gateway::write_trace hands it to the background writer.

#include <optional>
#include <string>
#include <vector>

#include "routing/policy.h"
#include "server/gateway.h"
#include "store/trace_log.h"
#include "store/trace_writer.h"

namespace tandem::server {

// What the router read: client, kind, features, complexity, privacy and review findings (by
// detector name only), hints; and the reason codes of the decision.
void trace_signals(store::TraceRecord& trace, const routing::RouteSignals& signals,
                   std::vector<std::string> reason_codes);
std::vector<std::string> reason_codes(const routing::Decision& decision);

// The reason codes of a request that named a model instead of `tandem`: "model.edge" or
// "model.cloud", then, when the privacy rule kept a cloud model's request on the device (or
// refused it), that decision's codes.
std::vector<std::string> explicit_model_reasons(
    bool cloud_model, const std::optional<routing::Decision>& pinned = std::nullopt);

// What happened: tier, pattern, tokens, cost, latency, confidence, ticket, the edge answer's
// hash and the P3 verification's label. `failed`: the client got an error (tier "none").
void trace_outcome(store::TraceRecord& trace, const DecisionRecord& record, bool failed);

// Rows the cloud audit keeps at most when routing.database is empty: the database then lives
// in this process's memory, where 100,000 audited bodies would take hundreds of MiB
// (docs/OPERATIONS.md, "What memory holds"). A database file keeps what max_rows says. (Traces
// are not kept in memory at all: Gateway::start_traces.)
inline constexpr uint64_t kInMemoryMaxRows = 10000;

// The trace writer's retention: routing.traces.max_rows and operations.audit.max_rows, the
// audit's at most kInMemoryMaxRows when `in_memory`.
store::TraceWriter::Options trace_writer_options(const config::GatewayConfig& config,
                                                 bool in_memory);

}  // namespace tandem::server
