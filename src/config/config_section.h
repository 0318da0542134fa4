#pragma once
// What the configuration parser's files share: the error that carries a finished message, the
// Section reader that refuses unknown keys, and the helpers several sections use (secrets read
// from the environment or a file, a value from a fixed list). Each file parses some top-level
// sections (config_server.cpp, config_tiers.cpp, config_routing.cpp, config_operations.cpp);
// config.cpp runs them in order and checks what spans sections.
//
// Internal to the config library: see config.h for the contract.
//
// Thread-safety: no shared state; a Section belongs to the one parse that made it.

#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/config.h"

namespace tandem::config::detail {

// Thrown inside the parser only, caught in parse_config: it carries a finished message.
struct ConfigError {
  std::string message;
};

// Reads one YAML mapping, remembering which keys were used so that unknown keys (typos)
// fail loudly instead of being ignored.
class Section {
 public:
  Section(const YAML::Node& node, std::string path, const std::string& source)
      : node_(node), path_(std::move(path)), source_(source) {
    if (node_ && !node_.IsNull() && !node_.IsMap()) {
      fail(node_, path_, "must be a mapping of keys to values");
    }
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& message) const {
    std::string where = source_;
    if (at && at.Mark().line >= 0) {
      where += ":" + std::to_string(at.Mark().line + 1);
    }
    throw ConfigError{where + ": " + key + ": " + message};
  }

  std::string key_path(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  YAML::Node child(const std::string& key) {
    used_.insert(key);
    if (!node_ || !node_.IsMap()) {
      return YAML::Node();
    }
    return node_[key];
  }

  Section section(const std::string& key) { return Section(child(key), key_path(key), source_); }

  template <typename T>
  void get(const std::string& key, T& out, T min = std::numeric_limits<T>::lowest(),
           T max = std::numeric_limits<T>::max()) {
    const YAML::Node value = child(key);
    if (!value || value.IsNull()) {
      return;  // keep the default
    }
    // Integers are read wide first, so that 70000 for a port says "out of range", not
    // "not an integer".
    using Wide =
        std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, long long, T>;
    Wide parsed{};
    if (!value.IsScalar() || !YAML::convert<Wide>::decode(value, parsed)) {
      fail(value, key_path(key), std::string("must be ") + type_name<T>());
    }
    if (parsed < static_cast<Wide>(min) || parsed > static_cast<Wide>(max)) {
      std::ostringstream range;
      range << "must be between " << +min << " and " << +max << ", not " << value.Scalar();
      fail(value, key_path(key), range.str());
    }
    out = static_cast<T>(parsed);
  }

  void get(const std::string& key, std::string& out) {
    const YAML::Node value = child(key);
    if (!value || value.IsNull()) {
      return;
    }
    if (!value.IsScalar()) {
      fail(value, key_path(key), "must be a string");
    }
    out = value.Scalar();
  }

  void get(const std::string& key, std::vector<std::string>& out) {
    const YAML::Node value = child(key);
    if (!value || value.IsNull()) {
      return;
    }
    if (!value.IsSequence()) {
      fail(value, key_path(key), "must be a list of strings");
    }
    out.clear();
    for (const auto& item : value) {
      if (!item.IsScalar()) {
        fail(item, key_path(key), "must be a list of strings");
      }
      out.push_back(item.Scalar());
    }
  }

  // Fails on keys nobody asked for: they are typos or options of another version.
  void finish() const {
    if (!node_ || !node_.IsMap()) {
      return;
    }
    for (const auto& entry : node_) {
      const std::string key = entry.first.Scalar();
      if (!used_.count(key)) {
        fail(entry.first, key_path(key), "unknown key");
      }
    }
  }

  const YAML::Node& node() const { return node_; }
  const std::string& source() const { return source_; }

 private:
  template <typename T>
  static const char* type_name() {
    if constexpr (std::is_same_v<T, bool>) {
      return "true or false";
    } else if constexpr (std::is_integral_v<T>) {
      return "an integer";
    } else {
      return "a number";
    }
  }

  YAML::Node node_;
  std::string path_;
  const std::string& source_;
  std::set<std::string> used_;
};

// A secret from `<prefix>_env` (an environment variable) or `<prefix>_file`; never inline.
// Empty when neither is set and it is not `required`.
std::string read_secret(Section& section, const std::string& prefix, bool required);

// Fails unless `value` (read from `key`) is one of `allowed`, listing them.
void one_of(Section& s, const std::string& key, const std::string& value,
            std::initializer_list<const char*> allowed);

// One parser per top-level section; each fails (ConfigError) on the first problem it finds.
void parse_server(Section s, ServerConfig& out);                // config_server.cpp
void parse_edge(Section s, EdgeConfig& out);                    // config_tiers.cpp
void parse_cloud(Section s, std::vector<UpstreamConfig>& out);  // config_tiers.cpp
void parse_routing(Section s, RoutingConfig& out);              // config_routing.cpp
void parse_store(Section s, StoreConfig& out);                  // config_operations.cpp
void parse_operations(Section s, OperationsConfig& out);        // config_operations.cpp

}  // namespace tandem::config::detail
