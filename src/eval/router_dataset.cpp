// Loading the router trainer's rows: see router_dataset.h.

#include "eval/router_dataset.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "eval/trace_data.h"

namespace tandem::eval {

// The per-request routing code this offline work drives.
using namespace routing;  // NOLINT(google-build-using-namespace)

namespace {

using Example = TrainingExample;

Status check_pairs(const std::vector<ModelPair>& pairs, const std::vector<TraceRow>& rows) {
  if (pairs.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "both an edge and a cloud model are needed");
  }
  for (const auto& pair : pairs) {
    if (pair.edge.empty() || pair.cloud.empty()) {
      return make_error(ErrorCode::kInvalidArgument, "both an edge and a cloud model are needed");
    }
    if (pair.edge == pair.cloud) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the edge and the cloud model are the same ('" + pair.edge + "')");
    }
    if (auto present = require_models(rows, {{"edge", pair.edge}, {"cloud", pair.cloud}});
        !present) {
      return present.error();
    }
  }
  return {};
}

// The source a row came from: its "source" field, else its file's name.
std::string source_of(const TraceRow& row) {
  if (!row.source.empty()) {
    return row.source;
  }
  const size_t colon = row.location.rfind(':');
  const std::string file = row.location.substr(0, colon);
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? file : file.substr(slash + 1);
}

}  // namespace

void balance_slices(std::vector<Example>& examples, size_t max_rows, size_t weight_rows) {
  std::map<std::string, std::vector<Example*>> slices;
  for (auto& example : examples) {
    slices[example.source + "/" + example.task].push_back(&example);
  }
  std::set<const Example*> dropped;
  for (auto& [name, rows] : slices) {
    if (max_rows > 0 && rows.size() > max_rows) {
      // Ordered by a remix of the hash: the split already used its low values.
      auto order = [](const Example* row) { return row->hash * 0x9e3779b97f4a7c15ULL; };
      std::sort(rows.begin(), rows.end(),
                [&](const Example* a, const Example* b) { return order(a) < order(b); });
      dropped.insert(rows.begin() + static_cast<std::ptrdiff_t>(max_rows), rows.end());
      rows.resize(max_rows);
    }
    const double weight = weight_rows > 0 && rows.size() > weight_rows
                              ? static_cast<double>(weight_rows) / static_cast<double>(rows.size())
                              : 1.0;
    for (Example* row : rows) {
      row->weight = weight;
    }
  }
  std::erase_if(examples, [&](const Example& example) { return dropped.contains(&example); });
}

Result<Dataset> load_dataset(const std::vector<std::string>& files,
                             const std::vector<ModelPair>& pairs, double holdout, uint64_t seed,
                             Progress& progress) {
  if (files.empty()) {
    return Dataset{};
  }
  auto loaded = load_trace_paths(files, progress);
  if (!loaded) {
    return loaded.error();
  }
  const std::vector<TraceRow>& rows = loaded.value();
  if (auto checked = check_pairs(pairs, rows); !checked) {
    return checked.error();
  }
  Dataset data;
  data.rows_read = rows.size();
  progress.phase("extracting prompt features", rows.size());
  size_t done = 0;
  for (const auto& row : rows) {
    progress.update(done++);  // here, since skipped rows leave the loop early
    const ModelPair* pair = nullptr;
    std::optional<double> edge_score;
    std::optional<double> cloud_score;
    for (const auto& candidate : pairs) {
      edge_score = row.score(candidate.edge);
      cloud_score = row.score(candidate.cloud);
      if (edge_score && cloud_score) {
        pair = &candidate;
        break;
      }
    }
    if (pair == nullptr) {
      ++data.rows_skipped;
      continue;
    }
    const PromptView view = prompt_view(row);
    Example example;
    example.features = extract_features(view);
    example.edge = *edge_score;
    example.cloud = *cloud_score;
    example.label = *cloud_score > *edge_score ? 1 : 0;
    example.hash = row_hash(row.id, seed);
    example.holdout = unit_interval(example.hash) < holdout;
    example.source = source_of(row);
    example.task = row.task.empty() ? "(no task)" : row.task;
    example.chars = static_cast<double>(view.last_user.size());
    example.turns = static_cast<double>(view.turns);
    data.examples.push_back(std::move(example));
  }
  progress.update(rows.size());
  return data;
}

size_t distinct_tasks(const std::vector<Example>& examples) {
  std::set<std::string> tasks;
  for (const auto& example : examples) {
    tasks.insert(example.task);
  }
  return tasks.size();
}

ExampleRefs all_rows(const std::vector<Example>& examples) {
  ExampleRefs rows;
  rows.reserve(examples.size());
  for (const auto& example : examples) {
    rows.push_back(&example);
  }
  return rows;
}

}  // namespace tandem::eval
