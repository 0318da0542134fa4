#pragma once
// Tandem's configuration: what `tandem serve` reads from YAML (docs/CONFIG.md lists every key
// with its default). Loading validates everything and resolves secrets, so the rest of the
// program sees plain values and never a key in clear text that it did not need.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tandem::config {

// A client of the gateway. Only the sha256 of the key is kept.
struct ClientKey {
  std::string name;
  std::string key_sha256;           // hex, lower case
  std::vector<std::string> models;  // models this key may use; empty: all
  // Per-key routing policy: "local-only" pins every query of this client to the edge.
  std::string privacy;
  bool reviewer = false;  // may list and answer human-review tickets
  // An operator's key: status, metrics, audit, shadow report, canaries, and the reviews too.
  bool admin = false;
};

// What one request or one client may ask of the gateway: bounds that keep a client from
// exhausting the edge, the cloud budget or the server (docs/SECURITY.md).
struct RequestLimits {
  uint32_t max_messages = 256;  // chat messages in one request
  uint32_t max_tokens = 8192;   // a request asking for more is refused (400)
  // Concurrent streamed responses per key (or per address without keys). An application
  // backend serves all its users from one address or key, so the default admits as many streams
  // as server.max_connections does connections; lower it to share the gateway between tenants.
  uint32_t max_streams_per_key = 1024;
};

// POST /v1/responses keeps each response (its conversation and the Response object) in the
// routing database, for previous_response_id and GET /v1/responses/{id}: bounded and expiring.
// A request that asks `store: false`, and one in which the privacy scan found private data, is
// never kept (docs/GATEWAY.md#the-responses-api).
struct ResponsesConfig {
  bool store = true;            // the default for requests that do not say
  uint64_t max_stored = 10000;  // the oldest are deleted beyond this
  uint32_t ttl_hours = 720;     // 30 days, as OpenAI keeps them
};

// Which paths answer without a key, when keys are configured.
struct AuthPolicy {
  // Exact paths, or prefixes ending in '*'. The dashboard's and the playground's files hold no
  // data (everything they show comes from an authenticated API call), so a browser can load
  // them.
  std::vector<std::string> public_paths = {"/health",      "/",     "/index.html", "/dashboard",
                                           "/dashboard/*", "/chat", "/chat/*",     "/favicon.ico"};
  // Without api_keys the gateway answers anyone; it refuses to listen on an address other
  // than loopback that way unless this is set.
  bool allow_anonymous = false;
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  int threads = 2;  // I/O threads
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 16 << 10;
  uint32_t request_timeout_ms = 600000;  // whole request, streaming included
  uint32_t read_timeout_ms = 30000;      // receiving one request
  uint32_t write_timeout_ms = 30000;     // one write of a response; a client not reading is dropped
  uint32_t shutdown_grace_ms = 30000;    // in-flight requests may finish this long
  size_t max_connections = 1024;         // open client connections; more are refused (503)
  std::vector<ClientKey> api_keys;       // empty: no authentication
  AuthPolicy auth;
  RequestLimits limits;
  ResponsesConfig responses;
};

// Whether `path` is served without a key under `policy` (exact match or a '*' prefix).
bool is_public_path(const AuthPolicy& policy, std::string_view path);

// Whether `host` (an IP address) is a loopback address: 127.0.0.0/8 or ::1.
bool is_loopback_host(const std::string& host);

// Why the gateway must not listen as configured: no api_keys on an address other machines
// can reach, without server.auth.allow_anonymous. Empty when it may.
std::string exposure_problem(const ServerConfig& server);

