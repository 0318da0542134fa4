#pragma once
// A small synchronous Redis client (over hiredis) for the state that several gateway replicas
// share: the review queue, the routing memory, open circuits and counters. It speaks to one
// standalone Redis server (or the primary behind a fixed address); Redis Cluster is not
// supported, since the store's scripts touch keys they derive from their arguments.
//
// Errors are values. A Redis error reply becomes an Error naming the command (never its
// arguments, which may hold prompts and answers); a lost connection or a timeout becomes
// kBusy (retryable). No message ever contains the password.
//
// An outage is circuit-broken: the first call that cannot reach the server (a timeout, a lost
// connection, a refused connect) starts an outage, and from then on every call fails at once
// with kBusy, without touching the network, until probe() reaches the server again. A hung
// Redis (a stopped process, a partition) so costs its callers one command timeout per outage,
// not one per call; whoever owns the client probes it in the background while it is down.
//
// Thread-safety: a RedisClient may be used from any number of threads. It holds one
// connection behind a mutex, so commands from different threads run one after another (each
// is one round trip on loopback or a LAN, tens of microseconds); give a thread that must not
// wait for the others a RedisClient of its own.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"

// hiredis's handle types, declared here so that users of this header need not see hiredis.h.
struct redisContext;
struct redisReply;

namespace tandem::store {

struct RedisOptions {
  // redis://[[user]:password@]host[:port][/db] (port 6379 and db 0 when left out; an IPv6
  // host in brackets) or unix:///path/to.sock[?db=N]. Reserved characters in the user or
  // password are %-escaped.
  std::string url;
  // Resolved by the caller from an environment variable or a file; overrides the URL's.
  std::string password;
  uint32_t connect_timeout_ms = 2000;  // 1..600000
  uint32_t command_timeout_ms = 2000;  // 1..600000; bounds every round trip
  // Every key starts with it, so replicas of different deployments can share a server.
  // 1..128 printable ASCII bytes, no spaces.
  std::string prefix = "tandem:";
};

// Where and how to connect, parsed from RedisOptions::url.
struct RedisEndpoint {
  std::string host;       // TCP: a name or an address (IPv6 without brackets); "" for a socket
  uint16_t port = 6379;   // TCP only
  std::string unix_path;  // a Unix socket's path; "" for TCP
  std::string username;   // "" for the default user (AUTH <password>)
  std::string password;   // "" for no AUTH
  int db = 0;             // SELECTed after connecting; 0..1000000
};

// Parses a Redis URL. kInvalidArgument naming what is wrong (scheme, host, port, database,
// escape); the URL is echoed with its password replaced by "***".
Result<RedisEndpoint> parse_redis_url(std::string_view url);

// Checks every option (the URL as parse_redis_url does, the timeouts and the prefix) and
// returns the endpoint, with `options.password` in place of the URL's when it is set.
Result<RedisEndpoint> check_redis_options(const RedisOptions& options);

// One reply, converted from hiredis's into a plain value. Error replies never appear here:
// they become Errors.
struct RedisReply {
  enum class Type {
    kNil,      // a missing key or field
    kInteger,  // `integer`
    kString,   // a bulk string in `text`, binary-safe
    kArray,    // `elements`
    kStatus,   // a status line such as "OK" or "PONG", in `text`
  };

  Type type = Type::kNil;
  int64_t integer = 0;
  std::string text;
  std::vector<RedisReply> elements;

  // A bulk string holding exactly a decimal int64 (how scripts return numbers exactly), or
  // nullopt for anything else.
  std::optional<int64_t> as_int64() const;

  bool is_nil() const { return type == Type::kNil; }
  bool is_string() const { return type == Type::kString; }
  bool is_integer() const { return type == Type::kInteger; }
  bool is_array() const { return type == Type::kArray; }
  bool is_status() const { return type == Type::kStatus; }
};

// A Lua script run with EVALSHA. `name` identifies it in error messages in place of its
// arguments.
struct RedisScript {
  std::string name;
  std::string source;
};

// A Lua prelude for scripts that compare int64 values (times, keys): int64_cmp(a, b) returns
// -1, 0 or 1 for two canonical decimal strings (as std::to_string writes them), exactly. Lua's
// numbers are doubles, which cannot tell 2^63-1 from 2^63-2; its string comparison follows the
// server's locale. Scripts put it before their body.
inline constexpr std::string_view kLuaInt64Compare = R"lua(
local function int64_cmp(a, b)
  if a == b then
    return 0
  end
  local a_negative = string.byte(a, 1) == 45
  if a_negative ~= (string.byte(b, 1) == 45) then
    return a_negative and -1 or 1
  end
  local order = 0
  if #a ~= #b then
    order = #a < #b and -1 or 1
  else
    for i = 1, #a do
      local x, y = string.byte(a, i), string.byte(b, i)
      if x ~= y then
        order = x < y and -1 or 1
        break
      end
    end
  end
  if a_negative then
    return -order
  end
  return order
end
)lua";

