#include "store/redis_consistency_memory.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "store/backend_checks.h"

namespace tandem::store {
namespace {

// Keys examined per SCAN step and per pruning script: big enough to be quick, small enough
// that no script blocks the server for long.
constexpr int kPruneBatch = 500;

// The scripts are function-local statics, built on first use rather than before main(), where
// a failed allocation could not be caught.

// KEYS: the route keys. ARGV: now_ms, then each key's cluster key (int64, in KEYS' order).
// Picks the most recently decided unexpired route (ties: the later expiry, then the smaller
// cluster key, as the SQLite ORDER BY does) and bumps its hits, in one step.
const RedisScript& lookup_script() {
  static const RedisScript script{"memory_lookup", std::string(kLuaInt64Compare) + R"lua(
local now = ARGV[1]
local best, best_decided, best_expires
for i = 1, #KEYS do
  local route = redis.call('HMGET', KEYS[i], 'decided', 'expires')
  local decided, expires = route[1], route[2]
  if decided and expires and int64_cmp(expires, now) > 0 then
    local order = 1
    if best then
      order = int64_cmp(decided, best_decided)
      if order == 0 then
        order = int64_cmp(expires, best_expires)
      end
      if order == 0 then
        order = int64_cmp(ARGV[best + 1], ARGV[i + 1])
      end
    end
    if order > 0 then
      best, best_decided, best_expires = i, decided, expires
    end
  end
end
if not best then
  return false
end
local hits = redis.call('HINCRBY', KEYS[best], 'hits', 1)
local text = redis.call('HMGET', KEYS[best], 'tier', 'reason')
return {ARGV[best + 1], text[1], text[2], best_decided, best_expires, hits}
)lua"};
  return script;
}

// KEYS: the client's index, then the route keys. ARGV: decided (now_ms), expires, Redis ttl in
// ms ("0": none), tier, reason, then each route's cluster key (in KEYS' order from KEYS[2]).
// A key holding a newer decision keeps it; every other key gets the route with hits 0.
const RedisScript& remember_script() {
  static const RedisScript script{"memory_remember", std::string(kLuaInt64Compare) + R"lua(
local index_ttl = redis.call('PTTL', KEYS[1])
local changed = false
for i = 2, #KEYS do
  local old = redis.call('HGET', KEYS[i], 'decided')
  if not old or int64_cmp(ARGV[1], old) >= 0 then
    redis.call('HSET', KEYS[i], 'tier', ARGV[4], 'reason', ARGV[5], 'decided', ARGV[1],
               'expires', ARGV[2], 'hits', 0)
    if ARGV[3] == '0' then
      redis.call('PERSIST', KEYS[i])
    else
      redis.call('PEXPIRE', KEYS[i], ARGV[3])
    end
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4 + i])
    changed = true
  end
end
if changed then
  -- The index forgets keys whose routes expired, so that it does not grow with a client that
  -- stays active for ever, and it lives as long as the longest-lived route in it.
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
  if ARGV[3] == '0' then
    redis.call('PERSIST', KEYS[1])
  elseif index_ttl == -2 or (index_ttl >= 0 and index_ttl < tonumber(ARGV[3])) then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
  end
end
return changed and 1 or 0
)lua"};
  return script;
}

// KEYS: the client's index. ARGV: the client's route key prefix. Deletes every route of the
// client in one step.
const RedisScript& forget_script() {
  static const RedisScript script{"memory_forget", R"lua(
local keys = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, key in ipairs(keys) do
  redis.call('DEL', ARGV[1] .. key)
end
redis.call('DEL', KEYS[1])
return #keys
)lua"};
  return script;
}

// KEYS: route keys found by SCAN. ARGV: now_ms, the route key prefix (P cm:r:), the index key
// prefix (P cm:c:). Deletes the routes expired at now_ms (and their index entries); returns
// how many.
const RedisScript& prune_script() {
  static const RedisScript script{"memory_prune", std::string(kLuaInt64Compare) + R"lua(
local pruned = 0
for i = 1, #KEYS do
  local expires = redis.call('HGET', KEYS[i], 'expires')
  if expires and int64_cmp(expires, ARGV[1]) <= 0 then
    redis.call('DEL', KEYS[i])
    pruned = pruned + 1
    local rest = string.sub(KEYS[i], #ARGV[2] + 1)
    local colon = string.find(rest, ':', 1, true)
    if colon then
      redis.call('ZREM', ARGV[3] .. string.sub(rest, 1, colon - 1), string.sub(rest, colon + 1))
    end
  end
end
return pruned
)lua"};
  return script;
}

// Cluster keys travel as signed decimal int64, as SQLite stores them, so that the tie-break
// on the smaller key agrees with the SQLite memory's.
std::string key_text(uint64_t key) {
  return std::to_string(std::bit_cast<int64_t>(key));
}

std::string hex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char byte : bytes) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xf]);
  }
  return out;
}

// SCAN's MATCH is a glob: the prefix's own glob characters must match literally.
std::string glob_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out;
}

Error damaged(std::string_view what) {
  return make_error(ErrorCode::kInternal,
                    "redis holds a damaged routing memory entry (" + std::string(what) + ")");
}

Result<int64_t> to_int64(const RedisReply& reply, std::string_view what) {
  const auto value = reply.as_int64();
  if (!value) {
    return damaged(what);
  }
  return *value;
}

}  // namespace

