#pragma once
// The gateway's own traces (store/trace_log.h) as calibration samples: rows whose edge answer
// was judged (P3 cloud verification, a reviewer's answer, shadow mode) carry all four token
// signals and a label, so `tandem calibrate --traces` can fit every confidence weight on the
// deployment's real traffic. The cloud's answer is the reference: its score is 1.

#include <vector>

#include "eval/router_fit.h"
#include "eval/samples.h"
#include "store/trace_log.h"

namespace tandem::eval {

struct ServerSamples {
  std::vector<Sample> samples;
  size_t rows_read = 0;
  size_t unlabelled = 0;       // no edge_good label
  size_t without_signals = 0;  // labelled, but no confidence recorded
};

ServerSamples samples_from_traces(const std::vector<store::TraceRecord>& records, uint64_t seed);

struct ServerExamples {
  std::vector<TrainingExample> examples;
  size_t rows_read = 0;
  size_t unlabelled = 0;        // no edge_good label
  size_t without_features = 0;  // recorded without the classifier's features, or another set
};

// Labelled traces as classifier training rows (`tandem router train --traces`): the recorded
// prompt features, "the cloud is needed" when the edge's answer was judged bad, the query kind
// as the task (what the left-out checks leave out) and "traces" as the source.
ServerExamples examples_from_traces(const std::vector<store::TraceRecord>& records, uint64_t seed);

}  // namespace tandem::eval
