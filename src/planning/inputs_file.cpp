#include "planning/inputs_file.h"

#include <filesystem>
#include <fstream>

#include <yaml-cpp/yaml.h>

namespace tandem::planning {
namespace {

std::string where(const std::string& path, const YAML::Node& node) {
  if (node.Mark().line >= 0) {
    return path + ":" + std::to_string(node.Mark().line + 1);
  }
  return path;
}

Error invalid(std::string message) {
  return make_error(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace

Result<InputsFile> read_inputs_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return make_error(ErrorCode::kNotFound, "cannot open inputs file '" + path + "'");
  }
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::Exception& e) {
    return invalid(path + ":" + std::to_string(e.mark.line + 1) + ": not YAML or JSON: " + e.msg);
  }
  InputsFile file;
  if (!root || root.IsNull()) {
    return file;  // an empty scenario: every default
  }
  if (!root.IsMap()) {
    return invalid(where(path, root) + ": the inputs file must be a mapping of keys to values");
  }
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    const std::string label = where(path, entry.first) + ": " + key;
    const YAML::Node& value = entry.second;
    if (!value.IsScalar() && !value.IsNull()) {
      return invalid(label + ": must be a single value (a number or a name)");
    }
    // JSON's null clears an optional input, as "none" does.
    const std::string text = value.IsNull() ? "none" : value.Scalar();
    if (key == "model_name") {
      file.model_name = text == "none" ? "" : text;
      continue;
    }
    if (key == "model_file") {
      if (text == "none") {
        continue;
      }
      const std::filesystem::path model = text;
      file.model_file = model.is_absolute()
                            ? model.string()
                            : (std::filesystem::path(path).parent_path() / model).string();
      continue;
    }
    if (find_input_field(key) == nullptr) {
      return invalid(label + ": unknown key (tandem plan --help lists the inputs)");
    }
    file.settings.push_back({key, text, label});
  }
  return file;
}

}  // namespace tandem::planning