struct EdgeConfig {
  bool enabled = true;
  std::string model;  // GGUF path; empty: the shipped model
  std::string name;   // public model id; empty: the GGUF's general.name
  // A Jinja chat template replacing the model's own (docs/ENGINE.md "Chat formatting").
  std::string chat_template_file;
  int threads = 0;
  uint32_t context = 0;
  uint32_t parallel = 4;
  bool prompt_cache = true;  // slots keep their KV cache for the next request's shared prefix
  uint32_t prompt_cache_mib = 256;  // host memory for prefixes pushed out of the slots; 0: none
  // /v1/embeddings: model (the GGUF's own, mean when it declares none), mean, last, cls.
  std::string embeddings_pooling = "model";
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
  double embeddings_per_million = 0.0;  // input tokens of the upstream's embeddings models
};

// Which OpenAI API an upstream receives a POST /v1/responses request in.
enum class UpstreamApi {
  // Chat completions: the gateway translates a Responses request (docs/GATEWAY.md).
  kChat,
  // The Responses API itself (POST base_url/responses): the client's body goes as it came,
  // built-in tools included. Chat and completions requests still go to /chat/completions and
  // /completions.
  kResponses,
};

struct UpstreamConfig {
  std::string name;
  std::string base_url;  // e.g. https://api.openai.com/v1
  std::string api_key;   // resolved from api_key_env / api_key_file; may be empty
  // Public model name -> the upstream's model name, for chat and completions.
  std::map<std::string, std::string> models;
  // Public model name -> the upstream's model name, for POST /v1/embeddings (the upstream's
  // OpenAI /embeddings). An upstream needs one of the two maps; with only this one it serves
  // embeddings and no chat.
  std::map<std::string, std::string> embeddings_models;
  UpstreamApi api = UpstreamApi::kChat;  // `api: chat | responses`
  Prices prices;
  Timeouts timeouts;
  RetryPolicy retry;
  CircuitPolicy circuit;
  HealthPolicy health;
  bool tls_verify = true;
  std::string ca_file;  // empty: the system's trust store
  size_t max_response_bytes = 8 << 20;
};

// A configurable privacy pattern (RE2 syntax) or keyword list.
struct NamedPattern {
  std::string name;
  std::string regex;
};
struct NamedWords {
  std::string name;
  std::vector<std::string> words;
};

struct PrivacyConfig {
  bool enabled = true;
  std::vector<std::string> disabled_detectors;  // built-in detectors switched off
  std::vector<NamedPattern> patterns;
  std::vector<NamedWords> keywords;
  // Content the detectors cannot read (image, audio and file parts, base64 blobs): "allow"
  // sends it like text, "edge_only" treats it as private (the request stays on the device),
  // "refuse" answers 400. A local-only key or header keeps everything on the device anyway.
  std::string opaque_content = "edge_only";
};

// The learned combination of the edge's token signals into P(the edge answer is good):
// sigmoid(bias + sum(weight * signal)). The defaults are a logistic fit of P(correct) on the
// answer logprob of llama3.1-8b in the shared routing traces (docs/ROUTING.md); the other
// terms start at 0 until calibrated on the deployment's own traffic.
struct ConfidenceWeights {
  double bias = 1.753;
  double mean_logprob = 3.54;
  double min_logprob = 0.0;
  double mean_entropy = 0.0;
  double mean_margin = 0.0;
  // Weight of log(-mean logprob), the answer's distance from certainty on a log scale: it
  // separates a 0.9999-sure answer from a 0.99-sure one, which the linear term cannot.
  double log_doubt = 0.0;
  // Weight of log(1 + tokens): how long the answer is (long answers go wrong more often on
  // some tasks; a raw logprob threshold cannot see length).
  double log_tokens = 0.0;
  // Weight of the ingress classifier's logit (log of P(cloud needed) / (1 - P)): lets a
  // calibrated cascade combine what the prompt says with what the edge's tokens say.
  double complexity = 0.0;
};

// The kinds of query the router tells apart from the prompt alone (routing/query_kind.h).
// Calibration may fit a threshold and weights per kind (ConsRoute-style), and shadow mode
// reports edge-cloud agreement per kind.
inline constexpr const char* kQueryKinds[] = {"multiple_choice", "math", "code", "factoid", "open"};

