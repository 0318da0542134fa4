#pragma once
// Labelled routing traces ("routing trace v1", ../shared/data/routing/README.md): one JSON
// object per line with a prompt and, per model, the quality of its answer, its own confidence
// and what it cost. The router trainer, `tandem eval` and `tandem calibrate` read them.
//
// Thread-safety: free functions without shared state.

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/progress.h"
#include "common/result.h"
#include "routing/prompt_features.h"

namespace tandem::eval {

using routing::PromptView;

// One model's answer to a trace query.
struct ModelAnswer {
  double score = 0;                  // quality in [0, 1]
  std::optional<double> confidence;  // the model's own signal, higher = more confident
  std::string confidence_kind;       // "answer_logprob", "self_verify_logprob_yes", ...
  std::optional<double> cost_usd;    // at the source's prices
  std::optional<double> tokens_out;  // the answer's length
};

// One query of a trace file.
struct TraceRow {
  std::string id;
  std::string task;    // may be empty
  std::string source;  // where the data comes from ("lm-sys/RouteLLM"); may be empty
  std::string system;
  std::string prompt;
  // Models with a score, in file order (a null score counts as absent).
  std::vector<std::pair<std::string, ModelAnswer>> answers;
  std::string location;  // "file:line", for messages

  const ModelAnswer* answer(const std::string& model) const;
  // The score of `model`, or nullopt when the row has none.
  std::optional<double> score(const std::string& model) const;
};

// Reads a JSONL trace file (blank lines are skipped). Errors name the file, the line and the
// field: "traces.jsonl:12: models.llama3.1-8b.score: must be a number".
Result<std::vector<TraceRow>> load_traces(const std::string& path);

// What load_traces does once the file is open: reads JSONL rows from `in`, `source` standing for
// the file in messages and locations ("source:line").
Result<std::vector<TraceRow>> parse_traces(std::istream& in, const std::string& source);

// Reads several files; a directory stands for its *.jsonl files, in name order. Fails when
// nothing is given or a directory holds no trace file. Reports one step per file read.
Result<std::vector<TraceRow>> load_trace_paths(const std::vector<std::string>& paths,
                                               Progress& progress = no_progress());

// The request a trace row stands for: one user turn after the system prompt.
PromptView prompt_view(const TraceRow& row);

// A stable pseudo-random hash of a row id, salted by `seed`: train/holdout splits and
// cross-validation folds by hash are deterministic and do not depend on file order.
uint64_t row_hash(std::string_view id, uint64_t seed);
// The hash as a number in [0, 1), and as one of `folds` folds.
double unit_interval(uint64_t hash);
size_t fold_of(uint64_t hash, size_t folds);

// Model names present in the rows, sorted, for messages ("models present: ...").
std::vector<std::string> models_in(const std::vector<TraceRow>& rows);

// Fails, naming the role and listing the models present, when a model is not in the rows:
// require_models(rows, {{"edge", "llama3.1-8b"}, {"cloud", "llama3.1-405b"}}).
Status require_models(const std::vector<TraceRow>& rows,
                      const std::vector<std::pair<std::string, std::string>>& roles);

}  // namespace tandem::eval
