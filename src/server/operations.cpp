// The gateway's operations owner (operations.h): its loops, the shared store and its sync.

#include "server/operations.h"

#include <climits>

#include <unistd.h>

#include "common/log.h"
#include "common/time_text.h"
#include "net/offload.h"
#include "net/sleep.h"
#include "net/spawn.h"
#include "server/canary.h"
#include "server/gateway.h"
#include "server/gateway_util.h"

namespace tandem::server {
namespace {

// Host name and pid: unique among replicas on one host and across hosts.
std::string default_replica_name() {
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof(host), "gateway");
  }
  return std::string(host) + "-" + std::to_string(::getpid());
}

net::awaitable<void> poll_device_forever(Gateway& gateway, CancelSignal& stop) {
  const auto interval = std::chrono::milliseconds(gateway.config().operations.device.interval_ms);
  // No co_await in the loop's condition: GCC 12 miscompiles that in coroutines.
  while (!stop.cancelled()) {
    gateway.monitors().poll_device(unix_ms());
    const bool slept = co_await net::sleep_for(interval, stop);
    if (!slept) {
      break;
    }
  }
}

// Several readings per bucket, so that a bucket's gauges exist whatever the request rate.
net::awaitable<void> sample_series_forever(Operations& operations, CancelSignal& stop) {
  while (!stop.cancelled()) {
    operations.sample_series(unix_ms());
    const bool slept =
        co_await net::sleep_for(std::chrono::milliseconds(Operations::kSeriesSampleMs), stop);
    if (!slept) {
      break;
    }
  }
}

net::awaitable<void> sync_shared_forever(Gateway& gateway, Operations& operations,
                                         CancelSignal& stop) {
  while (!stop.cancelled()) {
    // On the store workers: a round may wait for Redis (a probe through an outage).
    const bool tended = co_await net::run_on(gateway.store_workers(), [&operations] {
      operations.tend_shared_store();
      return true;
    });
    (void)tended;
    const bool slept = co_await net::sleep_for(std::chrono::seconds(1), stop);
    if (!slept) {
      break;
    }
  }
}

}  // namespace

Operations::Operations(Gateway& gateway) : gateway_(gateway) {}

Operations::~Operations() = default;

Status Operations::open_shared_store() {
  const config::GatewayConfig& config = gateway_.config();
  replica_ = config.store.replica.empty() ? default_replica_name() : config.store.replica;
  const auto& redis = config.store.redis;
  if (redis.url.empty()) {
    shared_ = std::make_unique<store::LocalSharedState>();
    return {};
  }
  store::RedisOptions options;
  options.url = redis.url;
  options.password = redis.password;
  options.prefix = redis.prefix;
  options.connect_timeout_ms = redis.connect_timeout_ms;
  options.command_timeout_ms = redis.command_timeout_ms;
  auto connected = store::RedisClient::connect(options);
  if (!connected) {
    return make_error(connected.error().code, "store.redis: " + connected.error().message);
  }
  // One connection for all: each call is one short round trip, serialised by the client.
  redis_ = std::move(connected).value();
  shared_ = std::make_unique<store::RedisSharedState>(redis_);
  log_event(LogLevel::kInfo, "store", "shared_store",
            {{"backend", "redis"}, {"replica", replica_}, {"prefix", redis.prefix}});
  return {};
}

std::optional<store::RedisOutage> Operations::store_outage() const {
  return redis_ ? redis_->outage() : std::nullopt;
}

uint64_t Operations::store_refused_calls() const {
  return redis_ ? redis_->refused_calls() : 0;
}

void Operations::start(net::asio::any_io_executor executor) {
  // Each loop on a strand of its own: net::sleep_for cancels its timer through a post to the
  // coroutine's executor, which on the bare io_context could run beside the coroutine, and the
  // edge's token queue (net/async_queue.h) wakes its waiter the same way.
  const auto strand = [&] { return net::asio::make_strand(executor); };
  for (const auto& u : gateway_.upstreams()) {
    net::asio::co_spawn(strand(), u->probe_forever(stop_),
                        net::log_failure("upstream", "health_probe"));
  }
  const config::GatewayConfig& config = gateway_.config();
  if (config.operations.device.enabled) {
    net::asio::co_spawn(strand(), poll_device_forever(gateway_, stop_),
                        net::log_failure("operations", "device_poll"));
  }
  net::asio::co_spawn(strand(), sample_series_forever(*this, stop_),
                      net::log_failure("operations", "series_sample"));
  if (config.operations.canary.enabled && gateway_.engine() != nullptr &&
      !gateway_.cloud_model().empty()) {
    net::asio::co_spawn(strand(), canary_forever(gateway_, stop_),
                        net::log_failure("operations", "canary"));
  }
  if (config.routing.consistency.enabled && !memory_sweeper_) {
    memory_sweeper_ = std::make_unique<store::ExpirySweeper>(
        gateway_.memory(),
        store::ExpirySweeper::interval_for(std::chrono::seconds(config.routing.consistency.ttl_s)),
        unix_ms);
  }
  if (std::string_view(shared_->backend()) != "local") {
    net::asio::co_spawn(strand(), sync_shared_forever(gateway_, *this, stop_),
                        net::log_failure("operations", "shared_state_sync"));
  }
}

