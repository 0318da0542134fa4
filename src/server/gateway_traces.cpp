// Routing traces: one row per routed request, written by a background thread so that SQLite
// never runs on the request path (store/trace_writer.h).

#include "server/gateway_traces.h"

#include <algorithm>

#include "common/log.h"
#include "server/gateway_util.h"

namespace tandem::server {
namespace {

std::vector<std::string> detectors(const std::vector<routing::PrivacyFinding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    if (std::find(out.begin(), out.end(), f.detector) == out.end()) {
      out.push_back(f.detector);
    }
  }
  return out;
}

// The tier whose answer the client got. Token-level collaboration ("edge+cloud") is the edge's
// answer with cloud help; its cloud tokens are counted apart.
std::string final_tier(const DecisionRecord& record, bool failed) {
  if (failed || record.tier.empty()) {
    return "none";
  }
  if (record.tier == "edge+cloud") {
    return "edge";
  }
  return record.tier;
}

}  // namespace

std::vector<std::string> reason_codes(const routing::Decision& decision) {
  std::vector<std::string> codes;
  for (const auto& r : decision.reasons) {
    codes.emplace_back(routing::reason_code_name(r.code));
  }
  return codes;
}

std::vector<std::string> explicit_model_reasons(bool cloud_model,
                                                const std::optional<routing::Decision>& pinned) {
  std::vector<std::string> codes = {std::string(routing::reason_code_name(
      cloud_model ? routing::ReasonCode::kModelCloud : routing::ReasonCode::kModelEdge))};
  if (pinned) {
    for (const auto& r : pinned->reasons) {
      codes.emplace_back(routing::reason_code_name(r.code));
    }
  }
  return codes;
}

void trace_signals(store::TraceRecord& trace, const routing::RouteSignals& signals,
                   std::vector<std::string> codes) {
  const routing::RequestHints& h = signals.hints;
  trace.client = h.client;
  trace.kind = std::string(routing::query_kind_name(signals.kind));
  trace.reason_codes = std::move(codes);
  trace.privacy_detectors = detectors(signals.privacy);
  trace.review_rules = detectors(signals.review);
  trace.hints.privacy_header = h.privacy_header;
  trace.hints.key_local_only = h.key_local_only;
  trace.hints.review_header = h.review_header;
  trace.hints.latency_budget_ms = h.latency_budget_ms;
  trace.hints.pattern = h.pattern;
  trace.hints.cloud_only_fields = h.cloud_only_fields;
  trace.features.assign(signals.features.values.begin(), signals.features.values.end());
  trace.complexity = signals.complexity;
}

void trace_outcome(store::TraceRecord& trace, const DecisionRecord& record, bool failed) {
  trace.unix_ms = unix_ms();
  trace.pattern = record.pattern.empty() ? "none" : record.pattern;
  trace.tier = final_tier(record, failed);
  // The edge worked first and a higher tier's answer replaced its own (P1 escalation, P3
  // revision, or a human); a fallback after an edge failure is not an escalation.
  trace.escalated = !record.tiers.empty() && record.tiers.front() == "edge" &&
                    (trace.tier == "cloud" || trace.tier == "human");
  if (record.confidence) {
    const routing::ConfidenceSnapshot& s = record.confidence->snapshot;
    store::TraceConfidence c;
    c.tokens = static_cast<int64_t>(s.tokens);
    c.mean_logprob = s.mean_logprob;
    c.min_logprob = s.min_logprob;
    c.mean_entropy = s.mean_entropy;
    c.mean_margin = s.mean_margin;
    c.combined = s.combined;
    c.threshold = record.confidence->threshold;
    trace.confidence = c;
  }
  const DecisionRecord::Cost cost = record.cost();
  trace.cost_edge = cost.edge;
  trace.cost_cloud = record.cloud_cost_usd;
  if (cost.all_cloud) {
    trace.cost_all_cloud = *cost.all_cloud;
  }
  const TierUsage edge = record.edge_usage.value_or(TierUsage{});
  const TierUsage cloud = record.cloud_usage.value_or(TierUsage{});
  trace.prompt_tokens = std::max(edge.prompt_tokens, cloud.prompt_tokens);
  trace.edge_tokens = edge.completion_tokens;
  trace.cloud_tokens = cloud.completion_tokens;
  trace.latency_ms = record.latency_ms > 0 ? record.latency_ms : ms_since(record.started_at);
  trace.data_left_device = record.data_left_device;
  trace.edge_model = record.edge_model;
  trace.cloud_model = record.cloud_model;
  trace.edge_sha256 = record.edge_sha256;
  trace.cloud_upstream = record.cloud_upstream;
  trace.ttft_ms = record.ttft_ms;
  trace.ticket = record.review ? record.review->ticket : std::string();
  trace.edge_answer_hash = record.edge_answer_hash;
  // P3: the cloud's verdict on the edge's answer is its label.
  const std::string verdict = record.verification ? record.verification->status : std::string();
  if (!trace.edge_answer_hash.empty() &&
      (verdict == "agreed" || verdict == "disagreed" || verdict == "disagreed_unrevised")) {
    trace.edge_good = verdict == "agreed";
    trace.label_source = "verification";
  }
}