RedisConsistencyMemory::RedisConsistencyMemory(std::shared_ptr<RedisClient> client)
    : client_(std::move(client)) {}

std::string RedisConsistencyMemory::route_prefix(const std::string& client) const {
  return client_->key("cm:r:" + hex(client) + ":");
}

std::string RedisConsistencyMemory::client_index(const std::string& client) const {
  return client_->key("cm:c:" + hex(client));
}

Result<std::optional<RememberedRoute>> RedisConsistencyMemory::lookup(
    const std::string& client, const std::vector<uint64_t>& keys, int64_t now_ms) {
  if (Status status = internal::check_lookup(client, keys); !status) {
    return status.error();
  }
  if (keys.empty()) {
    return std::optional<RememberedRoute>();
  }
  const std::string prefix = route_prefix(client);
  std::vector<std::string> route_keys;
  std::vector<std::string> args = {std::to_string(now_ms)};
  route_keys.reserve(keys.size());
  for (uint64_t key : keys) {
    args.push_back(key_text(key));
    route_keys.push_back(prefix + args.back());
  }
  auto reply = client_->eval(lookup_script(), route_keys, args);
  if (!reply) {
    return reply.error();
  }
  if (reply->is_nil()) {
    return std::optional<RememberedRoute>();
  }
  const auto& parts = reply->elements;
  if (!reply->is_array() || parts.size() != 6 || !parts[1].is_string() || !parts[2].is_string() ||
      !parts[5].is_integer()) {
    return damaged("unexpected lookup reply");
  }
  auto matched = to_int64(parts[0], "key");
  auto decided = to_int64(parts[3], "decided");
  auto expires = to_int64(parts[4], "expires");
  if (!matched || !decided || !expires) {
    return damaged("a malformed number");
  }
  RememberedRoute route;
  route.tier = parts[1].text;
  route.reason = parts[2].text;
  route.matched_key = std::bit_cast<uint64_t>(*matched);
  route.decided_at_ms = *decided;
  route.expires_at_ms = *expires;
  route.hits =
      static_cast<int>(std::clamp<int64_t>(parts[5].integer, 0, std::numeric_limits<int>::max()));
  return std::optional<RememberedRoute>(std::move(route));
}

Status RedisConsistencyMemory::remember(const std::string& client,
                                        const std::vector<uint64_t>& keys, const std::string& tier,
                                        const std::string& reason, int64_t now_ms, int64_t ttl_ms) {
  if (Status status = internal::check_remember(client, keys, tier, reason, ttl_ms); !status) {
    return status;
  }
  if (keys.empty()) {
    return {};
  }
  const int64_t expires_at_ms = internal::route_expiry(now_ms, ttl_ms);
  // Never more than ttl_ms, and no overflow: expires_at_ms saturates only for now_ms >= 0.
  const int64_t remaining_ms = expires_at_ms - now_ms;
  const int64_t redis_ttl_ms =
      remaining_ms > kMaxPhysicalTtlMs - kReclaimGraceMs ? 0 : remaining_ms + kReclaimGraceMs;

  const std::string prefix = route_prefix(client);
  std::vector<std::string> redis_keys = {client_index(client)};
  std::vector<std::string> args = {std::to_string(now_ms), std::to_string(expires_at_ms),
                                   std::to_string(redis_ttl_ms), tier, reason};
  redis_keys.reserve(keys.size() + 1);
  for (uint64_t key : keys) {
    args.push_back(key_text(key));
    redis_keys.push_back(prefix + args.back());
  }
  auto reply = client_->eval(remember_script(), redis_keys, args);
  if (!reply) {
    return reply.error();
  }
  return {};
}

Status RedisConsistencyMemory::forget(const std::string& client) {
  auto reply = client_->eval(forget_script(), {client_index(client)}, {route_prefix(client)});
  if (!reply) {
    return reply.error();
  }
  return {};
}

Result<size_t> RedisConsistencyMemory::prune_expired(int64_t now_ms) {
  const std::string routes = client_->key("cm:r:");
  const std::string pattern = glob_escape(routes) + "*";
  const std::vector<std::string> args = {std::to_string(now_ms), routes, client_->key("cm:c:")};
  size_t pruned = 0;
  std::string cursor = "0";
  do {
    auto page =
        client_->command({"SCAN", cursor, "MATCH", pattern, "COUNT", std::to_string(kPruneBatch)});
    if (!page) {
      return page.error();
    }
    if (!page->is_array() || page->elements.size() != 2 || !page->elements[0].is_string() ||
        !page->elements[1].is_array()) {
      return make_error(ErrorCode::kInternal, "redis SCAN returned an unexpected reply");
    }
    cursor = page->elements[0].text;
    std::vector<std::string> found;
    for (const RedisReply& key : page->elements[1].elements) {
      if (key.is_string()) {
        found.push_back(key.text);
      }
    }
    if (found.empty()) {
      continue;
    }
    auto deleted = client_->eval(prune_script(), found, args);
    if (!deleted) {
      return deleted.error();
    }
    if (deleted->is_integer() && deleted->integer > 0) {
      pruned += static_cast<size_t>(deleted->integer);
    }
  } while (cursor != "0");
  return pruned;
}

}  // namespace tandem::store
