// The gateway's calls into its stores off the I/O threads: the consistency memory's lookup and
// store for a request, and the shared store's upkeep (probing Redis through an outage, then
// syncing circuits and counters). Every call here runs on store_workers(); a Redis outage is
// circuit-broken in the client (store/redis_client.h), so while it lasts the calls fail at once
// and routing goes on without the memory (docs/RELIABILITY.md, "When a store is down").

#include "common/log.h"
#include "common/time_text.h"
#include "net/offload.h"
#include "server/gateway.h"
#include "server/gateway_util.h"

namespace tandem::server {

std::optional<routing::RememberedTier> Gateway::remembered_tier(
    const std::string& client, const std::vector<uint64_t>& keys) const {
  auto found = memory_->lookup(client, keys, unix_ms());
  if (!found) {
    // The memory is a preference: without it the query is routed afresh. An outage is logged
    // once, by tend_shared_store(), not per request.
    if (!redis_ || redis_->reachable()) {
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
  if (!stored && (!redis_ || redis_->reachable())) {
    log_event(LogLevel::kWarn, "routing", "consistency_store_failed",
              {{"message", stored.error().message}});
  }
}

std::optional<store::RedisOutage> Gateway::store_outage() const {
  return redis_ ? redis_->outage() : std::nullopt;
}

uint64_t Gateway::store_refused_calls() const {
  return redis_ ? redis_->refused_calls() : 0;
}

void Gateway::tend_shared_store() {
  if (redis_ && !redis_->reachable()) {
    const auto outage = redis_->outage();
    if (!redis_outage_logged_ && outage) {
      log_event(LogLevel::kError, "store", "redis_unreachable",
                {{"since", utc_iso8601(outage->since_unix_ms)},
                 {"reason", outage->reason},
                 {"effect",
                  "calls to redis fail at once; routing goes on without the routing memory, "
                  "review tickets cannot be created, circuits and counters wait"}});
      redis_outage_logged_ = true;
    }
    if (Status probed = redis_->probe(); !probed) {
      return;
    }
  }
  if (redis_outage_logged_) {
    log_event(LogLevel::kInfo, "store", "redis_reachable",
              {{"refused_calls", std::to_string(redis_->refused_calls())}});
    redis_outage_logged_ = false;
    // A restarted Redis lost what it held: announce this replica's open circuits again.
    published_circuits_.clear();
  }
  sync_shared_circuits(unix_ms());
}

}  // namespace tandem::server