void Operations::stop() {
  stop_.cancel();
  if (memory_sweeper_) {
    memory_sweeper_->stop();
  }
}

void Operations::record_canary(const telemetry::CanaryRun& run) {
  gateway_.monitors().skew().record_canary(run);
  const size_t answered = run.prompts - run.failed;
  LogFields fields = {{"prompts", std::to_string(run.prompts)},
                      {"agreed", std::to_string(run.agreed)},
                      {"failed", std::to_string(run.failed)},
                      {"edge_sha256", run.edge_sha256},
                      {"cloud_model", run.cloud_model}};
  auto& registry = gateway_.stats().registry();
  registry.counter("tandem_canary_runs_total", "Canary runs (edge and cloud on fixed prompts)")
      .add();
  if (answered > 0) {
    const double agreement = static_cast<double>(run.agreed) / static_cast<double>(answered);
    registry.gauge("tandem_canary_agreement", "Edge-cloud agreement of the last canary run")
        .set(agreement);
    fields.emplace_back("agreement", std::to_string(agreement));
  }
  log_event(answered == 0 ? LogLevel::kWarn : LogLevel::kInfo, "canary", "run", fields);
}

void Operations::sample_series(int64_t now_ms) {
  const routing::HealthSnapshot h = gateway_.health();
  const auto throttle = gateway_.monitors().throttle().snapshot();
  telemetry::SeriesGauges gauges;
  gauges.decode_tokens_per_s = throttle.ewma_tokens_per_s;
  gauges.decode_baseline = throttle.baseline_tokens_per_s;
  if (h.cloud_configured) {
    gauges.cloud_online = h.cloud_online;
  }
  gateway_.stats().series().record_gauges(gauges, now_ms);
}

void Operations::tend_shared_store() {
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

void Operations::sync_shared_circuits(int64_t now_ms) {
  const auto& upstreams = gateway_.upstreams();
  for (const auto& u : upstreams) {
    const auto s = u->status();
    const bool open_here = s.circuit == upstream::CircuitState::kOpen && !u->circuit_held_by_peer();
    bool& published = published_circuits_[u->name()];
    if (open_here && !published) {
      if (shared_->publish_open_circuit(u->name(), replica_, now_ms + s.cooldown_remaining_ms,
                                        now_ms)) {
        published = true;
      }
    } else if (!open_here && published && s.circuit == upstream::CircuitState::kClosed) {
      if (shared_->clear_circuit(u->name())) {
        published = false;
      }
    }
  }
  // This replica's counts since the last round join the fleet's; a failed add keeps them for
  // the next round.
  for (const auto& [name, delta] : gateway_.stats().take_fleet_deltas()) {
    if (delta == 0) {
      continue;
    }
    if (auto added = shared_->add(name, delta); !added) {
      pending_fleet_[name] += delta;
      log_event(LogLevel::kWarn, "store", "shared_counter_failed",
                {{"counter", name}, {"message", added.error().message}});
    }
  }
  for (auto it = pending_fleet_.begin(); it != pending_fleet_.end();) {
    it = shared_->add(it->first, it->second) ? pending_fleet_.erase(it) : std::next(it);
  }
  auto open = shared_->open_circuits(now_ms);
  if (!open) {
    log_event(LogLevel::kWarn, "store", "shared_circuits_failed",
              {{"message", open.error().message}});
    return;
  }
  for (const auto& circuit : *open) {
    if (circuit.replica == replica_) {
      continue;
    }
    for (const auto& u : upstreams) {
      if (u->name() == circuit.upstream) {
        u->hold_circuit_open(std::chrono::milliseconds(circuit.until_ms - now_ms));
      }
    }
  }
}

}  // namespace tandem::server
