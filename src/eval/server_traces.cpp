#include "eval/server_traces.h"

#include "eval/trace_data.h"

namespace tandem::eval {

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
    s.id = r.request_id.empty() ? "trace-" + std::to_string(r.id) : r.request_id;
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

}  // namespace tandem::eval
