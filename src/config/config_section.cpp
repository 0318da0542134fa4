#include "config/config_section.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace tandem::config::detail {
namespace {

std::string read_secret_file(Section& at, const YAML::Node& node, const std::string& key,
                             const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    at.fail(node, key, "cannot read '" + path + "': " + errno_message(errno));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  if (text.empty()) {
    at.fail(node, key, "'" + path + "' is empty");
  }
  return text;
}

}  // namespace

std::string read_secret(Section& section, const std::string& prefix, bool required) {
  std::string env_name;
  std::string file_path;
  const YAML::Node env_node = section.child(prefix + "_env");
  const YAML::Node file_node = section.child(prefix + "_file");
  const YAML::Node inline_node = section.child(prefix);
  if (inline_node && !inline_node.IsNull()) {
    section.fail(inline_node, section.key_path(prefix),
                 "secrets are not written in the config; use " + prefix +
                     "_env (an environment "
                     "variable) or " +
                     prefix + "_file (a file readable only by this user)");
  }
  if (env_node && env_node.IsScalar()) {
    env_name = env_node.Scalar();
  }
  if (file_node && file_node.IsScalar()) {
    file_path = file_node.Scalar();
  }
  if (!env_name.empty() && !file_path.empty()) {
    section.fail(env_node, section.key_path(prefix + "_env"),
                 "set " + prefix + "_env or " + prefix + "_file, not both");
  }
  if (!env_name.empty()) {
    const char* value = std::getenv(env_name.c_str());  // NOLINT(concurrency-mt-unsafe): startup
    if (value == nullptr || *value == '\0') {
      section.fail(env_node, section.key_path(prefix + "_env"),
                   "environment variable " + env_name + " is not set");
    }
    return value;
  }
  if (!file_path.empty()) {
    return read_secret_file(section, file_node, section.key_path(prefix + "_file"), file_path);
  }
  if (required) {
    section.fail(section.node(), section.key_path(prefix + "_env"),
                 "needs " + prefix + "_env or " + prefix + "_file");
  }
  return {};
}

void one_of(Section& s, const std::string& key, const std::string& value,
            std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* option : allowed) {
    if (value == option) {
      return;
    }
    list += (list.empty() ? "" : ", ") + std::string(option);
  }
  s.fail(s.node()[key], s.key_path(key), "must be one of " + list + ", not '" + value + "'");
}

}  // namespace tandem::config::detail
