// The `routing:` section: which tier answers, how each pattern decides, and what the router
// keeps (privacy rules, review, consistency memory, shadow sampling, traces).

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "config/config_section.h"

namespace tandem::config::detail {
namespace {

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

void parse_privacy(Section s, PrivacyConfig& out) {
  s.get("enabled", out.enabled);
  s.get("disabled_detectors", out.disabled_detectors);
  get_patterns(s, "patterns", out.patterns);
  get_word_lists(s, "keywords", out.keywords);
  s.get("opaque_content", out.opaque_content);
  one_of(s, "opaque_content", out.opaque_content, {"allow", "edge_only", "refuse"});
  s.finish();
}

void parse_ingress(Section s, IngressConfig& out) {
  s.get("model", out.model);
  s.get("threshold", out.threshold, 0.0, 1.0);
  s.get("cloud_share", out.cloud_share, 0.0, 1.0);
  s.get("below", out.below);
  one_of(s, "below", out.below, {"edge", "cascade"});
  s.finish();
}

void parse_cascade(Section s, CascadeConfig& out) {
  s.get("threshold", out.threshold, 0.0, 1.0);
  s.get<uint32_t>("min_tokens", out.min_tokens, 1, 1u << 20);
  s.get("early_stop", out.early_stop);
  s.get("streaming", out.streaming);
  one_of(s, "streaming", out.streaming, {"hold", "revise"});
  s.get<uint32_t>("max_hold_tokens", out.max_hold_tokens, 0, 1u << 20);
  get_weights(s.section("weights"), out.weights);
  get_kinds(s, out);
  s.finish();
}

void parse_speculative(Section s, SpeculativeConfig& out) {
  s.get("judge", out.judge);
  one_of(s, "judge", out.judge, {"match", "confidence", "prompt"});
  s.get("cloud_confidence", out.cloud_confidence, 0.0, 1.0);
  s.finish();
}

void parse_collaborate(Section s, CollaborateConfig& out) {
  s.get("entropy_threshold", out.entropy_threshold, 0.0, 100.0);
  s.get<uint32_t>("cloud_tokens", out.cloud_tokens, 1, 4096);
  s.get<uint32_t>("max_handoffs", out.max_handoffs, 0, 1024);
  s.finish();
}

void parse_review(Section s, ReviewConfig& out) {
  s.get("enabled", out.enabled);
  s.get("cloud_threshold", out.cloud_threshold, 0.0, 1.0);
  get_word_lists(s, "keywords", out.keywords);
  get_patterns(s, "patterns", out.patterns);
  s.finish();
}

void parse_consistency(Section s, ConsistencyConfig& out) {
  s.get("enabled", out.enabled);
  s.get<uint32_t>("ttl_s", out.ttl_s, 1, 365u * 24 * 3600);
  s.get<uint64_t>("max_routes", out.max_routes, 1, uint64_t{1} << 40);
  s.finish();
}

void parse_shadow(Section s, ShadowConfig& out) {
  s.get("enabled", out.enabled);
  s.get("sample", out.sample, 0.0, 1.0);
  s.get("target_quality", out.target_quality, 0.0, 1.0);
  s.get<uint32_t>("min_samples", out.min_samples, 1, 1u << 30);
  s.finish();
}

void parse_traces(Section s, TracesConfig& out) {
  s.get("enabled", out.enabled);
  s.get<uint64_t>("max_rows", out.max_rows, 1, uint64_t{1} << 40);
  s.finish();
}

}  // namespace

void parse_routing(Section s, RoutingConfig& out) {
  s.get("edge_to_cloud", out.edge_to_cloud);
  s.get("cloud_to_edge", out.cloud_to_edge);
  s.get("cloud_model", out.cloud_model);
  s.get("pattern", out.pattern);
  one_of(s, "pattern", out.pattern, {"ingress", "cascade", "speculative", "collaborate"});
  s.get<uint32_t>("edge_latency_budget_ms", out.edge_latency_budget_ms);
  s.get("database", out.database);
  parse_privacy(s.section("privacy"), out.privacy);
  parse_ingress(s.section("ingress"), out.ingress);
  parse_cascade(s.section("cascade"), out.cascade);
  parse_speculative(s.section("speculative"), out.speculative);
  parse_collaborate(s.section("collaborate"), out.collaborate);
  parse_review(s.section("review"), out.review);
  parse_consistency(s.section("consistency"), out.consistency);
  parse_shadow(s.section("shadow"), out.shadow);
  parse_traces(s.section("traces"), out.traces);
  s.finish();
}

}  // namespace tandem::config::detail
