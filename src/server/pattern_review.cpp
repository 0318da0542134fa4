// The human tier: the query enters the review queue and the client gets a ticket.

#include "common/log.h"
#include "net/offload.h"
#include "server/gateway_util.h"
#include "server/pattern_steps.h"
#include "server/patterns.h"
#include "server/responses.h"

namespace tandem::server {

using nlohmann::json;
using upstream::ApiKind;
using namespace pattern_steps;

net::awaitable<std::optional<ApiError>> run_review(Gateway& gateway, Gateway::Run& run,
                                                   const std::string& reason,
                                                   const std::string& draft,
                                                   const std::string& draft_tier) {
  const CompletionRequest& request = run.request;
  store::NewTicket ticket;
  if (run.record.routing) {
    ticket.client = run.record.routing->signals.hints.client;  // "" when no client was named
  }
  ticket.model = request.model;
  ticket.request_json = dump(request.cloud_body);
  if (request.kind == ApiKind::kChat) {
    for (const auto& m : request.messages) {
      if (m.role == "user") {
        ticket.prompt_text = m.content;
      }
    }
  } else {
    ticket.prompt_text = request.prompt;
  }
  ticket.reason = reason;
  ticket.decision_json = dump(run.record.to_json());
  ticket.draft_answer = draft;
  ticket.draft_tier = draft_tier;
  auto created = co_await net::run_on(gateway.store_workers(), [&gateway, &ticket] {
    return gateway.reviews().create(ticket, unix_ms());
  });
  if (!created) {
    log_event(LogLevel::kError, "review", "ticket_not_stored",
              {{"message", created.error().message}});
    co_return make_api_error(
        ErrorKind::kUnavailable, ErrorOrigin::kGateway,
        "the query needs a human reviewer but the review queue is unavailable: " +
            created.error().message,
        "review_unavailable");
  }
  const std::string& id = created->id;
  log_event(LogLevel::kInfo, "review", "ticket_created", {{"ticket", id}, {"reason", reason}});
  ReviewPart& review = run.record.review.emplace();
  review.ticket = id;
  review.status = "pending_review";
  review.reason = reason;
  review.poll = "/v1/tandem/reviews/" + id;
  if (run.started && !co_await revise(run, run.record.tier, "human", reason)) {
    co_return client_gone();
  }
  run.record.add_tier("human");
  if (!co_await gateway.start_answer(run, "human")) {
    co_return client_gone();
  }
  run.record.tier = "human";
  co_await finish(run, "pending_review", TierUsage{});
  co_return std::nullopt;
}

}  // namespace tandem::server