store::TraceWriter::Options trace_writer_options(const config::GatewayConfig& config,
                                                 bool in_memory) {
  store::TraceWriter::Options options;
  options.max_rows = config.routing.traces.max_rows;
  options.max_audit_rows = config.operations.audit.max_rows;
  if (in_memory) {
    options.max_audit_rows = std::min(options.max_audit_rows, kInMemoryMaxRows);
  }
  return options;
}

Status Gateway::start_traces(const std::string& database_path) {
  const bool audit = config_.operations.audit.enabled;
  const bool in_memory = database_path == ":memory:";
  // Traces are for the tools that read a database file (tandem replay, calibrate --traces,
  // router train --traces); nothing in this process reads them back. In a database that lives
  // in this process's memory nobody could: writing them cost every request an insert (an
  // eighth of the gateway's instructions) and the writer thread's bursts.
  keep_traces_ = config_.routing.traces.enabled && !in_memory;
  if (config_.routing.traces.enabled && in_memory) {
    log_event(LogLevel::kInfo, "traces", "not_kept",
              {{"message",
                "routing.database is empty: the gateway keeps no routing traces, since the "
                "tools that read them (tandem replay, calibrate, router train) open a "
                "database file; set routing.database to keep them"}});
  }
  if (!keep_traces_ && !audit) {
    return {};
  }
  // A connection of its own for a database file: the writer's transactions then never hold
  // the connection the request path's consistency lookups use (WAL lets those read meanwhile).
  // An in-memory database exists only on the one connection.
  std::shared_ptr<store::Database> db = database_;
  if (!in_memory) {
    auto own = store::Database::open(database_path);
    if (!own) {
      return make_error(own.error().code, "routing.database (traces): " + own.error().message);
    }
    db = std::move(own).value();
  }
  const store::TraceWriter::Options options = trace_writer_options(config_, in_memory);
  if (audit && options.max_audit_rows < config_.operations.audit.max_rows) {
    log_event(LogLevel::kInfo, "audit", "in_memory_retention",
              {{"max_audit_rows", std::to_string(options.max_audit_rows)},
               {"message",
                "routing.database is empty, so the audit lives in memory: it keeps "
                "its newest " +
                    std::to_string(kInMemoryMaxRows) +
                    " rows at most; set routing.database to keep more"}});
  }
  if (audit) {
    // In memory the audit is a bounded list of its newest rows, appended on the request path:
    // nothing is gained by a writer's insert into a database that dies with the process.
    audit_log_ = in_memory ? store::AuditLog::in_memory(options.max_audit_rows)
                           : std::make_shared<store::AuditLog>(db);
  }
  traces_ = std::make_shared<store::TraceWriter>(std::make_shared<store::TraceLog>(db), options,
                                                 audit_log_);
  return {};
}

void Gateway::write_trace(store::TraceRecord trace, const DecisionRecord& record, bool failed) {
  trace_outcome(trace, record, failed);
  const int64_t now = trace.unix_ms;
  const bool routed = trace.model == kRoutedModel;
  stats_->observe(trace, routed, now);
  if (auto* gaming = monitors_->gaming(); gaming != nullptr && routed && !failed) {
    telemetry::RoutingObservation seen;
    seen.client = gaming_identity(trace.client, !config_.server.api_keys.empty());
    seen.escalated = trace.tier == "cloud";
    seen.kind = trace.kind;
    seen.complexity = trace.complexity;
    seen.now_ms = now;
    gaming->record(seen);
  }
  if (!traces_ || !keep_traces_) {
    return;
  }
  // Never waits: a full queue drops the trace, and the writer reports the count.
  (void)traces_->submit(std::move(trace));
}

void Gateway::label_review(const std::string& ticket, const std::string& answer) {
  if (traces_ && keep_traces_) {
    (void)traces_->submit_review_label(ticket, answer);
  }
}

void Gateway::flush_traces() {
  if (traces_) {
    traces_->flush();
  }
}

}  // namespace tandem::server
