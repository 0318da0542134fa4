#pragma once
// Responses of POST /v1/responses kept in the routing database, so that a later request can
// continue one (previous_response_id) or read it again (GET /v1/responses/{id}). Bounded in
// rows and expiring: a put deletes what has expired and the oldest rows beyond the bound.
// Thread-safety: every call takes the database's connection; any thread may call, and the
// gateway calls from its store workers (never an I/O thread).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "store/database.h"

namespace tandem::store {

struct StoredResponse {
  std::string id;            // "resp_…"
  std::string response;      // the Response object, JSON text
  std::string conversation;  // the chat messages a next turn continues, JSON text
};

class ResponseStore {
 public:
  ResponseStore(Database& db, uint64_t max_rows, std::chrono::hours ttl)
      : db_(db), max_rows_(max_rows), ttl_(ttl) {}

  // Keeps a response until now + ttl (replacing one with the same id).
  Status put(const StoredResponse& response, int64_t now_ms);
  // The response, or nullopt when there is none or it has expired.
  Result<std::optional<StoredResponse>> get(const std::string& id, int64_t now_ms);
  // Whether there was one to delete.
  Result<bool> remove(const std::string& id);

 private:
  Database& db_;
  uint64_t max_rows_;
  std::chrono::hours ttl_;
};

}  // namespace tandem::store
