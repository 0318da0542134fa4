#include "eval/trace_data.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "common/hash.h"
#include "common/json_depth.h"

namespace tandem::eval {

// The per-request routing code this offline work drives.
using namespace routing;  // NOLINT(google-build-using-namespace)

namespace {

Error data_error(const std::string& where, const std::string& what) {
  return make_error(ErrorCode::kInvalidArgument, where + ": " + what);
}

// An optional number field: absent and null are "unknown"; anything else must be finite.
Status optional_number(const nlohmann::json& object, const char* key, const std::string& where,
                       const std::string& field, std::optional<double>& out) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return {};
  }
  if (!it->is_number() || !std::isfinite(it->get<double>())) {
    return data_error(where, field + "." + key + ": must be a number or null, got " + it->dump());
  }
  out = it->get<double>();
  return {};
}

Result<std::string> optional_string(const nlohmann::json& object, const char* key,
                                    const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return std::string();
  }
  if (!it->is_string()) {
    return data_error(where, std::string(key) + ": must be a string or null");
  }
  return it->get<std::string>();
}

Result<TraceRow> parse_row(const std::string& line, const std::string& where) {
  // Error messages dump values, recursively: refuse what would overflow the stack.
  if (json_nesting_depth(line) > kMaxJsonDepth) {
    return data_error(where, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or a number beyond double
    return data_error(where, std::string("invalid JSON: ") + e.what());
  }
  if (!object.is_object()) {
    return data_error(where, "expected a JSON object (routing trace v1)");
  }
  TraceRow row;
  row.location = where;
  const auto id = object.find("id");
  if (id == object.end() || !id->is_string()) {
    return data_error(where, "id: missing (a string)");
  }
  row.id = id->get<std::string>();
  const auto prompt = object.find("prompt");
  if (prompt == object.end() || !prompt->is_string()) {
    return data_error(where, "prompt: missing (a string)");
  }
  row.prompt = prompt->get<std::string>();
  for (auto [key, out] : {std::pair{"system", &row.system}, std::pair{"task", &row.task},
                          std::pair{"source", &row.source}}) {
    auto value = optional_string(object, key, where);
    if (!value) {
      return value.error();
    }
    *out = std::move(value).value();
  }
  const auto models = object.find("models");
  if (models == object.end() || !models->is_object()) {
    return data_error(where, "models: missing (an object: model name -> {score, ...})");
  }
  for (const auto& [name, result] : models->items()) {
    const std::string field = "models." + name;
    if (!result.is_object()) {
      return data_error(where, field + ": must be an object with a score");
    }
    const auto score = result.find("score");
    if (score == result.end()) {
      return data_error(where, field + ".score: missing");
    }
    if (score->is_null()) {
      continue;  // the source has no judgement for this model: as if it were absent
    }
    if (!score->is_number() || !(score->get<double>() >= 0.0 && score->get<double>() <= 1.0)) {
      return data_error(where, field + ".score: must be a number in [0, 1], got " + score->dump());
    }
    ModelAnswer answer;
    answer.score = score->get<double>();
    if (auto s = optional_number(result, "confidence", where, field, answer.confidence); !s) {
      return s.error();
    }
    if (auto s = optional_number(result, "cost_usd", where, field, answer.cost_usd); !s) {
      return s.error();
    }
    if (auto s = optional_number(result, "tokens_out", where, field, answer.tokens_out); !s) {
      return s.error();
    }
    if (const auto kind = result.find("confidence_kind");
        kind != result.end() && kind->is_string()) {
      answer.confidence_kind = kind->get<std::string>();
    }
    row.answers.emplace_back(name, std::move(answer));
  }
  return row;
}

}  // namespace

uint64_t row_hash(std::string_view id, uint64_t seed) {
  return mix64(fnv1a64(id) ^ mix64(seed + 0x9e3779b97f4a7c15ULL));
}

double unit_interval(uint64_t hash) {
  return static_cast<double>(hash >> 11) * 0x1.0p-53;
}

size_t fold_of(uint64_t hash, size_t folds) {
  return mix64(hash ^ 0x5bd1e995ULL) % folds;
}

const ModelAnswer* TraceRow::answer(const std::string& model) const {
  for (const auto& [name, value] : answers) {
    if (name == model) {
      return &value;
    }
  }
  return nullptr;
}

std::optional<double> TraceRow::score(const std::string& model) const {
  const ModelAnswer* a = answer(model);
  return a ? std::optional<double>(a->score) : std::nullopt;
}

Result<std::vector<TraceRow>> load_traces(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(ErrorCode::kNotFound, path + ": cannot open: " + errno_message(errno));
  }
  return parse_traces(in, path);
}

Result<std::vector<TraceRow>> parse_traces(std::istream& in, const std::string& source) {
  std::vector<TraceRow> rows;
  std::string line;
  size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    auto row = parse_row(line, source + ":" + std::to_string(line_number));
    if (!row) {
      return row.error();
    }
    rows.push_back(std::move(row).value());
  }
  if (in.bad()) {
    return make_error(ErrorCode::kInternal, source + ": read failed: " + errno_message(errno));
  }
  return rows;
}

Result<std::vector<TraceRow>> load_trace_paths(const std::vector<std::string>& paths,
                                               Progress& progress) {
  if (paths.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "no data files given");
  }
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
      if (entry.is_regular_file() && entry.path().extension() == ".jsonl") {
        found.push_back(entry.path().string());
      }
    }
    if (error) {
      return make_error(ErrorCode::kNotFound, path + ": cannot list: " + error.message());
    }
    if (found.empty()) {
      return make_error(ErrorCode::kNotFound, path + ": directory holds no .jsonl trace file");
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  std::vector<TraceRow> rows;
  progress.phase("reading traces", files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    auto loaded = load_traces(files[i]);
    if (!loaded) {
      return loaded.error();
    }
    for (auto& row : loaded.value()) {
      rows.push_back(std::move(row));
    }
    progress.update(i + 1);
  }
  return rows;
}

PromptView prompt_view(const TraceRow& row) {
  PromptView view;
  view.system = row.system;
  view.last_user = row.prompt;
  view.turns = 1;
  view.total_chars = row.system.size() + row.prompt.size();
  return view;
}

std::vector<std::string> models_in(const std::vector<TraceRow>& rows) {
  std::set<std::string> names;
  for (const auto& row : rows) {
    for (const auto& [name, answer] : row.answers) {
      names.insert(name);
    }
  }
  return {names.begin(), names.end()};
}

Status require_models(const std::vector<TraceRow>& rows,
                      const std::vector<std::pair<std::string, std::string>>& roles) {
  const std::vector<std::string> present = models_in(rows);
  for (const auto& [role, model] : roles) {
    if (model.empty()) {
      return make_error(ErrorCode::kInvalidArgument, "no " + role + " model given");
    }
    if (std::find(present.begin(), present.end(), model) != present.end()) {
      continue;
    }
    std::string names;
    for (const auto& name : present) {
      names += (names.empty() ? "" : ", ") + name;
    }
    return make_error(ErrorCode::kInvalidArgument, role + " model '" + model +
                                                       "' is not in the data; models present: " +
                                                       (names.empty() ? "none" : names));
  }
  return {};
}

}  // namespace tandem::eval
