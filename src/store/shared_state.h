#pragma once
// What gateway replicas share besides the review queue and the routing memory: which upstream
// circuits are open (so that one replica's discovery that an upstream is down spares the
// others their own failed requests), and fleet-wide counters (requests per tier, escalations,
// cost in micro-USD...).
//
// LocalSharedState keeps them in this process (the default without Redis); RedisSharedState
// in a Redis that the replicas share. Both behave the same.
//
// Names (upstreams, replicas, counters) are 1..200 bytes of printable ASCII (space included);
// a replica name may also be empty. Anything else is kInvalidArgument.
//
// Thread-safety: every method of both implementations may be called from any thread.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/redis_client.h"

namespace tandem::store {

inline constexpr size_t kMaxSharedNameBytes = 200;

struct SharedCircuit {
  std::string upstream;
  std::string replica;  // the replica that opened it
  int64_t until_ms = 0;
};

class SharedState {
 public:
  virtual ~SharedState();

  // "local" or "redis".
  virtual const char* backend() const = 0;

  // A replica opened `upstream`'s circuit until until_ms: every replica treats it as open
  // until then. When it is already open until later, the later time stands (and its
  // replica); until_ms <= now_ms publishes nothing.
  virtual Status publish_open_circuit(const std::string& upstream, const std::string& replica,
                                      int64_t until_ms, int64_t now_ms) = 0;

  // The circuit closed again (a trial succeeded): clears it fleet-wide. Clearing a circuit
  // that is not open is not an error.
  virtual Status clear_circuit(const std::string& upstream) = 0;

  // The circuits open at now_ms (until_ms > now_ms), sorted by upstream.
  virtual Result<std::vector<SharedCircuit>> open_circuits(int64_t now_ms) = 0;

  // Adds `delta` (may be negative) to a fleet-wide counter, starting from 0; returns the new
  // value. kInvalidArgument when it would overflow int64 (the counter keeps its value).
  virtual Result<int64_t> add(const std::string& counter, int64_t delta) = 0;

  // Every counter that was ever added to, by name.
  virtual Result<std::map<std::string, int64_t>> counters() = 0;
};

// One process's state, in memory, behind a mutex.
class LocalSharedState final : public SharedState {
 public:
  const char* backend() const override { return "local"; }
  Status publish_open_circuit(const std::string& upstream, const std::string& replica,
                              int64_t until_ms, int64_t now_ms) override;
  Status clear_circuit(const std::string& upstream) override;
  Result<std::vector<SharedCircuit>> open_circuits(int64_t now_ms) override;
  Result<int64_t> add(const std::string& counter, int64_t delta) override;
  Result<std::map<std::string, int64_t>> counters() override;

 private:
  std::mutex mutex_;
  std::map<std::string, SharedCircuit> circuits_;  // by upstream; guarded by mutex_
  std::map<std::string, int64_t> counters_;        // guarded by mutex_
};

// The fleet's state in Redis, under the client's prefix P:
//   P circuit:<upstream>   a hash (replica, until) that Redis drops at until_ms
//   P circuits             the set of upstreams with such a hash, for listing
//   P counters             one hash of every counter, incremented with HINCRBY
// Publishing is one Lua script (the later until_ms wins), as is listing. Open circuits are
// judged by the caller's now_ms (exactly, as int64), so replicas agree whatever Redis's clock
// says; Redis drops the hash by itself until_ms - now_ms after publishing (PEXPIRE relative to
// the publisher's clock, which equals PEXPIREAT until_ms when the clocks agree).
class RedisSharedState final : public SharedState {
 public:
  explicit RedisSharedState(std::shared_ptr<RedisClient> client);

  const char* backend() const override { return "redis"; }
  Status publish_open_circuit(const std::string& upstream, const std::string& replica,
                              int64_t until_ms, int64_t now_ms) override;
  Status clear_circuit(const std::string& upstream) override;
  Result<std::vector<SharedCircuit>> open_circuits(int64_t now_ms) override;
  Result<int64_t> add(const std::string& counter, int64_t delta) override;
  Result<std::map<std::string, int64_t>> counters() override;

 private:
  std::shared_ptr<RedisClient> client_;
};

}  // namespace tandem::store
