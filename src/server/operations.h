#pragma once
// The gateway's operations owner: what replicas share (circuit states and fleet counters, in
// Redis with store.redis, else in this process), and the loops that watch and tend the gateway
// while it serves — upstream health probes, device polling, the dashboard's time series, the
// canaries, the shared store's sync and the consistency memory's expiry sweeps. The request
// path never calls in here; it reads only what the loops leave behind (circuit states, the
// monitors' verdicts, the series).
//
// Thread-safety: open_shared_store() once, before serving; start() and stop() once each, from
// the thread that owns the gateway. tend_shared_store() and sync_shared_circuits() run on the
// store workers one round at a time (the sync loop awaits each round). record_canary() and
// sample_series() write to thread-safe monitors and stats. The accessors may be called from any
// thread once open_shared_store() has returned (SharedState and RedisClient are thread-safe).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/cancel.h"
#include "common/result.h"
#include "net/asio.h"
#include "store/expiry_sweeper.h"
#include "store/redis_client.h"
#include "store/shared_state.h"
#include "telemetry/skew_monitor.h"

namespace tandem::server {

class Gateway;

class Operations {
 public:
  // How often the dashboard's gauges (decode speed, cloud reachability) are read.
  static constexpr int64_t kSeriesSampleMs = 2000;

  // `gateway` must outlive this (the gateway owns it).
  explicit Operations(Gateway& gateway);
  ~Operations();
  Operations(const Operations&) = delete;
  Operations& operator=(const Operations&) = delete;

  // Connects to store.redis, or keeps the shared state in this process. With Redis, redis()
  // is the client the gateway's review queue and consistency memory use too.
  Status open_shared_store();
  const std::shared_ptr<store::RedisClient>& redis() const { return redis_; }
  store::SharedState& shared() const { return *shared_; }
  const std::string& replica() const { return replica_; }
  // False only while a configured Redis is out of reach: store calls then fail at once, and
  // the callers log nothing per request (the outage is logged once, by tend_shared_store()).
  bool shared_store_reachable() const { return !redis_ || redis_->reachable(); }
  // The shared Redis store's outage, or nullopt: no Redis, or it is reachable.
  std::optional<store::RedisOutage> store_outage() const;
  // Calls to Redis refused during outages since start (0 without store.redis).
  uint64_t store_refused_calls() const;

  // Starts the upstreams' health probes, device polling, the series sampling, the canaries,
  // the shared state's sync and the consistency memory's expiry sweeps on `executor`.
  void start(net::asio::any_io_executor executor);
  // Ends every loop start() began; each stops at its next wake-up.
  void stop();

  // Records a canary run (server/canary.h) in the skew monitor and the metrics.
  void record_canary(const telemetry::CanaryRun& run);
  // Reads the state the dashboard plots beside the traffic into the stats' time series.
  void sample_series(int64_t now_ms);
  // Feeds the shared circuit states both ways (circuits this replica opened go out; circuits
  // other replicas opened hold this one's upstreams open) and adds this replica's counts to
  // the fleet counters.
  void sync_shared_circuits(int64_t now_ms);
  // One round of the shared store's upkeep, on the store workers: probes Redis while it is
  // unreachable (logging when an outage starts and ends), then syncs circuits and counters.
  void tend_shared_store();

 private:
  Gateway& gateway_;
  std::string replica_;
  std::unique_ptr<store::SharedState> shared_;
  std::shared_ptr<store::RedisClient> redis_;  // null without store.redis
  // The sync loop's own state (one round at a time).
  std::map<std::string, bool> published_circuits_;  // upstreams whose open circuit we announced
  std::map<std::string, int64_t> pending_fleet_;    // fleet counts a failed add kept back
  bool redis_outage_logged_ = false;
  CancelSignal stop_;
  // Deletes the consistency memory's expired routes on its own thread (routing.consistency).
  std::unique_ptr<store::ExpirySweeper> memory_sweeper_;
};

}  // namespace tandem::server