// A kind's own cascade calibration; it replaces the global threshold and weights.
struct KindCascade {
  double threshold = 0.5;
  ConfidenceWeights weights;
};

struct CascadeConfig {             // P1: edge first, escalate on low confidence
  double threshold = 0.5;          // combined confidence below this escalates
  uint32_t min_tokens = 4;         // no early stop before this many edge tokens
  bool early_stop = true;          // stop the edge once escalation is certain
  std::string streaming = "hold";  // "hold" edge tokens until decided, or "revise"
  // With "hold", a streaming client waits for at most this many edge tokens: the cascade
  // decides on that prefix (escalate now, or commit and stream the edge's answer) and a later
  // escalation goes through the revision path. 0: hold the whole answer.
  uint32_t max_hold_tokens = 16;
  ConfidenceWeights weights;
  std::map<std::string, KindCascade> kinds;  // by query kind; absent kinds use the above
};

struct IngressConfig {  // P2: the complexity classifier at ingress
  std::string model;    // weights file; empty: the shipped default
  // Score at or above this goes to the cloud. Unset (< 0): the threshold the weights file
  // recorded, on its training data, for `cloud_share` of the traffic.
  double threshold = -1.0;
  // 1%: only what the classifier is surest of skips the edge. Measured on four edge -> cloud
  // pairs (docs/ROUTING_QUALITY.md), a wider gate in front of the cascade only spends the
  // cloud: at 30% it cut the cost saved at 95% of the cloud's quality from 63% to 25% (8B ->
  // 405B); at 1% it stays within 0.01 APGR of the cascade alone on every pair.
  double cloud_share = 0.01;
  std::string below = "cascade";  // pattern when the score is below: "edge" or "cascade"
};

struct SpeculativeConfig {        // P3: edge answers at once, the cloud verifies
  std::string judge = "match";    // "match", "confidence" or "prompt"
  double cloud_confidence = 0.7;  // judge "confidence": cloud confidence needed to overrule
};

struct CollaborateConfig {         // token-level edge-cloud collaboration
  double entropy_threshold = 2.5;  // nats; above this the cloud continues
  uint32_t cloud_tokens = 8;       // tokens the cloud writes per hand-off
  uint32_t max_handoffs = 8;
};

struct ReviewConfig {  // the human tier
  bool enabled = false;
  double cloud_threshold = 0.3;      // escalated cloud answers below this confidence go to review
  std::vector<NamedWords> keywords;  // queries matching these always go to review
  std::vector<NamedPattern> patterns;
};

struct ConsistencyConfig {  // ConsRoute: similar queries of a client keep their tier
  bool enabled = true;
  uint32_t ttl_s = 3600;
  // Routes kept at most (one per client and cluster key; a request adds a few): beyond this,
  // those expiring first are deleted, so memory does not grow with the request rate.
  uint64_t max_routes = 100000;
};

// "Start in the cloud, move to the edge": the cloud answers, the edge answers the same query
// beside it on a sampled share, and agreement is recorded per query kind.
struct ShadowConfig {
  bool enabled = false;
  double sample = 0.1;           // share of cloud-answered queries the edge shadows
  double target_quality = 0.95;  // agreement a kind needs (lower confidence bound) to move
  uint32_t min_samples = 30;     // no verdict for a kind with fewer shadowed queries
};

// Per-request routing traces in the routing database (no prompt text): what `tandem replay`
// and `tandem calibrate --traces` read.
struct TracesConfig {
  bool enabled = true;
  uint64_t max_rows = 1000000;  // oldest rows are deleted beyond this
};

