// The `edge:` and `cloud:` sections: the model on the device, and the OpenAI-compatible
// upstreams behind it with their models, prices and failure policies.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/config_section.h"

namespace tandem::config::detail {
namespace {

void parse_embeddings(Section s, EdgeConfig& out) {
  s.get("pooling", out.embeddings_pooling);
  if (out.embeddings_pooling != "model" && out.embeddings_pooling != "mean" &&
      out.embeddings_pooling != "last" && out.embeddings_pooling != "cls") {
    s.fail(s.node()["pooling"], s.key_path("pooling"),
           "must be one of model, mean, last, cls, not '" + out.embeddings_pooling + "'");
  }
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

void parse_prices(Section s, Prices& out) {
  s.get("input_per_million", out.input_per_million, 0.0, 1e6);
  s.get("output_per_million", out.output_per_million, 0.0, 1e6);
  s.get("embeddings_per_million", out.embeddings_per_million, 0.0, 1e6);
  s.finish();
}

void parse_timeouts(Section s, Timeouts& out) {
  s.get<uint32_t>("connect_ms", out.connect_ms, 1);
  s.get<uint32_t>("first_byte_ms", out.first_byte_ms, 1);
  s.get<uint32_t>("idle_ms", out.idle_ms, 1);
  s.get<uint32_t>("total_ms", out.total_ms, 1);
  s.finish();
}

void parse_retry(Section s, RetryPolicy& out) {
  s.get("max_retries", out.max_retries, 0, 10);
  s.get<uint32_t>("base_backoff_ms", out.base_backoff_ms, 1);
  s.get<uint32_t>("max_backoff_ms", out.max_backoff_ms, 1);
  s.get<uint32_t>("max_retry_after_ms", out.max_retry_after_ms);
  s.finish();
}

void parse_circuit(Section s, CircuitPolicy& out) {
  s.get("failure_threshold", out.failure_threshold, 1, 1000);
  s.get<uint32_t>("cooldown_ms", out.cooldown_ms, 1);
  s.finish();
}

void parse_health(Section s, HealthPolicy& out) {
  s.get<uint32_t>("interval_ms", out.interval_ms);
  s.get<uint32_t>("timeout_ms", out.timeout_ms, 1);
  s.get("path", out.path);
  s.finish();
}

void parse_tls(Section s, UpstreamConfig& out) {
  s.get("verify", out.tls_verify);
  s.get("ca_file", out.ca_file);
  s.finish();
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
  // Sent as "Authorization: Bearer <key>": a line break would end that header early.
  if (out.api_key.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    s.fail(s.node(), s.key_path("api_key"),
           "the API key holds a line break or a NUL byte (a key file holds the key alone)");
  }
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
  parse_prices(s.section("prices"), out.prices);
  parse_timeouts(s.section("timeouts"), out.timeouts);
  parse_retry(s.section("retry"), out.retry);
  parse_circuit(s.section("circuit"), out.circuit);
  parse_health(s.section("health"), out.health);
  parse_tls(s.section("tls"), out);
  s.get<size_t>("max_response_bytes", out.max_response_bytes, 1024, size_t{1} << 32);
  s.finish();
}

}  // namespace

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

// `cloud.upstreams`: a list, each named once (unnamed ones are upstream0, upstream1, ...).
void parse_cloud(Section s, std::vector<UpstreamConfig>& out) {
  const YAML::Node upstreams = s.child("upstreams");
  if (upstreams && !upstreams.IsNull()) {
    if (!upstreams.IsSequence()) {
      s.fail(upstreams, "cloud.upstreams", "must be a list");
    }
    std::set<std::string> names;
    for (size_t i = 0; i < upstreams.size(); ++i) {
      UpstreamConfig upstream;
      upstream.name = "upstream" + std::to_string(i);
      parse_upstream(
          Section(upstreams[i], "cloud.upstreams[" + std::to_string(i) + "]", s.source()),
          upstream);
      if (!names.insert(upstream.name).second) {
        s.fail(upstreams[i], "cloud.upstreams[" + std::to_string(i) + "].name",
               "'" + upstream.name + "' is used twice");
      }
      out.push_back(std::move(upstream));
    }
  }
  s.finish();
}

}  // namespace tandem::config::detail
