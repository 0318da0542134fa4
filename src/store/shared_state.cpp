#include "store/shared_state.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace tandem::store {
namespace {

// Circuits open for longer than this (ten years) are kept without a Redis expiry.
constexpr int64_t kMaxPhysicalTtlMs = 10LL * 366 * 24 * 3600 * 1000;

Status check_name(std::string_view what, const std::string& name, bool may_be_empty) {
  if (name.empty() && may_be_empty) {
    return {};
  }
  if (name.empty() || name.size() > kMaxSharedNameBytes) {
    return make_error(ErrorCode::kInvalidArgument, std::string(what) + " name must be 1.." +
                                                       std::to_string(kMaxSharedNameBytes) +
                                                       " bytes, not " +
                                                       std::to_string(name.size()));
  }
  for (char c : name) {
    if (c < 0x20 || c > 0x7e) {
      return make_error(ErrorCode::kInvalidArgument,
                        std::string(what) +
                            " name must be printable ASCII; it holds a control or non-ASCII byte");
    }
  }
  return {};
}

Status check_circuit(const std::string& upstream, const std::string& replica) {
  if (Status status = check_name("upstream", upstream, false); !status) {
    return status;
  }
  return check_name("replica", replica, true);
}

Error overflow(const std::string& counter) {
  return make_error(ErrorCode::kInvalidArgument,
                    "counter '" + counter + "' would overflow; it keeps its value");
}

Result<int64_t> to_int64(const RedisReply& reply, std::string_view what) {
  int64_t value = 0;
  const char* end = reply.text.data() + reply.text.size();
  auto [ptr, ec] = std::from_chars(reply.text.data(), end, value);
  if (!reply.is_string() || ec != std::errc() || ptr != end) {
    return make_error(ErrorCode::kInternal,
                      "redis holds a damaged shared " + std::string(what) + " value");
  }
  return value;
}

// The scripts are function-local statics, built on first use rather than before main(), where
// a failed allocation could not be caught.

// KEYS: the circuit's hash, the set of circuits. ARGV: until_ms, replica, Redis ttl in ms
// ("0": none), upstream. The later until_ms stands.
const RedisScript& publish_script() {
  static const RedisScript script{"circuit_publish", std::string(kLuaInt64Compare) + R"lua(
local current = redis.call('HGET', KEYS[1], 'until')
if current and int64_cmp(current, ARGV[1]) > 0 then
  return 0
end
redis.call('HSET', KEYS[1], 'replica', ARGV[2], 'until', ARGV[1])
if ARGV[3] == '0' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
redis.call('SADD', KEYS[2], ARGV[4])
return 1
)lua"};
  return script;
}

// KEYS: the set of circuits. ARGV: now_ms, the circuit key prefix. Returns {upstream, replica,
// until} for each circuit open at now_ms; forgets the set's entries whose hash Redis dropped or
// clear_circuit() deleted.
const RedisScript& open_script() {
  static const RedisScript script{"circuit_open", std::string(kLuaInt64Compare) + R"lua(
local open = {}
for _, upstream in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local circuit = redis.call('HMGET', ARGV[2] .. upstream, 'replica', 'until')
  if not circuit[2] then
    redis.call('SREM', KEYS[1], upstream)
  elseif int64_cmp(circuit[2], ARGV[1]) > 0 then
    open[#open + 1] = {upstream, circuit[1] or '', circuit[2]}
  end
end
return open
)lua"};
  return script;
}

}  // namespace

SharedState::~SharedState() = default;

// ---- LocalSharedState ----

Status LocalSharedState::publish_open_circuit(const std::string& upstream,
                                              const std::string& replica, int64_t until_ms,
                                              int64_t now_ms) {
  if (Status status = check_circuit(upstream, replica); !status) {
    return status;
  }
  if (until_ms <= now_ms) {
    return {};
  }
  std::lock_guard lock(mutex_);
  auto [it, inserted] = circuits_.try_emplace(upstream, SharedCircuit{upstream, replica, until_ms});
  if (!inserted && it->second.until_ms <= until_ms) {
    it->second = SharedCircuit{upstream, replica, until_ms};
  }
  return {};
}

Status LocalSharedState::clear_circuit(const std::string& upstream) {
  if (Status status = check_name("upstream", upstream, false); !status) {
    return status;
  }
  std::lock_guard lock(mutex_);
  circuits_.erase(upstream);
  return {};
}

Result<std::vector<SharedCircuit>> LocalSharedState::open_circuits(int64_t now_ms) {
  std::lock_guard lock(mutex_);
  std::vector<SharedCircuit> open;
  // Closed circuits are dropped here rather than by a timer: the map holds one entry per
  // upstream at most, and this is where they would be seen.
  for (auto it = circuits_.begin(); it != circuits_.end();) {
    if (it->second.until_ms > now_ms) {
      open.push_back(it->second);
      ++it;
    } else {
      it = circuits_.erase(it);
    }
  }
  return open;
}

Result<int64_t> LocalSharedState::add(const std::string& counter, int64_t delta) {
  if (Status status = check_name("counter", counter, false); !status) {
    return status.error();
  }
  std::lock_guard lock(mutex_);
  int64_t& value = counters_[counter];
  int64_t sum = 0;
  if (__builtin_add_overflow(value, delta, &sum)) {
    return overflow(counter);
  }
  value = sum;
  return sum;
}

Result<std::map<std::string, int64_t>> LocalSharedState::counters() {
  std::lock_guard lock(mutex_);
  return counters_;
}

// ---- RedisSharedState ----

RedisSharedState::RedisSharedState(std::shared_ptr<RedisClient> client)
    : client_(std::move(client)) {}

Status RedisSharedState::publish_open_circuit(const std::string& upstream,
                                              const std::string& replica, int64_t until_ms,
                                              int64_t now_ms) {
  if (Status status = check_circuit(upstream, replica); !status) {
    return status;
  }
  if (until_ms <= now_ms) {
    return {};
  }
  // until_ms > now_ms, so the difference is positive; it overflows only for a negative now_ms.
  int64_t remaining_ms = 0;
  const bool huge =
      __builtin_sub_overflow(until_ms, now_ms, &remaining_ms) || remaining_ms > kMaxPhysicalTtlMs;
  auto reply = client_->eval(
      publish_script(), {client_->key("circuit:" + upstream), client_->key("circuits")},
      {std::to_string(until_ms), replica, huge ? "0" : std::to_string(remaining_ms), upstream});
  if (!reply) {
    return reply.error();
  }
  return {};
}

Status RedisSharedState::clear_circuit(const std::string& upstream) {
  if (Status status = check_name("upstream", upstream, false); !status) {
    return status;
  }
  // The set entry goes at the next open_circuits(); removing it here as well would race with
  // a replica publishing the circuit again in between.
  auto reply = client_->command({"DEL", client_->key("circuit:" + upstream)});
  if (!reply) {
    return reply.error();
  }
  return {};
}

Result<std::vector<SharedCircuit>> RedisSharedState::open_circuits(int64_t now_ms) {
  auto reply = client_->eval(open_script(), {client_->key("circuits")},
                             {std::to_string(now_ms), client_->key("circuit:")});
  if (!reply) {
    return reply.error();
  }
  if (!reply->is_array()) {
    return make_error(ErrorCode::kInternal, "redis returned an unexpected list of circuits");
  }
  std::vector<SharedCircuit> open;
  for (const RedisReply& entry : reply->elements) {
    if (!entry.is_array() || entry.elements.size() != 3) {
      return make_error(ErrorCode::kInternal, "redis returned an unexpected circuit");
    }
    auto until = to_int64(entry.elements[2], "circuit");
    if (!until) {
      return until.error();
    }
    open.push_back(SharedCircuit{entry.elements[0].text, entry.elements[1].text, *until});
  }
  std::sort(open.begin(), open.end(),
            [](const SharedCircuit& a, const SharedCircuit& b) { return a.upstream < b.upstream; });
  return open;
}

Result<int64_t> RedisSharedState::add(const std::string& counter, int64_t delta) {
  if (Status status = check_name("counter", counter, false); !status) {
    return status.error();
  }
  auto reply =
      client_->command({"HINCRBY", client_->key("counters"), counter, std::to_string(delta)});
  if (!reply) {
    // HINCRBY refuses an overflow and leaves the value, as LocalSharedState does.
    if (reply.error().message.find("would overflow") != std::string::npos) {
      return overflow(counter);
    }
    return reply.error();
  }
  if (!reply->is_integer()) {
    return make_error(ErrorCode::kInternal, "redis HINCRBY returned an unexpected reply");
  }
  return reply->integer;
}

Result<std::map<std::string, int64_t>> RedisSharedState::counters() {
  auto reply = client_->command({"HGETALL", client_->key("counters")});
  if (!reply) {
    return reply.error();
  }
  if (!reply->is_array() || reply->elements.size() % 2 != 0) {
    return make_error(ErrorCode::kInternal, "redis HGETALL returned an unexpected reply");
  }
  std::map<std::string, int64_t> counters;
  for (size_t i = 0; i < reply->elements.size(); i += 2) {
    auto value = to_int64(reply->elements[i + 1], "counter");
    if (!value) {
      return value.error();
    }
    counters[reply->elements[i].text] = *value;
  }
  return counters;
}

}  // namespace tandem::store
