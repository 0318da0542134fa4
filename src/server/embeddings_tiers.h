#pragma once
// Which tier answers POST /v1/embeddings, and the answer. `tandem` and the edge model's name are
// the edge model's vectors (Engine::embed): nothing leaves the device. A name an upstream maps in
// `embeddings_models` goes to that upstream (its OpenAI /embeddings), the upstreams that map it
// tried in configured order — unless the input may not leave the device (the privacy rule chat
// requests follow: a detector's finding, opaque content under edge_only, X-Tandem-Privacy:
// local-only, a local-only key). Such a request is refused, not answered by the edge: the
// edge's vectors come from another model, in another space (often of another length), and would
// silently corrupt an index built from the cloud model's. Every body sent passes the egress
// guard, like any other (upstream/egress.h).
//
// Transport-free: the HTTP session parses the body, authorises the model, reads the headers
// into hints and writes what comes back. Thread-safety: as Gateway::execute, one request per
// call on its own strand; the edge's vectors are computed off the I/O threads (the edge
// workers and the engine's own thread).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/cancel.h"
#include "net/asio.h"
#include "routing/policy.h"
#include "server/embeddings_api.h"
#include "server/gateway.h"

namespace tandem::server {

// A response to write: status, body, and the tier for X-Tandem-Tier ("" when none answered).
struct EmbeddingsAnswer {
  int status = 200;
  nlohmann::json body;
  std::string tier;
  std::optional<int> retry_after_seconds;
};

// Answers one embeddings request. `cancel` ends a cloud request (client gone, request timeout,
// shutdown). Errors come back as answers in OpenAI's error shape (with the decision record as
// `tandem` once a cloud model was chosen); nothing here throws for anything a client or an
// upstream sends.
net::awaitable<EmbeddingsAnswer> answer_embeddings(Gateway& gateway, EmbeddingsRequest request,
                                                   routing::RequestHints hints,
                                                   CancelSignal& cancel);

// Whether some upstream maps `model` in embeddings_models.
bool is_cloud_embeddings_model(const Gateway& gateway, const std::string& model);

}  // namespace tandem::server
