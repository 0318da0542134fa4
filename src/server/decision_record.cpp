// The `tandem` object of every response: what the router decided, why, and what it cost.

#include <algorithm>

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

json DecisionRecord::cost_json() const {
  json cost = {{"edge", 0.0}, {"cloud", cloud_cost_usd}};
  if (cloud_prices && (edge_usage || cloud_usage)) {
    // The answer the client got, priced as if the cloud had written all of it: the prompt
    // once, and the completion tokens of whichever tiers wrote the final text.
    const TierUsage edge = edge_usage.value_or(TierUsage{});
    const TierUsage cloud = cloud_usage.value_or(TierUsage{});
    const int prompt = std::max(edge.prompt_tokens, cloud.prompt_tokens);
    int64_t completion = tier == "edge" ? edge.completion_tokens : cloud.completion_tokens;
    if (!collaboration.is_null()) {
      completion = int64_t{edge.completion_tokens} + cloud.completion_tokens;
    }
    const double all_cloud =
        (prompt * cloud_prices->input_per_million + completion * cloud_prices->output_per_million) /
        1e6;
    cost["all_cloud"] = all_cloud;
    cost["saved"] = all_cloud - cloud_cost_usd;  // negative: routing cost more than the cloud
  } else {
    cost["all_cloud"] = nullptr;
    cost["saved"] = nullptr;
  }
  return cost;
}

json DecisionRecord::to_json() const {
  auto usage = [](const std::optional<TierUsage>& u) -> json {
    if (!u) {
      return nullptr;
    }
    return {{"prompt_tokens", u->prompt_tokens},
            {"cached_prompt_tokens", u->cached_prompt_tokens},
            {"completion_tokens", u->completion_tokens}};
  };
  json fallback_list = json::array();
  for (const auto& f : fallbacks) {
    fallback_list.push_back({{"from", f.from}, {"to", f.to}, {"reason", f.reason}});
  }
  json out = {
      {"tier", tier.empty() ? json(nullptr) : json(tier)},  // null: no tier ran
      {"tiers", tiers},
      {"pattern", pattern.empty() ? json(nullptr) : json(pattern)},
      {"reasons", reasons},
      {"models",
       {{"edge",
         edge_model.empty() ? json(nullptr) : json{{"name", edge_model}, {"sha256", edge_sha256}}},
        {"cloud", cloud_upstream.empty()
                      ? json(nullptr)
                      : json{{"upstream", cloud_upstream}, {"model", cloud_model}}}}},
      {"usage", {{"edge", usage(edge_usage)}, {"cloud", usage(cloud_usage)}}},
      {"cost_usd", cost_json()},
      {"data_left_device", data_left_device},
      {"ttft_ms", ttft_ms},
      {"latency_ms", latency_ms},
      {"fallbacks", std::move(fallback_list)},
      {"degraded", degraded ? json{{"reason", *degraded}} : json(nullptr)},
  };
  // Present only when the part of Tandem they describe took part.
  const std::pair<const char*, const json*> optional_parts[] = {
      {"routing", &routing},       {"confidence", &confidence},
      {"escalation", &escalation}, {"verification", &verification},
      {"revision", &revision},     {"collaboration", &collaboration},
      {"review", &review},         {"consistency", &consistency},
      {"shadow", &shadow}};
  for (const auto& [key, value] : optional_parts) {
    if (!value->is_null()) {
      out[key] = *value;
    }
  }
  return out;
}

}  // namespace tandem::server
