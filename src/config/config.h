#pragma once
// Tandem's configuration: what `tandem serve` reads from YAML (docs/CONFIG.md lists every key
// with its default). Loading validates everything and resolves secrets, so the rest of the
// program sees plain values and never a key in clear text that it did not need.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tandem::config {

// A client of the gateway. Only the sha256 of the key is kept.
struct ClientKey {
  std::string name;
  std::string key_sha256;           // hex, lower case
  std::vector<std::string> models;  // models this key may use; empty: all
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  int threads = 2;  // I/O threads
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 16 << 10;
  uint32_t request_timeout_ms = 600000;  // whole request, streaming included
  uint32_t read_timeout_ms = 30000;      // receiving one request
  uint32_t shutdown_grace_ms = 30000;    // in-flight requests may finish this long
  std::vector<ClientKey> api_keys;       // empty: no authentication
};

struct EdgeConfig {
  bool enabled = true;
  std::string model;  // GGUF path; empty: the shipped model
  std::string name;   // public model id; empty: the GGUF's general.name
  int threads = 0;
  uint32_t context = 0;
  uint32_t parallel = 4;
  size_t max_queue = 64;
  uint32_t default_max_tokens = 256;
};

struct Timeouts {
  uint32_t connect_ms = 5000;
  uint32_t first_byte_ms = 30000;
  uint32_t idle_ms = 30000;
  uint32_t total_ms = 300000;
};

struct RetryPolicy {
  int max_retries = 2;
  uint32_t base_backoff_ms = 200;
  uint32_t max_backoff_ms = 5000;
  uint32_t max_retry_after_ms = 30000;  // longer Retry-After: fall through to the next upstream
};

struct CircuitPolicy {
  int failure_threshold = 5;
  uint32_t cooldown_ms = 30000;
};

struct HealthPolicy {
  uint32_t interval_ms = 10000;  // 0: no probing
  uint32_t timeout_ms = 2000;
  std::string path = "/models";  // appended to base_url
};

struct Prices {
  double input_per_million = 0.0;
  double output_per_million = 0.0;
};

struct UpstreamConfig {
  std::string name;
  std::string base_url;  // e.g. https://api.openai.com/v1
  std::string api_key;   // resolved from api_key_env / api_key_file; may be empty
  // Public model name -> the upstream's model name.
  std::map<std::string, std::string> models;
  Prices prices;
  Timeouts timeouts;
  RetryPolicy retry;
  CircuitPolicy circuit;
  HealthPolicy health;
  bool tls_verify = true;
  std::string ca_file;  // empty: the system's trust store
  size_t max_response_bytes = 8 << 20;
};

struct RoutingConfig {
  // `model: tandem` and explicit models may move to the other tier when theirs fails.
  bool edge_to_cloud = true;
  bool cloud_to_edge = true;
  std::string cloud_model;  // cloud model for `tandem`; empty: the first upstream's first model
};

struct GatewayConfig {
  ServerConfig server;
  EdgeConfig edge;
  std::vector<UpstreamConfig> upstreams;
  RoutingConfig routing;
  std::string source = "(defaults)";  // where it was loaded from, for messages
};

// Parses YAML text. `source` names it in messages. Every error names the key and its line,
// e.g. "config.yaml:12: server.port: must be an integer between 1 and 65535".
Result<GatewayConfig> parse_config(const std::string& yaml_text, const std::string& source);

// Reads and parses a file (kNotFound if it cannot be read).
Result<GatewayConfig> load_config(const std::string& path);

// Hex sha256 of a string (client keys are stored and compared hashed).
std::string sha256_hex(std::string_view text);

}  // namespace tandem::config
