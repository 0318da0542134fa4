// The gateway's calls into its stores off the I/O threads: the consistency memory's lookup and
// store for a request. Every call here runs on store_workers(); a Redis outage is
// circuit-broken in the client (store/redis_client.h), so while it lasts the calls fail at once
// and routing goes on without the memory (docs/RELIABILITY.md, "When a store is down"). The
// shared store's upkeep is the operations owner's (operations.cpp).

#include "common/log.h"
#include "net/offload.h"
#include "server/gateway.h"
#include "server/gateway_util.h"

namespace tandem::server {

std::optional<routing::RememberedTier> Gateway::remembered_tier(
    const std::string& client, const std::vector<uint64_t>& keys) const {
  auto found = memory_->lookup(client, keys, unix_ms());
  if (!found) {
    // The memory is a preference: without it the query is routed afresh. An outage is logged
    // once, by Operations::tend_shared_store(), not per request.
    if (operations_->shared_store_reachable()) {
      log_event(LogLevel::kWarn, "routing", "consistency_lookup_failed",
                {{"message", found.error().message}});
    }
    return std::nullopt;
  }
  if (!found.value()) {
    return std::nullopt;
  }
  const store::RememberedRoute& m = *found.value();
  return routing::RememberedTier{m.tier == "edge" ? routing::Tier::kEdge : routing::Tier::kCloud,
                                 m.reason, unix_ms() - m.decided_at_ms};
}

net::awaitable<std::optional<routing::RememberedTier>> Gateway::recall(
    const std::string& client, const std::vector<uint64_t>& keys) {
  auto found = co_await net::run_on(
      *store_workers_, [this, &client, &keys] { return remembered_tier(client, keys); });
  co_return found;
}

net::awaitable<void> Gateway::remember_route(const std::string& client,
                                             const std::vector<uint64_t>& keys,
                                             const DecisionRecord& record) {
  const auto ttl_ms = static_cast<int64_t>(config_.routing.consistency.ttl_s) * 1000;
  const std::string why = "pattern " + record.pattern + " answered on " + record.tier;
  const std::string& tier = record.tier;
  auto stored = co_await net::run_on(*store_workers_, [&] {
    return memory_->remember(client, keys, tier, why, unix_ms(), ttl_ms);
  });
  if (!stored && operations_->shared_store_reachable()) {
    log_event(LogLevel::kWarn, "routing", "consistency_store_failed",
              {{"message", stored.error().message}});
  }
}

}  // namespace tandem::server
