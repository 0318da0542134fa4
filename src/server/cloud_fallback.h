#pragma once
// The cloud tier's one fallback policy across upstreams, for every caller: a streamed or whole
// answer (Gateway::run_cloud), the whole answers the patterns and operations ask for
// (Gateway::cloud_answer: an escalation, a verification, a continuation, a canary), and
// embeddings (embeddings_tiers.cpp).
//
// The upstreams that serve the model are tried in their configured order. One that is offline,
// or cannot run the request (`cannot_run`), is passed over and named in the record's reasons.
// A failure moves on to the next upstream, recorded as a fallback, unless the next would fare
// no better or the move is no longer possible:
//   - the egress guard kept the bytes on the device (every upstream gets the same bytes);
//   - the upstream refused the request itself (a 4xx another would repeat): relayed with the
//     upstream's own status;
//   - the client went away;
//   - part of this answer already reached the client.
// The errors: no upstream serves the model (503 cloud_unavailable: nothing was asked), every
// upstream failed (502 cloud_unavailable), a failure after the client got part of the answer
// (502 upstream_error).
//
// Thread-safety: runs on the request's strand, as the attempts it makes.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "net/asio.h"
#include "server/api_error.h"
#include "upstream/upstream.h"

namespace tandem::server {

struct DecisionRecord;  // server/gateway.h

// One upstream's try: its failure (nullopt: it answered), and whether this try had already
// sent part of the answer to the client (then no other upstream may take over).
struct CloudAttempt {
  std::optional<upstream::UpstreamFailure> failure;
  bool reached_client = false;
};
using CloudTry = std::function<net::awaitable<CloudAttempt>(upstream::Upstream&)>;
// Why the loop passes an upstream by: what the error lists, and the record's reason.
struct CloudSkip {
  std::string problem;
  std::string reason;
};
// Why an online upstream cannot run this request, or nullopt when it can.
using CloudCannotRun = std::function<std::optional<CloudSkip>(const upstream::Upstream&)>;

// What a request asks an upstream for: chat (and completions) or embeddings.
enum class CloudService { kChat, kEmbeddings };

// The upstreams that serve `model` for `service`, in their configured order.
std::vector<upstream::Upstream*> upstreams_serving(
    const std::vector<std::unique_ptr<upstream::Upstream>>& upstreams, const std::string& model,
    CloudService service);

// Tries `candidates` in order with `attempt` until one answers: returns that upstream, or the
// error that ends the cloud tier. `what` names the request in errors ("'gpt-4o'", "embeddings
// of 'text-embedding-3-small'"). Marks `record.data_left_device` when a try sent anything.
net::awaitable<std::variant<upstream::Upstream*, ApiError>> try_cloud_upstreams(
    const std::vector<upstream::Upstream*>& candidates, const std::string& what,
    DecisionRecord& record, const CloudTry& attempt, const CloudCannotRun& cannot_run);

}  // namespace tandem::server
