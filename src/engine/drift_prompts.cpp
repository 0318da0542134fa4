#include "engine/drift_prompts.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

namespace tandem::engine {
namespace {

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
}

Result<std::string> prompt_from_json_line(const std::string& line, const std::string& where) {
  const auto doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return make_error(ErrorCode::kInvalidArgument,
                      where + ": not valid JSON (a JSONL prompts file needs one object per line)");
  }
  if (!doc.is_object()) {
    return make_error(ErrorCode::kInvalidArgument,
                      where + ": expected a JSON object with a \"prompt\" field");
  }
  const auto field = doc.find("prompt");
  if (field == doc.end() || !field->is_string()) {
    return make_error(ErrorCode::kInvalidArgument, where + ": expected a string field \"prompt\"");
  }
  std::string text = field->get<std::string>();
  if (text.empty()) {
    return make_error(ErrorCode::kInvalidArgument, where + ": \"prompt\" is empty");
  }
  return text;
}

}  // namespace

Result<std::vector<DriftPrompt>> read_drift_prompts(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "prompts file '" + path + "' is a directory; name a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(ErrorCode::kNotFound,
                      "cannot open prompts file '" + path + "': " + errno_message(errno));
  }
  std::vector<DriftPrompt> prompts;
  std::optional<bool> jsonl;  // decided by the first non-blank line
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (is_blank(line)) {
      continue;
    }
    const std::string where = path + ":" + std::to_string(number);
    if (!jsonl) {
      jsonl = line.front() == '{';
    }
    if (!*jsonl) {
      prompts.push_back({line, where});
      continue;
    }
    auto text = prompt_from_json_line(line, where);
    if (!text) {
      return text.error();
    }
    prompts.push_back({std::move(text).value(), where});
  }
  if (in.bad()) {
    return make_error(ErrorCode::kInternal, "read error in prompts file '" + path + "'");
  }
  if (prompts.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "prompts file '" + path + "' holds no prompts (blank lines are skipped)");
  }
  return prompts;
}

}  // namespace tandem::engine
