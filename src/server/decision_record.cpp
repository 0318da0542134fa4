// The `tandem` object of every response: what the router decided, why, and what it cost.

#include <algorithm>

#include "common/json_writer.h"
#include "server/decision_parts_json.h"
#include "server/gateway.h"

namespace tandem::server {

using nlohmann::json;

void DecisionRecord::add_tier(const std::string& name) {
  if (tiers.empty() || tiers.back() != name) {
    tiers.push_back(name);
  }
}

json Revision::to_json() const {
  return {{"id", id}, {"from_tier", from_tier}, {"to_tier", to_tier}, {"reason", reason}};
}

DecisionRecord::Cost DecisionRecord::cost() const {
  Cost cost;
  cost.cloud = cloud_cost_usd;
  if (cloud_prices && (edge_usage || cloud_usage)) {
    // The answer the client got, priced as if the cloud had written all of it: the prompt
    // once, and the completion tokens of whichever tiers wrote the final text.
    const TierUsage edge = edge_usage.value_or(TierUsage{});
    const TierUsage cloud = cloud_usage.value_or(TierUsage{});
    const int prompt = std::max(edge.prompt_tokens, cloud.prompt_tokens);
    int64_t completion = tier == "edge" ? edge.completion_tokens : cloud.completion_tokens;
    if (collaboration) {
      completion = int64_t{edge.completion_tokens} + cloud.completion_tokens;
    }
    cost.all_cloud =
        (prompt * cloud_prices->input_per_million + completion * cloud_prices->output_per_million) /
        1e6;
    cost.saved = *cost.all_cloud - cloud_cost_usd;  // negative: routing cost more than the cloud
  }
  return cost;
}

namespace {

void write_optional(JsonWriter& out, std::optional<double> value) {
  if (value) {
    out.number(*value);
  } else {
    out.null();
  }
}

void write_cost(JsonWriter& out, const DecisionRecord::Cost& cost) {
  out.begin_object().key("all_cloud"_key);
  write_optional(out, cost.all_cloud);
  out.member("cloud"_key, cost.cloud).member("edge"_key, cost.edge).key("saved"_key);
  write_optional(out, cost.saved);
  out.end_object();
}

void write_usage(JsonWriter& out, const std::optional<TierUsage>& usage) {
  if (!usage) {
    out.null();
    return;
  }
  out.begin_object()
      .member("cached_prompt_tokens"_key, usage->cached_prompt_tokens)
      .member("completion_tokens"_key, usage->completion_tokens)
      .member("prompt_tokens"_key, usage->prompt_tokens)
      .end_object();
}

void write_strings(JsonWriter& out, const std::vector<std::string>& list) {
  out.begin_array();
  for (const auto& item : list) {
    out.string(item);
  }
  out.end_array();
}

void write_name_or_null(JsonWriter& out, const std::string& name) {
  if (name.empty()) {
    out.null();  // no tier ran, no pattern applied
  } else {
    out.string(name);
  }
}

void write_models(JsonWriter& out, const DecisionRecord& record) {
  out.begin_object().key("cloud"_key);
  if (record.cloud_upstream.empty()) {
    out.null();
  } else {
    out.begin_object()
        .member("model"_key, record.cloud_model)
        .member("upstream"_key, record.cloud_upstream)
        .end_object();
  }
  out.key("edge"_key);
  if (record.edge_model.empty()) {
    out.null();
  } else {
    out.begin_object()
        .member("name"_key, record.edge_model)
        .member("sha256"_key, record.edge_sha256)
        .end_object();
  }
  out.end_object();
}

void write_fallbacks(JsonWriter& out, const std::vector<DecisionRecord::Fallback>& fallbacks) {
  out.begin_array();
  for (const auto& f : fallbacks) {
    out.begin_object()
        .member("from"_key, f.from)
        .member("reason"_key, f.reason)
        .member("to"_key, f.to)
        .end_object();
  }
  out.end_array();
}

// A part present only when the part of Tandem it describes took part.
template <typename Part>
void write_part(JsonWriter& out, const char* key, const std::optional<Part>& part) {
  if (part) {
    out.key(key);
    write_json(out, *part);
  }
}

}  // namespace

json DecisionRecord::cost_json() const {
  const Cost figures = cost();
  json out = {{"edge", figures.edge}, {"cloud", figures.cloud}};
  out["all_cloud"] = figures.all_cloud ? json(*figures.all_cloud) : json(nullptr);
  out["saved"] = figures.saved ? json(*figures.saved) : json(nullptr);
  return out;
}

// Members in name order: the order nlohmann::json wrote them in, so the text is unchanged.
void DecisionRecord::write_json(JsonWriter& out) const {
  out.begin_object();
  write_part(out, "collaboration", collaboration);
  write_part(out, "confidence", confidence);
  write_part(out, "consistency", consistency);
  out.key("cost_usd"_key);
  write_cost(out, cost());
  out.member("data_left_device"_key, data_left_device).key("degraded"_key);
  if (degraded) {
    out.begin_object().member("reason"_key, *degraded).end_object();
  } else {
    out.null();
  }
  write_part(out, "escalation", escalation);
  out.key("fallbacks"_key);
  write_fallbacks(out, fallbacks);
  out.member("latency_ms"_key, latency_ms).key("models"_key);
  write_models(out, *this);
  out.key("pattern"_key);
  write_name_or_null(out, pattern);
  out.key("reasons"_key);
  write_strings(out, reasons);
  write_part(out, "review", review);
  write_part(out, "revision", revision);
  write_part(out, "routing", routing);
  write_part(out, "shadow", shadow);
  out.key("tier"_key);
  write_name_or_null(out, tier);
  out.key("tiers"_key);
  write_strings(out, tiers);
  out.member("ttft_ms"_key, ttft_ms).key("usage"_key).begin_object().key("cloud"_key);
  write_usage(out, cloud_usage);
  out.key("edge"_key);
  write_usage(out, edge_usage);
  out.end_object();
  write_part(out, "verification", verification);
  out.end_object();
}

std::string DecisionRecord::json_text() const {
  std::string text;
  JsonWriter out(text);
  write_json(out);
  return text;
}

json DecisionRecord::to_json() const {
  return json::parse(json_text());
}

}  // namespace tandem::server
