#include "eval/server_traces.h"

#include <algorithm>

#include "eval/trace_data.h"

namespace tandem::eval {
namespace {

// The row's id for hashing into splits and folds: the response id the client saw, else the
// trace's own.
std::string trace_id(const store::TraceRecord& r) {
  return r.request_id.empty() ? "trace-" + std::to_string(r.id) : r.request_id;
}

}  // namespace

ServerSamples samples_from_traces(const std::vector<store::TraceRecord>& records, uint64_t seed) {
  ServerSamples out;
  out.rows_read = records.size();
  for (const auto& r : records) {
    if (!r.edge_good) {
      ++out.unlabelled;
      continue;
    }
    if (!r.confidence || r.confidence->tokens <= 0) {
      ++out.without_signals;
      continue;
    }
    Sample s;
    s.id = trace_id(r);
    s.task = r.label_source;
    s.hash = eval::row_hash(s.id, seed);
    s.kind = routing::parse_query_kind(r.kind).value_or(routing::QueryKind::kOpen);
    s.complexity = r.complexity;
    s.score[kEdgeTier] = *r.edge_good ? 1.0 : 0.0;
    s.score[kCloudTier] = 1.0;
    s.cost[kEdgeTier] = r.cost_edge;
    s.cost[kCloudTier] = r.cost_all_cloud.value_or(r.cost_cloud);
    s.confidence[kEdgeTier] = ConfidenceSignals{
        r.confidence->mean_logprob, r.confidence->min_logprob, r.confidence->mean_entropy,
        r.confidence->mean_margin, static_cast<double>(r.confidence->tokens)};
    out.samples.push_back(std::move(s));
  }
  return out;
}

ServerExamples examples_from_traces(const std::vector<store::TraceRecord>& records, uint64_t seed) {
  ServerExamples out;
  out.rows_read = records.size();
  const size_t log_chars = routing::feature_index("log_chars");
  const size_t log_turns = routing::feature_index("log_turns");
  for (const auto& r : records) {
    if (!r.edge_good) {
      ++out.unlabelled;
      continue;
    }
    TrainingExample example;
    if (!routing::read_recorded_features(r.features, example.features)) {
      ++out.without_features;
      continue;
    }
    example.edge = *r.edge_good ? 1.0 : 0.0;
    example.cloud = 1.0;  // the reference the edge was judged against
    example.label = *r.edge_good ? 0 : 1;
    example.hash = row_hash(trace_id(r), seed);
    example.source = "traces";
    example.task = r.kind.empty() ? "open" : r.kind;
    // The baselines' orderings: log(1 + n) is monotone in n, so the logs serve.
    example.chars = example.features.values[log_chars];
    example.turns = example.features.values[log_turns];
    out.examples.push_back(std::move(example));
  }
  return out;
}

}  // namespace tandem::eval