struct RoutingConfig {
  // `model: tandem` and explicit models may move to the other tier when theirs fails.
  bool edge_to_cloud = true;
  bool cloud_to_edge = true;
  std::string cloud_model;  // cloud model for `tandem`; empty: the first upstream's first model
  // What `model: tandem` does when no rule decides: "ingress" (P2 classifier), "cascade" (P1),
  // "speculative" (P3) or "collaborate" (token-level).
  std::string pattern = "ingress";
  uint32_t edge_latency_budget_ms = 300;  // budgets at or below this stay on the edge
  std::string database;  // SQLite file for reviews and consistency memory; empty: in memory
  PrivacyConfig privacy;
  IngressConfig ingress;
  CascadeConfig cascade;
  SpeculativeConfig speculative;
  CollaborateConfig collaborate;
  ReviewConfig review;
  ConsistencyConfig consistency;
  ShadowConfig shadow;
  TracesConfig traces;
};

// Redis as the shared store of several gateway replicas (docs/OPERATIONS.md): the review
// queue, the consistency memory, circuit states and fleet counters. Empty url: SQLite only.
struct RedisConfig {
  std::string url;       // redis://host:port[/db] or unix:///path.sock
  std::string password;  // resolved from password_env / password_file
  std::string prefix = "tandem:";
  uint32_t connect_timeout_ms = 2000;
  uint32_t command_timeout_ms = 2000;
};

struct StoreConfig {
  RedisConfig redis;
  std::string replica;  // this replica's name in shared state; empty: host name and pid
};

// What the gateway records of the requests it sent to a cloud upstream (the audit of what left
// the device): "none" keeps the destination, size and sha256 only; "redacted" also the body
// with every privacy detector's match masked; "full" the body as sent.
struct AuditConfig {
  bool enabled = true;
  std::string content = "redacted";
  uint64_t max_rows = 100000;
  // A cloud send whose audit row cannot be stored first (writer queue full, database error) is
  // refused before any byte leaves. false: the send goes ahead and the row may be lost.
  bool required = true;
};

// Thermal, battery and decode-throughput monitoring of the device the edge runs on.
struct DeviceMonitorConfig {
  bool enabled = true;
  std::string sysfs_root = "/sys";
  uint32_t interval_ms = 5000;
  double max_temp_c = 85.0;
  double resume_temp_c = 80.0;
  bool on_battery_throttles = false;
  double min_battery_percent = 15.0;
  double min_throughput_ratio = 0.6;
  double resume_throughput_ratio = 0.75;
  double baseline_tokens_per_s = 0.0;  // 0: learned from the first generations
  // What a throttled edge means for routing: "cloud" sends work that may leave the device to
  // the cloud; "none" only reports it.
  std::string when_throttled = "cloud";
};

// Canary prompts answered by both tiers at an interval: edge-cloud agreement over time.
struct CanaryConfig {
  bool enabled = false;
  uint32_t interval_s = 300;
  std::vector<std::string> prompts;  // empty: the built-in set
  uint32_t max_tokens = 32;
  double min_agreement = 0.6;
  double max_agreement_drop = 0.2;
};

struct VersionPolicy {
  std::string min_edge_version;  // the edge GGUF's general.version must be at least this
  std::vector<std::string> allowed_edge_sha256;  // empty: any; entries may be prefixes
};

struct GamingConfig {
  bool enabled = true;
  uint32_t window_s = 3600;
  uint32_t min_requests = 30;
  uint32_t min_population = 100;
  double psi_threshold = 0.25;
  double p_value = 0.001;
  double escalation_cap = 0.0;  // 0: flag only
};

struct OperationsConfig {
  bool metrics = true;       // GET /metrics
  bool dashboard = true;     // GET /
  bool log_prompts = false;  // the decision log line carries the last user message
  AuditConfig audit;
  DeviceMonitorConfig device;
  CanaryConfig canary;
  VersionPolicy version;
  GamingConfig gaming;
};

struct GatewayConfig {
  ServerConfig server;
  EdgeConfig edge;
  std::vector<UpstreamConfig> upstreams;
  RoutingConfig routing;
  StoreConfig store;
  OperationsConfig operations;
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
