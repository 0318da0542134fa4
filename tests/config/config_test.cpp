#include "config/config.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::config {
namespace {

void expect_error(const std::string& yaml, const std::string& fragment) {
  auto result = parse_config(yaml, "test.yaml");
  ASSERT_FALSE(result.ok()) << "accepted:\n" << yaml;
  EXPECT_NE(result.error().message.find(fragment), std::string::npos) << result.error().message;
}

// FIPS 180-2's vectors, and the same digests from several threads at once (each keeps its own
// OpenSSL context).
TEST(ConfigTest, Sha256HexGivesTheStandardDigestsOnEveryThread) {
  const auto check = [] {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back(check);
  }
  check();
  for (auto& thread : threads) {
    thread.join();
  }
}

TEST(ConfigTest, EmptyConfigMeansDefaults) {
  auto config = parse_config("", "test.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server.host, "127.0.0.1");
  EXPECT_EQ(config->server.port, 8080);
  EXPECT_TRUE(config->edge.enabled);
  EXPECT_TRUE(config->upstreams.empty());
  EXPECT_TRUE(config->routing.cloud_model.empty());
}

// Found by the yaml_config fuzz target: yaml-cpp reads a document that starts with a stray ','
// as empty, so the whole file was dropped and the defaults ran in its place.
TEST(ConfigTest, AFileYamlCppReadsAsEmptyMustBeEmpty) {
  for (const char* blank : {"# only a comment\n", "---\n...\n", "%YAML 1.2\n--- ~ # null\n"}) {
    EXPECT_TRUE(parse_config(blank, "test.yaml")) << blank;
  }
  auto config = parse_config(",\nserver:\n  host: 0.0.0.0\n", "test.yaml");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message.find("no configuration could be read"), std::string::npos);
}

TEST(ConfigTest, ReadsEverySection) {
  ::setenv("TANDEM_TEST_UPSTREAM_KEY", "sk-test", 1);
  ::setenv("TANDEM_TEST_CLIENT_KEY", "client-secret", 1);
  auto config = parse_config(R"(
server:
  host: 0.0.0.0
  port: 9000
  threads: 4
  max_body_bytes: 65536
  api_keys:
    - name: app
      key_env: TANDEM_TEST_CLIENT_KEY
      models: [tandem]
edge:
  model: /models/m.gguf
  parallel: 2
cloud:
  upstreams:
    - name: primary
      base_url: https://api.example.com/v1/
      api_key_env: TANDEM_TEST_UPSTREAM_KEY
      models: {gpt-4o-mini: gpt-4o-mini-2024-07-18}
      prices: {input_per_million: 0.15, output_per_million: 0.6}
      timeouts: {connect_ms: 1000, first_byte_ms: 2000}
      retry: {max_retries: 3}
      circuit: {failure_threshold: 2, cooldown_ms: 500}
routing:
  cloud_to_edge: false
)",
                             "test.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server.port, 9000);
  ASSERT_EQ(config->server.api_keys.size(), 1U);
  EXPECT_EQ(config->server.api_keys[0].key_sha256, sha256_hex("client-secret"));
  EXPECT_EQ(config->server.api_keys[0].models, std::vector<std::string>{"tandem"});
  EXPECT_EQ(config->edge.parallel, 2U);
  ASSERT_EQ(config->upstreams.size(), 1U);
  const auto& u = config->upstreams[0];
  EXPECT_EQ(u.base_url, "https://api.example.com/v1");
  EXPECT_EQ(u.api_key, "sk-test");
  EXPECT_EQ(u.models.at("gpt-4o-mini"), "gpt-4o-mini-2024-07-18");
  EXPECT_DOUBLE_EQ(u.prices.output_per_million, 0.6);
  EXPECT_EQ(u.timeouts.connect_ms, 1000U);
  EXPECT_EQ(u.timeouts.idle_ms, 30000U);  // default kept
  EXPECT_EQ(u.retry.max_retries, 3);
  EXPECT_EQ(u.circuit.failure_threshold, 2);
  EXPECT_FALSE(config->routing.cloud_to_edge);
  EXPECT_EQ(config->routing.cloud_model, "gpt-4o-mini");  // the first upstream's first model
}

TEST(ConfigTest, EmbeddingsModelsMapToAnUpstreamBesideOrInsteadOfChatModels) {
  auto config = parse_config(R"(
cloud:
  upstreams:
    - name: embedder
      base_url: http://127.0.0.1:8081/v1
      embeddings_models: {bge: bge-m3}
      prices: {embeddings_per_million: 0.01}
    - name: openai
      base_url: https://api.openai.com/v1
      models: {gpt-4o-mini: gpt-4o-mini}
      embeddings_models: {text-embedding-3-small: text-embedding-3-small}
)",
                             "test.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_TRUE(config->upstreams[0].models.empty());
  EXPECT_EQ(config->upstreams[0].embeddings_models.at("bge"), "bge-m3");
  EXPECT_DOUBLE_EQ(config->upstreams[0].prices.embeddings_per_million, 0.01);
  EXPECT_EQ(config->upstreams[1].embeddings_models.size(), 1U);
  // `tandem`'s cloud model is the first chat model, past an upstream that only embeds.
  EXPECT_EQ(config->routing.cloud_model, "gpt-4o-mini");

  const std::string upstream = "cloud:\n  upstreams:\n    - base_url: http://x\n";
  expect_error(upstream + "      embeddings_models: {}\n",
               "cloud.upstreams[0].models: must map at least one");
  expect_error(upstream + "      embeddings_models: [bge]\n",
               "test.yaml:4: cloud.upstreams[0].embeddings_models: must map public model names");
  expect_error(upstream + "      embeddings_models: {bge: ''}\n",
               "cloud.upstreams[0].embeddings_models.bge: must be the upstream's model name");
  expect_error(upstream + "      embeddings_models: {tandem: bge-m3}\n",
               "embeddings_models.tandem: 'tandem' is the edge model's embeddings");
}

TEST(ConfigTest, AnUpstreamSpeaksChatUnlessItsApiSaysResponses) {
  auto config = parse_config(R"(
cloud:
  upstreams:
    - name: openai
      base_url: https://api.openai.com/v1
      models: {gpt-4o: gpt-4o}
      api: responses
    - name: vllm
      base_url: http://127.0.0.1:8000/v1
      models: {llama: llama}
)",
                             "test.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->upstreams[0].api, UpstreamApi::kResponses);
  EXPECT_EQ(config->upstreams[1].api, UpstreamApi::kChat);

  const std::string upstream =
      "cloud:\n  upstreams:\n    - base_url: http://x\n      models: {m: m}\n";
  expect_error(upstream + "      api: completions\n",
               "test.yaml:5: cloud.upstreams[0].api: must be one of chat, responses");
  expect_error(upstream + "      api: [responses]\n", "cloud.upstreams[0].api:");
}

TEST(ConfigTest, ErrorsNameTheKeyAndTheLine) {
  expect_error("server:\n  port: 70000\n", "test.yaml:2: server.port: must be between 1 and 65535");
  expect_error("server:\n  port: eighty\n", "test.yaml:2: server.port: must be an integer");
  expect_error("server:\n  prot: 80\n", "test.yaml:2: server.prot: unknown key");
  expect_error("edge:\n  enabled: maybe\n", "edge.enabled: must be true or false");
  expect_error("server: [1, 2]\n", "server: must be a mapping");
  expect_error("server:\n  port: [\n", "test.yaml:");  // not YAML
  expect_error(
      "cloud:\n  upstreams:\n    - name: a\n      base_url: ftp://x\n      models: {m: m}\n",
      "test.yaml:4: cloud.upstreams[0].base_url: must start with http:// or https://");
  expect_error("cloud:\n  upstreams:\n    - base_url: http://x\n",
               "cloud.upstreams[0].models: must map at least one");
}

TEST(ConfigTest, SecretsComeFromTheEnvironmentOrFilesNeverInline) {
  expect_error(
      "cloud:\n  upstreams:\n    - base_url: http://x\n      api_key: sk-123\n      models: {m: "
      "m}\n",
      "secrets are not written in the config");
  ::unsetenv("TANDEM_TEST_MISSING");
  expect_error(
      "cloud:\n  upstreams:\n    - base_url: http://x\n      api_key_env: TANDEM_TEST_MISSING\n    "
      "  "
      "models: {m: m}\n",
      "environment variable TANDEM_TEST_MISSING is not set");
  const std::string path = ::testing::TempDir() + "/tandem_key.txt";
  std::ofstream(path) << "sk-from-file\n";
  auto config =
      parse_config("cloud:\n  upstreams:\n    - base_url: http://x\n      api_key_file: " + path +
                       "\n      models: {m: m}\n",
                   "test.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->upstreams[0].api_key, "sk-from-file");
  std::ofstream(path) << "sk-first\nsk-second\n";
  expect_error("cloud:\n  upstreams:\n    - base_url: http://x\n      api_key_file: " + path +
                   "\n      models: {m: m}\n",
               "the API key holds a line break");
  expect_error(
      "cloud:\n  upstreams:\n    - base_url: http://x\n      api_key_file: /nonexistent\n      "
      "models: {m: m}\n",
      "cannot read '/nonexistent'");
}

TEST(ConfigTest, SecurityDefaultsAndTheirKeys) {
  auto defaults = parse_config("", "test.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  const ServerConfig& server = defaults->server;
  EXPECT_EQ(server.limits.max_messages, 256U);
  EXPECT_EQ(server.limits.max_tokens, 8192U);
  EXPECT_EQ(server.limits.max_streams_per_key, 1024U);
  EXPECT_EQ(server.max_connections, 1024U);
  EXPECT_FALSE(server.auth.allow_anonymous);
  EXPECT_TRUE(is_public_path(server.auth, "/health"));
  EXPECT_TRUE(is_public_path(server.auth, "/dashboard/dashboard.js"));
  EXPECT_FALSE(is_public_path(server.auth, "/metrics"));
  EXPECT_FALSE(is_public_path(server.auth, "/healthz"));

  auto set = parse_config(
      "server:\n  max_connections: 10\n  auth: {public_paths: [/health, /v1/tandem/*]}\n"
      "  limits: {max_messages: 4, max_tokens: 512, max_streams_per_key: 2}\n"
      "  api_keys:\n    - {name: ops, key_sha256: " +
          std::string(64, 'a') + ", admin: true}\n",
      "test.yaml");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->server.max_connections, 10U);
  EXPECT_EQ(set->server.limits.max_messages, 4U);
  EXPECT_EQ(set->server.limits.max_tokens, 512U);
  EXPECT_EQ(set->server.limits.max_streams_per_key, 2U);
  EXPECT_TRUE(set->server.api_keys[0].admin);
  EXPECT_FALSE(set->server.api_keys[0].reviewer);
  EXPECT_TRUE(is_public_path(set->server.auth, "/v1/tandem/status"));
  EXPECT_FALSE(is_public_path(set->server.auth, "/v1/tandem"));
  EXPECT_FALSE(is_public_path(set->server.auth, "/"));

  expect_error("server:\n  auth: {public_paths: [health]}\n",
               "server.auth.public_paths: 'health' must start with '/'");
  expect_error("server:\n  auth: {public_paths: ['/a*b']}\n", "may end in '*'");
  expect_error("server:\n  limits: {max_tokens: 0}\n", "server.limits.max_tokens: must be between");
  expect_error("server:\n  limits: {max_tokens: 100}\n",
               "edge.default_max_tokens (256) exceeds server.limits.max_tokens (100)");
  expect_error("server:\n  limits: {max_stream: 1}\n", "server.limits.max_stream: unknown key");
}

TEST(ConfigTest, AnOpenGatewayListensOnlyOnLoopbackUnlessAllowed) {
  expect_error("server:\n  host: 0.0.0.0\n",
               "test.yaml:2: server.host: '0.0.0.0' is reachable from other machines and "
               "server.api_keys is empty");
  expect_error("server:\n  host: 192.168.1.5\n", "allow_anonymous");
  EXPECT_TRUE(parse_config("server:\n  host: 127.0.0.2\n", "test.yaml").ok());
  EXPECT_TRUE(parse_config("server:\n  host: '::1'\n", "test.yaml").ok());
  EXPECT_TRUE(
      parse_config("server:\n  host: 0.0.0.0\n  auth: {allow_anonymous: true}\n", "test.yaml")
          .ok());
}

TEST(ConfigTest, RejectsConfigsThatCannotWork) {
  expect_error("edge:\n  enabled: false\n", "nothing would answer");
  expect_error(
      "cloud:\n  upstreams:\n    - base_url: http://x\n      models: {m: m}\nrouting:\n  "
      "cloud_model: other\n",
      "routing.cloud_model: no upstream serves 'other'");
  expect_error(
      "cloud:\n  upstreams:\n    - {name: a, base_url: 'http://x', models: {m: m}}\n    - {name: "
      "a, "
      "base_url: 'http://y', models: {m: m}}\n",
      "'a' is used twice");
  expect_error("server:\n  api_keys:\n    - key_sha256: abc\n", "must be 64 lower-case hex digits");
}

TEST(ConfigTest, ReadsTheRoutingSection) {
  auto config = parse_config(R"(
server:
  api_keys:
    - {name: ops, key_sha256: 0000000000000000000000000000000000000000000000000000000000000000,
       privacy: local-only, reviewer: true}
routing:
  pattern: cascade
  edge_latency_budget_ms: 150
  database: /tmp/tandem.db
  privacy:
    disabled_detectors: [ip_address]
    patterns: [{name: employee_id, regex: "EMP-[0-9]{6}"}]
    keywords: [{name: medical, words: [HIV, diagnosis]}]
  ingress: {threshold: 0.3, below: edge}
  cascade: {threshold: 0.6, min_tokens: 8, early_stop: false, streaming: revise,
            weights: {bias: 0.5, mean_logprob: 2, min_logprob: 0.1, mean_entropy: -0.2}}
  speculative: {judge: prompt, cloud_confidence: 0.9}
  collaborate: {entropy_threshold: 3, cloud_tokens: 4, max_handoffs: 2}
  review: {enabled: true, cloud_threshold: 0.2, keywords: [{name: legal, words: [lawsuit]}]}
  consistency: {enabled: false, ttl_s: 60}
)",
                             "test.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  const auto& r = config->routing;
  EXPECT_EQ(config->server.api_keys[0].privacy, "local-only");
  EXPECT_TRUE(config->server.api_keys[0].reviewer);
  EXPECT_EQ(r.pattern, "cascade");
  EXPECT_EQ(r.edge_latency_budget_ms, 150u);
  EXPECT_EQ(r.privacy.disabled_detectors, std::vector<std::string>{"ip_address"});
  EXPECT_EQ(r.privacy.patterns[0].regex, "EMP-[0-9]{6}");
  EXPECT_EQ(r.privacy.keywords[0].words.size(), 2u);
  EXPECT_EQ(r.ingress.below, "edge");
  EXPECT_EQ(r.cascade.streaming, "revise");
  EXPECT_DOUBLE_EQ(r.cascade.weights.mean_entropy, -0.2);
  EXPECT_EQ(r.speculative.judge, "prompt");
  EXPECT_EQ(r.collaborate.max_handoffs, 2u);
  EXPECT_TRUE(r.review.enabled);
  EXPECT_EQ(r.review.keywords[0].name, "legal");
  EXPECT_FALSE(r.consistency.enabled);
}

TEST(ConfigTest, RoutingErrorsNameTheKey) {
  expect_error("routing:\n  pattern: magic\n", "routing.pattern: must be one of ingress");
  expect_error("routing:\n  cascade: {streaming: maybe}\n", "routing.cascade.streaming");
  expect_error("routing:\n  ingress: {threshold: 2}\n", "routing.ingress.threshold");
  expect_error("routing:\n  speculative: {judge: vibes}\n", "routing.speculative.judge");
  expect_error("routing:\n  privacy: {patterns: [{name: x}]}\n",
               "routing.privacy.patterns[0].name: needs a name and a regex");
  expect_error("routing:\n  review: {keywords: [{name: legal, words: []}]}\n",
               "needs a name and at least one word");
  expect_error("routing:\n  cascade: {weights: {bais: 1}}\n",
               "routing.cascade.weights.bais: unknown key");
  expect_error(
      "server:\n  api_keys: [{name: a, key_sha256: " + std::string(64, '0') + ", privacy: open}]\n",
      "must be local-only");
}

TEST(ConfigTest, CascadeKindsStartFromTheGlobalCalibration) {
  auto config = parse_config(R"(
routing:
  cascade:
    threshold: 0.4
    weights: {bias: 1, mean_logprob: 2, log_doubt: -0.5, log_tokens: 0.1, complexity: -1}
    kinds:
      math: {threshold: 0.7}
      factoid:
        weights: {bias: -1}
)",
                             "test.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  const auto& c = config->routing.cascade;
  EXPECT_DOUBLE_EQ(c.weights.log_doubt, -0.5);
  EXPECT_DOUBLE_EQ(c.weights.log_tokens, 0.1);
  EXPECT_DOUBLE_EQ(c.weights.complexity, -1);
  ASSERT_EQ(c.kinds.size(), 2u);
  EXPECT_DOUBLE_EQ(c.kinds.at("math").threshold, 0.7);
  EXPECT_DOUBLE_EQ(c.kinds.at("math").weights.mean_logprob, 2);  // from the global weights
  EXPECT_DOUBLE_EQ(c.kinds.at("factoid").threshold, 0.4);        // from the global threshold
  EXPECT_DOUBLE_EQ(c.kinds.at("factoid").weights.bias, -1);
  EXPECT_DOUBLE_EQ(c.kinds.at("factoid").weights.log_doubt, -0.5);

  expect_error("routing:\n  cascade:\n    kinds:\n      poetry: {threshold: 0.5}\n",
               "test.yaml:4: routing.cascade.kinds.poetry: unknown query kind (one of "
               "multiple_choice, math, code, factoid, open)");
  expect_error("routing:\n  cascade:\n    kinds:\n      math: {threshold: 2}\n",
               "routing.cascade.kinds.math.threshold: must be between 0 and 1");
  expect_error("routing:\n  cascade:\n    kinds: [math]\n",
               "routing.cascade.kinds: must be a mapping of query kind to settings");
  expect_error("routing:\n  shadow: {sample: 1.5}\n", "routing.shadow.sample");
}

TEST(ConfigTest, MissingFileIsNotFound) {
  auto config = load_config("/nonexistent/tandem.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code, ErrorCode::kNotFound);
}

TEST(ConfigTest, ReadsTheOperationsAndStoreSections) {
  ::setenv("TANDEM_TEST_REDIS_PASSWORD", "s3cret", 1);
  auto config = parse_config(R"(
store:
  replica: gw-1
  redis:
    url: redis://127.0.0.1:6390/2
    password_env: TANDEM_TEST_REDIS_PASSWORD
    prefix: "prod:"
operations:
  metrics: false
  log_prompts: true
  audit: {content: none, max_rows: 50}
  device: {sysfs_root: /tmp/fake-sys, max_temp_c: 70, resume_temp_c: 65, when_throttled: none}
  canary: {enabled: true, interval_s: 60, prompts: ["2+2?"], min_agreement: 0.8}
  version: {min_edge_version: "1.2", allowed_edge_sha256: [0123456789abcdef]}
  gaming: {window_s: 600, min_requests: 10, escalation_cap: 0.3}
)",
                             "test.yaml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->store.replica, "gw-1");
  EXPECT_EQ(config->store.redis.url, "redis://127.0.0.1:6390/2");
  EXPECT_EQ(config->store.redis.password, "s3cret");
  EXPECT_EQ(config->store.redis.prefix, "prod:");
  const auto& ops = config->operations;
  EXPECT_FALSE(ops.metrics);
  EXPECT_TRUE(ops.dashboard);
  EXPECT_TRUE(ops.log_prompts);
  EXPECT_EQ(ops.audit.content, "none");
  EXPECT_EQ(ops.audit.max_rows, 50u);
  EXPECT_EQ(ops.device.sysfs_root, "/tmp/fake-sys");
  EXPECT_DOUBLE_EQ(ops.device.max_temp_c, 70.0);
  EXPECT_EQ(ops.device.when_throttled, "none");
  EXPECT_TRUE(ops.canary.enabled);
  EXPECT_EQ(ops.canary.prompts, std::vector<std::string>{"2+2?"});
  EXPECT_EQ(ops.version.min_edge_version, "1.2");
  EXPECT_EQ(ops.gaming.window_s, 600u);
  EXPECT_DOUBLE_EQ(ops.gaming.escalation_cap, 0.3);
}

TEST(ConfigTest, OperationsErrorsNameTheKey) {
  expect_error("operations:\n  device: {when_throttled: edge}\n",
               "operations.device.when_throttled: must be one of cloud, none, not 'edge'");
  expect_error("operations:\n  device: {max_temp_c: 70, resume_temp_c: 75}\n",
               "operations.device.resume_temp_c: must be below max_temp_c");
  expect_error("operations:\n  audit: {content: everything}\n",
               "operations.audit.content: must be one of none, redacted, full");
  expect_error("operations:\n  version: {allowed_edge_sha256: [abc]}\n",
               "is not 12 to 64 lower-case hex digits");
  expect_error("operations:\n  gaming: {escalation_cap: 2}\n",
               "operations.gaming.escalation_cap: must be between 0 and 1");
  expect_error("operations:\n  metric: true\n", "operations.metric: unknown key");
  expect_error("store:\n  redis: {url: 'http://x'}\n", "store.redis.url: must start with redis://");
  expect_error("store:\n  redis: {url: 'redis://:pw@host:6379'}\n",
               "store.redis.url: secrets are not written in the config");
  expect_error("store:\n  redis: {url: 'redis://h', password: pw}\n",
               "secrets are not written in the config");
}

}  // namespace
}  // namespace tandem::config
