#include "server/access.h"

#include <algorithm>

#include <openssl/crypto.h>

namespace tandem::server {
namespace {

ApiError refusal(ErrorKind kind, std::string message, std::string code) {
  return make_api_error(kind, ErrorOrigin::kClient, std::move(message), std::move(code));
}

ApiError over_limit(const std::string& message, const std::string& param) {
  return invalid_request(message, param, "limit_exceeded");
}

}  // namespace

std::variant<Caller, ApiError> authenticate(const config::ServerConfig& server,
                                            std::string_view path, std::string_view authorization) {
  if (server.api_keys.empty() || config::is_public_path(server.auth, path)) {
    return static_cast<Caller>(nullptr);
  }
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) {
    return refusal(ErrorKind::kUnauthenticated,
                   "missing API key: send 'Authorization: Bearer <key>'", "invalid_api_key");
  }
  const std::string presented = config::sha256_hex(authorization.substr(kBearer.size()));
  Caller match = nullptr;
  for (const auto& key : server.api_keys) {
    // No early exit: the time taken does not say which key, or how much of it, matched.
    if (CRYPTO_memcmp(presented.data(), key.key_sha256.data(), presented.size()) == 0) {
      match = &key;
    }
  }
  if (match == nullptr) {
    return refusal(ErrorKind::kUnauthenticated, "invalid API key", "invalid_api_key");
  }
  return match;
}

std::optional<ApiError> refuse_model(Caller caller, const std::string& model) {
  if (caller == nullptr || caller->models.empty() ||
      std::find(caller->models.begin(), caller->models.end(), model) != caller->models.end()) {
    return std::nullopt;
  }
  return refusal(ErrorKind::kForbidden,
                 "API key '" + caller->name + "' may not use model '" + model + "'",
                 "model_not_allowed");
}

std::optional<ApiError> refuse_unless_admin(Caller caller, std::string_view what) {
  if (caller == nullptr || caller->admin) {
    return std::nullopt;
  }
  return refusal(ErrorKind::kForbidden,
                 "API key '" + caller->name + "' is not an admin's: " + std::string(what) +
                     " is for operators (server.api_keys[].admin: true)",
                 "not_an_admin");
}

std::optional<ApiError> refuse_unless_reviewer(Caller caller) {
  if (caller == nullptr || caller->reviewer || caller->admin) {
    return std::nullopt;
  }
  return refusal(ErrorKind::kForbidden,
                 "API key '" + caller->name +
                     "' is not a reviewer's (server.api_keys[].reviewer or admin: true)",
                 "not_a_reviewer");
}

std::optional<ApiError> refuse_over_limits(const CompletionRequest& request,
                                           const config::RequestLimits& limits) {
  if (request.messages.size() > limits.max_messages) {
    return over_limit("the request has " + std::to_string(request.messages.size()) +
                          " messages; this gateway accepts at most " +
                          std::to_string(limits.max_messages) + " (server.limits.max_messages)",
                      "messages");
  }
  if (request.sampling.max_tokens > 0 &&
      static_cast<uint32_t>(request.sampling.max_tokens) > limits.max_tokens) {
    return over_limit("max_tokens is " + std::to_string(request.sampling.max_tokens) +
                          "; this gateway allows at most " + std::to_string(limits.max_tokens) +
                          " (server.limits.max_tokens)",
                      "max_tokens");
  }
  return std::nullopt;
}

StreamLimiter::Slot::~Slot() {
  if (owner_ != nullptr) {
    owner_->release(client_);
  }
}

std::variant<StreamLimiter::Slot, ApiError> StreamLimiter::acquire(const std::string& client) {
  std::lock_guard lock(mutex_);
  uint32_t& streams = streams_[client];
  if (streams >= max_per_client_) {
    if (streams == 0) {
      streams_.erase(client);
    }
    ApiError e = make_api_error(ErrorKind::kRateLimited, ErrorOrigin::kClient,
                                std::to_string(max_per_client_) +
                                    " streamed responses of this client are already in progress "
                                    "(server.limits.max_streams_per_key); wait for one to finish",
                                "too_many_streams");
    e.retryable = true;
    e.retry_after_seconds = 1;
    return e;
  }
  ++streams;
  return Slot(this, client);
}

uint32_t StreamLimiter::in_use(const std::string& client) const {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(client);
  return it == streams_.end() ? 0 : it->second;
}

void StreamLimiter::release(const std::string& client) {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(client);
  if (it != streams_.end() && --it->second == 0) {
    streams_.erase(it);
  }
}

}  // namespace tandem::server
