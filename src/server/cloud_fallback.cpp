#include "server/cloud_fallback.h"

#include "server/gateway.h"
#include "server/gateway_util.h"

namespace tandem::server {
namespace {

// The upstream refused the request itself: the client hears the upstream's status and words.
// A 400 is the request's own fault (the edge would refuse it too); another refusal (a 404 or
// 422: the upstream's model or its limits) leaves the edge free to try.
ApiError refusal_of(const upstream::HttpFailure& http) {
  ApiError e = invalid_request(http.message);
  e.kind = ErrorKind::kUpstreamRefused;
  e.upstream_status = http.status;
  if (http.status != 400) {
    e.origin = ErrorOrigin::kCloud;
  }
  return e;
}

}  // namespace

std::vector<upstream::Upstream*> upstreams_serving(
    const std::vector<std::unique_ptr<upstream::Upstream>>& upstreams, const std::string& model,
    CloudService service) {
  std::vector<upstream::Upstream*> candidates;
  for (const auto& u : upstreams) {
    const bool serves =
        service == CloudService::kChat ? u->serves(model) : u->serves_embeddings(model);
    if (serves) {
      candidates.push_back(u.get());
    }
  }
  return candidates;
}

net::awaitable<std::variant<upstream::Upstream*, ApiError>> try_cloud_upstreams(
    const std::vector<upstream::Upstream*>& candidates, const std::string& what,
    DecisionRecord& record, const CloudTry& attempt, const CloudCannotRun& cannot_run) {
  if (candidates.empty()) {
    co_return unavailable("no cloud upstream serves " + what, "cloud_unavailable",
                          ErrorOrigin::kCloud);
  }
  std::vector<std::string> problems;
  for (size_t i = 0; i < candidates.size(); ++i) {
    upstream::Upstream& u = *candidates[i];
    std::optional<CloudSkip> skipped;
    if (!u.online()) {
      skipped = CloudSkip{u.name() + " is offline (" + u.status().last_error + ")",
                          u.name() + ": offline"};
    } else if (cannot_run) {
      skipped = cannot_run(u);
    }
    if (skipped) {
      problems.push_back(skipped->problem);
      record.reasons.push_back("skipped " + skipped->reason);
      continue;
    }
    const CloudAttempt tried = co_await attempt(u);
    const auto& failure = tried.failure;
    if (failure && failure->refused) {
      co_return egress_refused(*failure->refused);  // the next would be refused the same bytes
    }
    // Something was sent unless no attempt was made (an open circuit).
    record.data_left_device = record.data_left_device || !failure || failure->attempts > 0;
    if (!failure) {
      co_return &u;
    }
    const upstream::HttpFailure& http = failure->http;
    if (http.kind == upstream::HttpFailure::Kind::kCancelled) {
      co_return client_gone();
    }
    if (failure->delivered || tried.reached_client) {
      co_return upstream_failed(http.message, "upstream_error");
    }
    if (failure->client_error) {
      co_return refusal_of(http);
    }
    problems.push_back(http.message);
    if (i + 1 < candidates.size()) {
      record.fallbacks.push_back(
          {"cloud:" + u.name(), "cloud:" + candidates[i + 1]->name(), http.message});
    }
  }
  co_return upstream_failed("every cloud upstream for " + what + " failed: " + join(problems),
                            "cloud_unavailable");
}

}  // namespace tandem::server
