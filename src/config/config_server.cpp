// The `server:` section: where the gateway listens, who may use it and how much one request may
// ask; and the checks on it that the server runs again at startup (public paths, exposure).

#include <algorithm>
#include <string>
#include <string_view>

#include "config/config_section.h"

namespace tandem::config {
namespace detail {
namespace {

void parse_auth(Section s, AuthPolicy& out) {
  s.get("public_paths", out.public_paths);
  for (const auto& path : out.public_paths) {
    const size_t star = path.find('*');
    if (path.empty() || path.front() != '/' ||
        (star != std::string::npos && star + 1 != path.size())) {
      s.fail(s.node()["public_paths"], s.key_path("public_paths"),
             "'" + path + "' must start with '/' and may end in '*' (a prefix), nowhere else");
    }
  }
  s.get("allow_anonymous", out.allow_anonymous);
  s.finish();
}

void parse_limits(Section s, RequestLimits& out) {
  s.get<uint32_t>("max_messages", out.max_messages, 1, 1u << 20);
  s.get<uint32_t>("max_tokens", out.max_tokens, 1, 1u << 20);
  s.get<uint32_t>("max_streams_per_key", out.max_streams_per_key, 1, 1u << 20);
  s.finish();
}

void parse_responses(Section s, ResponsesConfig& out) {
  s.get("store", out.store);
  s.get<uint64_t>("max_stored", out.max_stored, 1, uint64_t{1} << 32);
  s.get<uint32_t>("ttl_hours", out.ttl_hours, 1, 24 * 3650);
  s.finish();
}

// `api_keys[index]`: a key is kept only as its sha256, given as such or read from a secret.
ClientKey parse_api_key(Section k, size_t index) {
  ClientKey key;
  k.get("name", key.name);
  if (key.name.empty()) {
    key.name = "key" + std::to_string(index);
  }
  // "name/X-Tandem-Client" identifies a key's user: the name itself must not hold a '/'.
  if (key.name.find('/') != std::string::npos) {
    k.fail(k.node()["name"], k.key_path("name"), "'" + key.name + "' must not contain '/'");
  }
  const YAML::Node hash = k.child("key_sha256");
  if (hash && hash.IsScalar()) {
    key.key_sha256 = hash.Scalar();
    if (key.key_sha256.size() != 64 ||
        key.key_sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
      k.fail(hash, k.key_path("key_sha256"), "must be 64 lower-case hex digits");
    }
    if (k.child("key_env") || k.child("key_file")) {
      k.fail(hash, k.key_path("key_sha256"), "set key_sha256, key_env or key_file, not two");
    }
  } else {
    key.key_sha256 = sha256_hex(read_secret(k, "key", true));
  }
  k.get("models", key.models);
  k.get("privacy", key.privacy);
  if (!key.privacy.empty() && key.privacy != "local-only") {
    k.fail(k.node()["privacy"], k.key_path("privacy"),
           "must be local-only (or absent), not '" + key.privacy + "'");
  }
  k.get("reviewer", key.reviewer);
  k.get("admin", key.admin);
  k.finish();
  return key;
}

void parse_api_keys(Section& s, std::vector<ClientKey>& out) {
  const YAML::Node keys = s.child("api_keys");
  if (!keys || keys.IsNull()) {
    return;
  }
  if (!keys.IsSequence()) {
    s.fail(keys, s.key_path("api_keys"), "must be a list");
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    out.push_back(parse_api_key(
        Section(keys[i], s.key_path("api_keys[" + std::to_string(i) + "]"), s.source()), i));
  }
}

}  // namespace

void parse_server(Section s, ServerConfig& out) {
  s.get("host", out.host);
  s.get<uint16_t>("port", out.port, 1, 65535);
  s.get("threads", out.threads, 1, 256);
  s.get<size_t>("max_body_bytes", out.max_body_bytes, 1024, size_t{1} << 30);
  s.get<size_t>("max_header_bytes", out.max_header_bytes, 1024, size_t{1} << 20);
  s.get<uint32_t>("request_timeout_ms", out.request_timeout_ms, 100);
  s.get<uint32_t>("read_timeout_ms", out.read_timeout_ms, 100);
  s.get<uint32_t>("write_timeout_ms", out.write_timeout_ms, 100);
  s.get<uint32_t>("shutdown_grace_ms", out.shutdown_grace_ms);
  s.get<size_t>("max_connections", out.max_connections, 1, 1u << 20);
  parse_auth(s.section("auth"), out.auth);
  parse_limits(s.section("limits"), out.limits);
  parse_responses(s.section("responses"), out.responses);
  parse_api_keys(s, out.api_keys);
  if (const std::string problem = exposure_problem(out); !problem.empty()) {
    s.fail(s.node()["host"], s.key_path("host"), problem);
  }
  s.finish();
}

}  // namespace detail

bool is_public_path(const AuthPolicy& policy, std::string_view path) {
  return std::any_of(policy.public_paths.begin(), policy.public_paths.end(),
                     [path](const std::string& pattern) {
                       if (!pattern.empty() && pattern.back() == '*') {
                         const std::string_view prefix(pattern.data(), pattern.size() - 1);
                         return path.substr(0, prefix.size()) == prefix;
                       }
                       return path == pattern;
                     });
}

bool is_loopback_host(const std::string& host) {
  return host == "::1" || host.rfind("127.", 0) == 0 || host == "localhost";
}

std::string exposure_problem(const ServerConfig& server) {
  if (!server.api_keys.empty() || server.auth.allow_anonymous || is_loopback_host(server.host)) {
    return {};
  }
  return "'" + server.host +
         "' is reachable from other machines and server.api_keys is empty: anyone could use the "
         "gateway and its cloud keys. Add api_keys, or set server.auth.allow_anonymous: true if "
         "something in front of it authenticates";
}

}  // namespace tandem::config
