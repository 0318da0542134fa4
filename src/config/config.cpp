#include "config/config.h"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <memory>
#include <sstream>

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include "config/config_section.h"

namespace tandem::config {
namespace {

using detail::ConfigError;
using detail::Section;

// What no one section can check alone: limits that must agree, something to answer, and the
// cloud model that `model: tandem` escalates to (the first chat upstream's when not given).
void check_across_sections(const std::string& source, GatewayConfig& config) {
  if (config.edge.default_max_tokens > config.server.limits.max_tokens) {
    throw ConfigError{
        source + ": edge.default_max_tokens (" + std::to_string(config.edge.default_max_tokens) +
        ") exceeds server.limits.max_tokens (" + std::to_string(config.server.limits.max_tokens) +
        "): requests without max_tokens would be refused"};
  }
  if (!config.edge.enabled && config.upstreams.empty()) {
    throw ConfigError{
        source + ": edge.enabled is false and cloud.upstreams is empty: " + "nothing would answer"};
  }
  if (!config.routing.cloud_model.empty()) {
    bool served = false;
    for (const auto& upstream : config.upstreams) {
      served = served || upstream.models.count(config.routing.cloud_model) > 0;
    }
    if (!served) {
      throw ConfigError{source + ": routing.cloud_model: no upstream serves '" +
                        config.routing.cloud_model + "'"};
    }
  } else {
    // The first upstream that serves chat (one may serve only embeddings).
    for (const auto& upstream : config.upstreams) {
      if (!upstream.models.empty()) {
        config.routing.cloud_model = upstream.models.begin()->first;
        break;
      }
    }
  }
}

void parse_root(const YAML::Node& root, const std::string& source, GatewayConfig& config) {
  Section top(root, "", source);
  detail::parse_server(top.section("server"), config.server);
  detail::parse_edge(top.section("edge"), config.edge);
  detail::parse_cloud(top.section("cloud"), config.upstreams);
  detail::parse_routing(top.section("routing"), config.routing);
  detail::parse_store(top.section("store"), config.store);
  detail::parse_operations(top.section("operations"), config.operations);
  top.finish();
  check_across_sections(source, config);
}

// Whether the text holds nothing but blank lines, comments, directives, document markers and an
// explicit null: all that an empty YAML document may hold. NULs count as blank (UTF-16 text).
bool blank_document(const std::string& text) {
  constexpr std::string_view kBlank(" \t\r\0", 4);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(kBlank);
    if (first == std::string::npos || line[first] == '#' || line[first] == '%') {
      continue;
    }
    std::string rest = line.substr(first);
    if (rest.rfind("---", 0) == 0 || rest.rfind("...", 0) == 0) {
      rest.erase(0, 3);
    }
    rest.erase(std::min(rest.find('#'), rest.size()));
    rest.erase(0, rest.find_first_not_of(kBlank));
    rest.erase(rest.find_last_not_of(kBlank) + 1);
    if (!rest.empty() && rest != "~" && rest != "null" && rest != "Null" && rest != "NULL") {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string sha256_hex(std::string_view text) {
  // OpenSSL 3 looks the algorithm up by name (locks, allocations) on every EVP_sha256() digest,
  // more work than hashing an audited body: fetch it once, and keep a context per thread.
  static EVP_MD* const kSha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  struct ContextFree {
    void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
  };
  thread_local const std::unique_ptr<EVP_MD_CTX, ContextFree> context(EVP_MD_CTX_new());
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  const bool hashed = kSha256 != nullptr && context != nullptr &&
                      EVP_DigestInit_ex(context.get(), kSha256, nullptr) == 1 &&
                      EVP_DigestUpdate(context.get(), text.data(), text.size()) == 1 &&
                      EVP_DigestFinal_ex(context.get(), digest, &length) == 1;
  if (!hashed) {
    EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * static_cast<size_t>(length), '0');
  for (unsigned int i = 0; i < length; ++i) {
    out[2 * i] = kDigits[digest[i] >> 4];
    out[2 * i + 1] = kDigits[digest[i] & 0xf];
  }
  return out;
}

Result<GatewayConfig> parse_config(const std::string& yaml_text, const std::string& source) {
  GatewayConfig config;
  config.source = source;
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    if (root && !root.IsNull() && !root.IsMap()) {
      return make_error(ErrorCode::kInvalidArgument,
                        source + ": the top level must be a mapping (server:, edge:, cloud:, ...)");
    }
    // yaml-cpp reads a document that starts with a stray ',' as empty and drops the rest: the
    // defaults would run in place of the configuration written.
    if ((!root || root.IsNull()) && !blank_document(yaml_text)) {
      return make_error(ErrorCode::kInvalidArgument,
                        source + ": no configuration could be read from a file that is not " +
                            "empty (does it start with a stray ','?)");
    }
    parse_root(root, source, config);
  } catch (const ConfigError& e) {
    return make_error(ErrorCode::kInvalidArgument, e.message);
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kInvalidArgument, source + ":" + std::to_string(e.mark.line + 1) +
                                                       ": not valid YAML: " + e.msg);
  }
  return config;
}

Result<GatewayConfig> load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return make_error(ErrorCode::kNotFound,
                      "cannot read config '" + path + "': " + errno_message(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path);
}

}  // namespace tandem::config
