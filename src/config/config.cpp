#include "config/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

namespace tandem::config {
namespace {

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

// A secret from `<prefix>_env` (an environment variable) or `<prefix>_file`; never inline.
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

void parse_server(Section s, ServerConfig& out) {
  s.get("host", out.host);
  s.get<uint16_t>("port", out.port, 1, 65535);
  s.get("threads", out.threads, 1, 256);
  s.get<size_t>("max_body_bytes", out.max_body_bytes, 1024, size_t{1} << 30);
  s.get<size_t>("max_header_bytes", out.max_header_bytes, 1024, size_t{1} << 20);
  s.get<uint32_t>("request_timeout_ms", out.request_timeout_ms, 100);
  s.get<uint32_t>("read_timeout_ms", out.read_timeout_ms, 100);
  s.get<uint32_t>("shutdown_grace_ms", out.shutdown_grace_ms);
  s.get<size_t>("max_connections", out.max_connections, 1, 1u << 20);
  parse_auth(s.section("auth"), out.auth);
  parse_limits(s.section("limits"), out.limits);
  Section responses = s.section("responses");
  responses.get("store", out.responses.store);
  responses.get<uint64_t>("max_stored", out.responses.max_stored, 1, uint64_t{1} << 32);
  responses.get<uint32_t>("ttl_hours", out.responses.ttl_hours, 1, 24 * 3650);
  responses.finish();
  const YAML::Node keys = s.child("api_keys");
  if (keys && !keys.IsNull()) {
    if (!keys.IsSequence()) {
      s.fail(keys, s.key_path("api_keys"), "must be a list");
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      Section k(keys[i], s.key_path("api_keys[" + std::to_string(i) + "]"), s.source());
      ClientKey key;
      k.get("name", key.name);
      if (key.name.empty()) {
        key.name = "key" + std::to_string(i);
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
      out.api_keys.push_back(std::move(key));
    }
  }
  if (const std::string problem = exposure_problem(out); !problem.empty()) {
    s.fail(s.node()["host"], s.key_path("host"), problem);
  }
  s.finish();
}

void parse_embeddings(Section s, EdgeConfig& out) {
  s.get("pooling", out.embeddings_pooling);
  if (out.embeddings_pooling != "model" && out.embeddings_pooling != "mean" &&
      out.embeddings_pooling != "last" && out.embeddings_pooling != "cls") {
    s.fail(s.node()["pooling"], s.key_path("pooling"),
           "must be one of model, mean, last, cls, not '" + out.embeddings_pooling + "'");
  }
  s.finish();
}

void parse_edge(Section s, EdgeConfig& out) {
  s.get("enabled", out.enabled);
  s.get("model", out.model);
  s.get("name", out.name);
  s.get("chat_template_file", out.chat_template_file);
  s.get("threads", out.threads, 0, 1024);
  s.get<uint32_t>("context", out.context, 0, 1u << 24);
  s.get<uint32_t>("parallel", out.parallel, 1, 256);
  s.get("prompt_cache", out.prompt_cache);
  s.get<uint32_t>("prompt_cache_mib", out.prompt_cache_mib, 0, 1u << 20);
  parse_embeddings(s.section("embeddings"), out);
  s.get<size_t>("max_queue", out.max_queue, 0, 1u << 20);
  s.get<uint32_t>("default_max_tokens", out.default_max_tokens, 1, 1u << 20);
  s.finish();
}

// An upstream's `models` or `embeddings_models`: public name -> the upstream's model name.
// Absent or null is an empty map.
void parse_model_map(Section& s, const char* key, std::map<std::string, std::string>& out) {
  const YAML::Node models = s.child(key);
  if (!models || models.IsNull()) {
    return;
  }
  if (!models.IsMap()) {
    s.fail(models, s.key_path(key), "must map public model names to the upstream's model names");
  }
  for (const auto& entry : models) {
    const std::string name = entry.first.Scalar();
    if (name.empty()) {
      s.fail(entry.first, s.key_path(key), "a public model name must not be empty");
    }
    if (!entry.second.IsScalar() || entry.second.Scalar().empty()) {
      s.fail(entry.second, s.key_path(std::string(key) + "." + name),
             "must be the upstream's model name");
    }
    out[name] = entry.second.Scalar();
  }
}

// `api`: what a /v1/responses request for this upstream's models is sent as.
void parse_upstream_api(Section& s, UpstreamConfig& out) {
  std::string api = "chat";
  s.get("api", api);
  if (api == "responses") {
    out.api = UpstreamApi::kResponses;
  } else if (api != "chat") {
    s.fail(s.node()["api"], s.key_path("api"),
           "must be one of chat, responses (the API a /v1/responses request is sent in), not '" +
               api + "'");
  }
}

void parse_upstream(Section s, UpstreamConfig& out) {
  s.get("name", out.name);
  s.get("base_url", out.base_url);
  const YAML::Node base = s.node()["base_url"];
  if (out.base_url.rfind("http://", 0) != 0 && out.base_url.rfind("https://", 0) != 0) {
    s.fail(base, s.key_path("base_url"), "must start with http:// or https://");
  }
  while (!out.base_url.empty() && out.base_url.back() == '/') {
    out.base_url.pop_back();
  }
  out.api_key = read_secret(s, "api_key", false);
  parse_model_map(s, "models", out.models);
  parse_model_map(s, "embeddings_models", out.embeddings_models);
  if (out.models.empty() && out.embeddings_models.empty()) {
    s.fail(s.node(), s.key_path("models"),
           "must map at least one public model name to the upstream's model name (or give "
           "embeddings_models, for an upstream that only serves embeddings)");
  }
  if (out.embeddings_models.count("tandem") > 0) {
    s.fail(s.node()["embeddings_models"], s.key_path("embeddings_models.tandem"),
           "'tandem' is the edge model's embeddings; give the cloud model another name");
  }
  parse_upstream_api(s, out);
  Section prices = s.section("prices");
  prices.get("input_per_million", out.prices.input_per_million, 0.0, 1e6);
  prices.get("output_per_million", out.prices.output_per_million, 0.0, 1e6);
  prices.get("embeddings_per_million", out.prices.embeddings_per_million, 0.0, 1e6);
  prices.finish();
  Section timeouts = s.section("timeouts");
  timeouts.get<uint32_t>("connect_ms", out.timeouts.connect_ms, 1);
  timeouts.get<uint32_t>("first_byte_ms", out.timeouts.first_byte_ms, 1);
  timeouts.get<uint32_t>("idle_ms", out.timeouts.idle_ms, 1);
  timeouts.get<uint32_t>("total_ms", out.timeouts.total_ms, 1);
  timeouts.finish();
  Section retry = s.section("retry");
  retry.get("max_retries", out.retry.max_retries, 0, 10);
  retry.get<uint32_t>("base_backoff_ms", out.retry.base_backoff_ms, 1);
  retry.get<uint32_t>("max_backoff_ms", out.retry.max_backoff_ms, 1);
  retry.get<uint32_t>("max_retry_after_ms", out.retry.max_retry_after_ms);
  retry.finish();
  Section circuit = s.section("circuit");
  circuit.get("failure_threshold", out.circuit.failure_threshold, 1, 1000);
  circuit.get<uint32_t>("cooldown_ms", out.circuit.cooldown_ms, 1);
  circuit.finish();
  Section health = s.section("health");
  health.get<uint32_t>("interval_ms", out.health.interval_ms);
  health.get<uint32_t>("timeout_ms", out.health.timeout_ms, 1);
  health.get("path", out.health.path);
  health.finish();
  Section tls = s.section("tls");
  tls.get("verify", out.tls_verify);
  tls.get("ca_file", out.ca_file);
  tls.finish();
  s.get<size_t>("max_response_bytes", out.max_response_bytes, 1024, size_t{1} << 32);
  s.finish();
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

// `patterns: [{name, regex}]`; the regex itself is compiled (and checked) by the router.
void get_patterns(Section& s, const std::string& key, std::vector<NamedPattern>& out) {
  const YAML::Node list = s.child(key);
  if (!list || list.IsNull()) {
    return;
  }
  if (!list.IsSequence()) {
    s.fail(list, s.key_path(key), "must be a list of {name, regex}");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    Section item(list[i], s.key_path(key + "[" + std::to_string(i) + "]"), s.source());
    NamedPattern pattern;
    item.get("name", pattern.name);
    item.get("regex", pattern.regex);
    if (pattern.name.empty() || pattern.regex.empty()) {
      item.fail(list[i], item.key_path("name"), "needs a name and a regex");
    }
    item.finish();
    out.push_back(std::move(pattern));
  }
}

// `keywords: [{name, words: [...]}]`.
void get_word_lists(Section& s, const std::string& key, std::vector<NamedWords>& out) {
  const YAML::Node list = s.child(key);
  if (!list || list.IsNull()) {
    return;
  }
  if (!list.IsSequence()) {
    s.fail(list, s.key_path(key), "must be a list of {name, words}");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    Section item(list[i], s.key_path(key + "[" + std::to_string(i) + "]"), s.source());
    NamedWords words;
    item.get("name", words.name);
    item.get("words", words.words);
    if (words.name.empty() || words.words.empty()) {
      item.fail(list[i], item.key_path("name"), "needs a name and at least one word");
    }
    item.finish();
    out.push_back(std::move(words));
  }
}

void get_weights(Section weights, ConfidenceWeights& out) {
  weights.get("bias", out.bias, -100.0, 100.0);
  weights.get("mean_logprob", out.mean_logprob, -100.0, 100.0);
  weights.get("min_logprob", out.min_logprob, -100.0, 100.0);
  weights.get("mean_entropy", out.mean_entropy, -100.0, 100.0);
  weights.get("mean_margin", out.mean_margin, -100.0, 100.0);
  weights.get("log_doubt", out.log_doubt, -100.0, 100.0);
  weights.get("log_tokens", out.log_tokens, -100.0, 100.0);
  weights.get("complexity", out.complexity, -100.0, 100.0);
  weights.finish();
}

// `cascade.kinds: {math: {threshold, weights}, ...}`: a kind's calibration starts from the
// global one, so a kind may override only its threshold.
void get_kinds(Section& cascade, CascadeConfig& out) {
  const YAML::Node kinds = cascade.child("kinds");
  if (!kinds || kinds.IsNull()) {
    return;
  }
  if (!kinds.IsMap()) {
    cascade.fail(kinds, cascade.key_path("kinds"), "must be a mapping of query kind to settings");
  }
  for (const auto& entry : kinds) {
    const std::string name = entry.first.Scalar();
    const std::string path = cascade.key_path("kinds." + name);
    if (std::find_if(std::begin(kQueryKinds), std::end(kQueryKinds),
                     [&](const char* k) { return name == k; }) == std::end(kQueryKinds)) {
      std::string known;
      for (const char* k : kQueryKinds) {
        known += (known.empty() ? "" : ", ") + std::string(k);
      }
      cascade.fail(entry.first, path, "unknown query kind (one of " + known + ")");
    }
    Section kind(entry.second, path, cascade.source());
    KindCascade settings{out.threshold, out.weights};
    kind.get("threshold", settings.threshold, 0.0, 1.0);
    get_weights(kind.section("weights"), settings.weights);
    kind.finish();
    out.kinds[name] = settings;
  }
}

void parse_routing(Section s, RoutingConfig& out) {
  s.get("edge_to_cloud", out.edge_to_cloud);
  s.get("cloud_to_edge", out.cloud_to_edge);
  s.get("cloud_model", out.cloud_model);
  s.get("pattern", out.pattern);
  one_of(s, "pattern", out.pattern, {"ingress", "cascade", "speculative", "collaborate"});
  s.get<uint32_t>("edge_latency_budget_ms", out.edge_latency_budget_ms);
  s.get("database", out.database);

  Section privacy = s.section("privacy");
  privacy.get("enabled", out.privacy.enabled);
  privacy.get("disabled_detectors", out.privacy.disabled_detectors);
  get_patterns(privacy, "patterns", out.privacy.patterns);
  get_word_lists(privacy, "keywords", out.privacy.keywords);
  privacy.get("opaque_content", out.privacy.opaque_content);
  one_of(privacy, "opaque_content", out.privacy.opaque_content, {"allow", "edge_only", "refuse"});
  privacy.finish();

  Section ingress = s.section("ingress");
  ingress.get("model", out.ingress.model);
  ingress.get("threshold", out.ingress.threshold, 0.0, 1.0);
  ingress.get("cloud_share", out.ingress.cloud_share, 0.0, 1.0);
  ingress.get("below", out.ingress.below);
  one_of(ingress, "below", out.ingress.below, {"edge", "cascade"});
  ingress.finish();

  Section cascade = s.section("cascade");
  cascade.get("threshold", out.cascade.threshold, 0.0, 1.0);
  cascade.get<uint32_t>("min_tokens", out.cascade.min_tokens, 1, 1u << 20);
  cascade.get("early_stop", out.cascade.early_stop);
  cascade.get("streaming", out.cascade.streaming);
  one_of(cascade, "streaming", out.cascade.streaming, {"hold", "revise"});
  cascade.get<uint32_t>("max_hold_tokens", out.cascade.max_hold_tokens, 0, 1u << 20);
  get_weights(cascade.section("weights"), out.cascade.weights);
  get_kinds(cascade, out.cascade);
  cascade.finish();

  Section speculative = s.section("speculative");
  speculative.get("judge", out.speculative.judge);
  one_of(speculative, "judge", out.speculative.judge, {"match", "confidence", "prompt"});
  speculative.get("cloud_confidence", out.speculative.cloud_confidence, 0.0, 1.0);
  speculative.finish();

  Section collaborate = s.section("collaborate");
  collaborate.get("entropy_threshold", out.collaborate.entropy_threshold, 0.0, 100.0);
  collaborate.get<uint32_t>("cloud_tokens", out.collaborate.cloud_tokens, 1, 4096);
  collaborate.get<uint32_t>("max_handoffs", out.collaborate.max_handoffs, 0, 1024);
  collaborate.finish();

  Section review = s.section("review");
  review.get("enabled", out.review.enabled);
  review.get("cloud_threshold", out.review.cloud_threshold, 0.0, 1.0);
  get_word_lists(review, "keywords", out.review.keywords);
  get_patterns(review, "patterns", out.review.patterns);
  review.finish();

  Section consistency = s.section("consistency");
  consistency.get("enabled", out.consistency.enabled);
  consistency.get<uint32_t>("ttl_s", out.consistency.ttl_s, 1, 365u * 24 * 3600);
  consistency.get<uint64_t>("max_routes", out.consistency.max_routes, 1, uint64_t{1} << 40);
  consistency.finish();

  Section shadow = s.section("shadow");
  shadow.get("enabled", out.shadow.enabled);
  shadow.get("sample", out.shadow.sample, 0.0, 1.0);
  shadow.get("target_quality", out.shadow.target_quality, 0.0, 1.0);
  shadow.get<uint32_t>("min_samples", out.shadow.min_samples, 1, 1u << 30);
  shadow.finish();

  Section traces = s.section("traces");
  traces.get("enabled", out.traces.enabled);
  traces.get<uint64_t>("max_rows", out.traces.max_rows, 1, uint64_t{1} << 40);
  traces.finish();
  s.finish();
}

void parse_store(Section s, StoreConfig& out) {
  s.get("replica", out.replica);
  Section redis = s.section("redis");
  redis.get("url", out.redis.url);
  if (!out.redis.url.empty() && out.redis.url.rfind("redis://", 0) != 0 &&
      out.redis.url.rfind("unix://", 0) != 0) {
    redis.fail(redis.node()["url"], "store.redis.url",
               "must start with redis:// or unix://, not '" + out.redis.url + "'");
  }
  if (out.redis.url.find('@') != std::string::npos) {
    redis.fail(redis.node()["url"], "store.redis.url",
               "secrets are not written in the config; use password_env or password_file");
  }
  out.redis.password = read_secret(redis, "password", false);
  redis.get("prefix", out.redis.prefix);
  redis.get<uint32_t>("connect_timeout_ms", out.redis.connect_timeout_ms, 1, 600000);
  redis.get<uint32_t>("command_timeout_ms", out.redis.command_timeout_ms, 1, 600000);
  redis.finish();
  s.finish();
}

void parse_operations(Section s, OperationsConfig& out) {
  s.get("metrics", out.metrics);
  s.get("dashboard", out.dashboard);
  s.get("log_prompts", out.log_prompts);

  Section audit = s.section("audit");
  audit.get("enabled", out.audit.enabled);
  audit.get("content", out.audit.content);
  one_of(audit, "content", out.audit.content, {"none", "redacted", "full"});
  audit.get<uint64_t>("max_rows", out.audit.max_rows, 1, uint64_t{1} << 40);
  audit.get("required", out.audit.required);
  audit.finish();

  Section device = s.section("device");
  DeviceMonitorConfig& d = out.device;
  device.get("enabled", d.enabled);
  device.get("sysfs_root", d.sysfs_root);
  device.get<uint32_t>("interval_ms", d.interval_ms, 100, 3600000);
  device.get("max_temp_c", d.max_temp_c, -50.0, 200.0);
  device.get("resume_temp_c", d.resume_temp_c, -50.0, 200.0);
  if (d.resume_temp_c >= d.max_temp_c) {
    device.fail(device.node()["resume_temp_c"], "operations.device.resume_temp_c",
                "must be below max_temp_c (" + std::to_string(d.max_temp_c) + ")");
  }
  device.get("on_battery_throttles", d.on_battery_throttles);
  device.get("min_battery_percent", d.min_battery_percent, 0.0, 100.0);
  device.get("min_throughput_ratio", d.min_throughput_ratio, 0.01, 1.0);
  device.get("resume_throughput_ratio", d.resume_throughput_ratio, 0.01, 1.0);
  if (d.resume_throughput_ratio < d.min_throughput_ratio) {
    device.fail(
        device.node()["resume_throughput_ratio"], "operations.device.resume_throughput_ratio",
        "must be at least min_throughput_ratio (" + std::to_string(d.min_throughput_ratio) + ")");
  }
  device.get("baseline_tokens_per_s", d.baseline_tokens_per_s, 0.0, 1e9);
  device.get("when_throttled", d.when_throttled);
  one_of(device, "when_throttled", d.when_throttled, {"cloud", "none"});
  device.finish();

  Section canary = s.section("canary");
  canary.get("enabled", out.canary.enabled);
  canary.get<uint32_t>("interval_s", out.canary.interval_s, 1, 7 * 24 * 3600);
  canary.get("prompts", out.canary.prompts);
  for (const auto& prompt : out.canary.prompts) {
    if (prompt.empty() || prompt.size() > 4096) {
      canary.fail(canary.node()["prompts"], "operations.canary.prompts",
                  "each prompt must be 1 to 4096 bytes");
    }
  }
  canary.get<uint32_t>("max_tokens", out.canary.max_tokens, 1, 4096);
  canary.get("min_agreement", out.canary.min_agreement, 0.0, 1.0);
  canary.get("max_agreement_drop", out.canary.max_agreement_drop, 0.0, 1.0);
  canary.finish();

  Section version = s.section("version");
  version.get("min_edge_version", out.version.min_edge_version);
  version.get("allowed_edge_sha256", out.version.allowed_edge_sha256);
  for (const auto& sha : out.version.allowed_edge_sha256) {
    const bool hex = !sha.empty() && sha.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex || sha.size() < 12 || sha.size() > 64) {
      version.fail(version.node()["allowed_edge_sha256"], "operations.version.allowed_edge_sha256",
                   "'" + sha + "' is not 12 to 64 lower-case hex digits of a sha256");
    }
  }
  version.finish();

  Section gaming = s.section("gaming");
  gaming.get("enabled", out.gaming.enabled);
  gaming.get<uint32_t>("window_s", out.gaming.window_s, 1, 30u * 24 * 3600);
  gaming.get<uint32_t>("min_requests", out.gaming.min_requests, 1, 1u << 30);
  gaming.get<uint32_t>("min_population", out.gaming.min_population, 1, 1u << 30);
  gaming.get("psi_threshold", out.gaming.psi_threshold, 0.0, 100.0);
  gaming.get("p_value", out.gaming.p_value, 0.0, 1.0);
  gaming.get("escalation_cap", out.gaming.escalation_cap, 0.0, 1.0);
  gaming.finish();
  s.finish();
}

void parse_root(const YAML::Node& root, const std::string& source, GatewayConfig& config) {
  Section top(root, "", source);
  parse_server(top.section("server"), config.server);
  parse_edge(top.section("edge"), config.edge);
  const YAML::Node cloud = top.child("cloud");
  Section cloud_section(cloud, "cloud", source);
  const YAML::Node upstreams = cloud_section.child("upstreams");
  if (upstreams && !upstreams.IsNull()) {
    if (!upstreams.IsSequence()) {
      cloud_section.fail(upstreams, "cloud.upstreams", "must be a list");
    }
    std::set<std::string> names;
    for (size_t i = 0; i < upstreams.size(); ++i) {
      UpstreamConfig upstream;
      upstream.name = "upstream" + std::to_string(i);
      parse_upstream(Section(upstreams[i], "cloud.upstreams[" + std::to_string(i) + "]", source),
                     upstream);
      if (!names.insert(upstream.name).second) {
        cloud_section.fail(upstreams[i], "cloud.upstreams[" + std::to_string(i) + "].name",
                           "'" + upstream.name + "' is used twice");
      }
      config.upstreams.push_back(std::move(upstream));
    }
  }
  cloud_section.finish();
  parse_routing(top.section("routing"), config.routing);
  parse_store(top.section("store"), config.store);
  parse_operations(top.section("operations"), config.operations);
  top.finish();

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

}  // namespace

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

std::string sha256_hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kDigits[digest[i] >> 4]);
    out.push_back(kDigits[digest[i] & 0xf]);
  }
  return out;
}

namespace {

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
