#pragma once
// The one door out of the device. Every body Tandem sends to an upstream is a GuardedBody, and
// only an EgressGuard makes one, after it has inspected those exact bytes: the HTTP client
// (http_client.h) takes nothing else, so no code path — answers, verifications, continuations,
// shadow and canary queries, retries, fallbacks, health probes, whatever is added later — can
// reach the network with bytes the guard did not see.
//
// The guard in production (server/egress_guard.h) scans every field of the JSON with the privacy
// detectors and records the audit row before it lets the bytes go.

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "net/asio.h"

namespace tandem::upstream {

// Why and for whom a body is about to leave.
struct EgressSend {
  // "answer", "verify", "continue", "shadow", "canary", "embeddings" or "health".
  std::string purpose = "answer";
  std::string request_id;  // the client's response id; "" for canary queries and probes
  std::string client;      // API key name, X-Tandem-Client or `user`; "" anonymous
  // false: the routing decision keeps this request on the device, so nothing of it may leave.
  bool may_leave = true;
  // Set by the Upstream that sends: the upstream's name and the model name sent to it.
  std::string upstream;
  std::string model;
};

// Why the guard kept a body on the device.
struct EgressRefusal {
  // "local_only" (the request may not leave), "private_data" (a detector found something),
  // "opaque_content" (content the detectors cannot read, under a policy that keeps it home),
  // "unreadable_body" (not JSON: it cannot be scanned) or "audit_unavailable" (the audit row
  // could not be stored first, with operations.audit.required).
  std::string code;
  std::string message;  // names detectors and fields, never a value
};

// Bytes the guard let through. Immutable: what was inspected is what is sent.
class GuardedBody {
 public:
  const std::string& bytes() const { return bytes_; }

 private:
  friend class EgressGuard;
  explicit GuardedBody(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string bytes_;
};

class EgressGuard {
 public:
  virtual ~EgressGuard() = default;

  // Inspects `bytes`, to be sent for `send`; on success they come back as the body the network
  // may carry. Awaited on the sending coroutine's executor.
  net::awaitable<std::variant<GuardedBody, EgressRefusal>> admit(std::string bytes,
                                                                 const EgressSend& send);

 protected:
  // nullopt: the bytes may leave, and whatever must be recorded of them has been.
  virtual net::awaitable<std::optional<EgressRefusal>> inspect(const std::string& bytes,
                                                               const EgressSend& send) = 0;
};

}  // namespace tandem::upstream