struct RedisContextFree {
  void operator()(redisContext* context) const;
};
struct RedisReplyFree {
  void operator()(redisReply* reply) const;
};
using RedisContextPtr = std::unique_ptr<redisContext, RedisContextFree>;
using RedisReplyPtr = std::unique_ptr<redisReply, RedisReplyFree>;

// Why calls are refused: when the outage began and what the failing call reported.
struct RedisOutage {
  int64_t since_unix_ms = 0;
  std::string reason;
};

class RedisClient {
 public:
  // Checks the options, connects, sends AUTH when there is a password, SELECTs the database
  // and PINGs. kInvalidArgument for bad options or a refused password; kBusy when the server
  // cannot be reached within connect_timeout_ms (the message names the address, never the
  // password).
  static Result<std::unique_ptr<RedisClient>> connect(const RedisOptions& options);

  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;
  ~RedisClient();

  // Runs one command, e.g. {"HGET", key, field}; arguments are binary-safe. When the server
  // had closed the connection (a restart, an idle timeout) the client reconnects and sends
  // the command once more; a timeout is not retried, since the server may have run the
  // command, and the next call reconnects instead. Each socket read or write waits at most
  // command_timeout_ms. Errors: kInvalidArgument for an empty
  // argv; a Redis error reply as an Error "redis <COMMAND> failed: <reply>" (kBusy for
  // BUSY/LOADING/OOM/READONLY/TRYAGAIN/MASTERDOWN, kInvalidArgument for NOAUTH/WRONGPASS,
  // kInternal otherwise); kBusy for a lost connection or a reply slower than
  // command_timeout_ms.
  Result<RedisReply> command(const std::vector<std::string>& argv);

  // Runs `script` with EVALSHA, loading it (SCRIPT LOAD) on first use and again when the
  // server answers NOSCRIPT (after a restart or SCRIPT FLUSH). Errors as command(), naming the
  // script.
  Result<RedisReply> eval(const RedisScript& script, const std::vector<std::string>& keys,
                          const std::vector<std::string>& args);

  // False during an outage: calls fail at once without being sent.
  bool reachable() const { return !down_.load(std::memory_order_acquire); }
  // The current outage, or nullopt while the server is reachable.
  std::optional<RedisOutage> outage() const;
  // Connects afresh (AUTH, SELECT, PING), whatever the outage state, and ends an outage when
  // that succeeds; a failure to reach the server starts or continues one. It waits up to the
  // connect and command timeouts, so call it from a thread that may wait, while an outage
  // lasts (on a healthy client it only replaces a working connection).
  Status probe();
  // Calls refused without being sent because of an outage, since the client was made.
  uint64_t refused_calls() const { return refused_.load(std::memory_order_relaxed); }

  // The key prefix every store class puts before its keys.
  const std::string& prefix() const { return options_.prefix; }
  // prefix() + suffix.
  std::string key(std::string_view suffix) const;
  // The server's address without credentials ("redis://127.0.0.1:6379/0"), for logs.
  const std::string& address() const { return address_; }

 private:
  RedisClient(RedisOptions options, RedisEndpoint endpoint);

  // Opens a fresh connection (AUTH, SELECT, PING), replacing the current one. Holds mutex_.
  Status connect_locked();
  // One round trip, connecting first when there is no connection, and once more when the
  // server had closed it. The reply may be an error reply. `what` names the command in
  // errors. Holds mutex_.
  Result<RedisReplyPtr> roundtrip_locked(const std::vector<std::string_view>& argv,
                                         std::string_view what);
  // One round trip on the current connection (which must exist); drops the connection on
  // failure and sets `dropped` when the server had closed it. Holds mutex_.
  Result<RedisReplyPtr> attempt_locked(const std::vector<std::string_view>& argv,
                                       std::string_view what, bool* dropped);
  // The SHA1 of `script` on the server, loading it when not known or `reload`. Holds mutex_.
  Result<std::string> script_sha_locked(const RedisScript& script, bool reload);
  // The error a call named `what` gets during an outage (counted in refused_), or nullopt
  // when the server is reachable.
  std::optional<Error> refuse_while_down(std::string_view what);
  // Starts an outage (or keeps the one that runs) when `error` means the server cannot be
  // reached.
  void note_failure(const Error& error);

  const RedisOptions options_;
  const RedisEndpoint endpoint_;
  const std::string address_;
  std::mutex mutex_;
  RedisContextPtr context_;                                   // guarded by mutex_; null: none
  std::unordered_map<std::string, std::string> script_shas_;  // name -> SHA1, guarded by mutex_
  std::atomic<bool> down_{false};
  std::atomic<uint64_t> refused_{0};
  mutable std::mutex outage_mutex_;  // taken alone, never while waiting for the server
  RedisOutage outage_;               // guarded by outage_mutex_; meaningful while down_
};

}  // namespace tandem::store
