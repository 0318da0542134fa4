#pragma once
// Who may do what at the gateway (docs/SECURITY.md): API keys checked by their sha256 in
// constant time, the three roles (a client, a reviewer, an admin), the paths served without a
// key, and the bounds one request may not exceed. Pure functions over the configuration and
// the request's headers; the HTTP layer turns their refusals into responses.

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "config/config.h"
#include "server/api_error.h"
#include "server/openai_request.h"

namespace tandem::server {

// The key a request presented; null when the gateway has no keys or the path is public (then
// every role check passes: the operator chose to serve it to anyone).
using Caller = const config::ClientKey*;

// Checks `Authorization: Bearer <key>` against every configured key. Returns the caller or a
// 401 that says what is missing, never which part of a key was wrong.
std::variant<Caller, ApiError> authenticate(const config::ServerConfig& server,
                                            std::string_view path, std::string_view authorization);

// 403 when the key may not use `model` (server.api_keys[].models).
std::optional<ApiError> refuse_model(Caller caller, const std::string& model);
// 403 unless the key is an admin's (`what` names the endpoint in the message).
std::optional<ApiError> refuse_unless_admin(Caller caller, std::string_view what);
// 403 unless the key is a reviewer's or an admin's.
std::optional<ApiError> refuse_unless_reviewer(Caller caller);

// 400 when a completion request exceeds server.limits (messages, max_tokens), naming the
// field and the limit.
std::optional<ApiError> refuse_over_limits(const CompletionRequest& request,
                                           const config::RequestLimits& limits);

// Counts the streamed responses in progress per client (the key's name, or the peer address
// for anonymous callers) and refuses one more than server.limits.max_streams_per_key with a
// 429. Thread-safe.
class StreamLimiter {
 public:
  explicit StreamLimiter(uint32_t max_per_client) : max_per_client_(max_per_client) {}

  // Holds one stream slot until destroyed.
  class Slot {
   public:
    Slot(StreamLimiter* owner, std::string client) : owner_(owner), client_(std::move(client)) {}
    Slot(Slot&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)), client_(std::move(other.client_)) {}
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

   private:
    StreamLimiter* owner_;
    std::string client_;
  };

  std::variant<Slot, ApiError> acquire(const std::string& client);
  uint32_t in_use(const std::string& client) const;

 private:
  void release(const std::string& client);

  const uint32_t max_per_client_;
  mutable std::mutex mutex_;
  std::map<std::string, uint32_t> streams_;  // guarded by mutex_; entries at 0 are erased
};

}  // namespace tandem::server
