#include "server/tandem_api.h"

#include <charconv>
#include <chrono>

#include "server/gateway_util.h"
#include "server/openai_request.h"
#include "server/request_json.h"
#include "server/responses.h"

namespace tandem::server {
namespace {

using nlohmann::json;

// The review endpoints' store errors: a store that cannot be reached (kBusy: a Redis outage,
// a locked database) is named as such rather than as a busy engine.
ApiResponse from_error(const Error& error) {
  ApiError api = api_error_from(error);
  if (error.code == ErrorCode::kBusy) {
    api.code = "store_unavailable";
  }
  return error_response_body(api);
}

}  // namespace

ApiResponse error_response_body(const ApiError& error) {
  return {http_status(error), error_body(error)};
}

ApiResponse route_endpoint(const Gateway& gateway, const std::string& body,
                           const routing::RequestHints& hints, bool detailed) {
  auto request = parse_route_request(body, kRoutedModel);
  if (auto* error = std::get_if<ApiError>(&request)) {
    return error_response_body(*error);
  }
  RequestContext context;
  context.hints = hints;
  return {200, gateway.explain_route(std::get<CompletionRequest>(request), context, detailed)};
}

json ticket_json(const store::ReviewTicket& t) {
  json out = {
      {"id", t.id},
      {"object", "tandem.review_ticket"},
      {"status", t.status},
      {"created_at_ms", t.created_at_ms},
      {"updated_at_ms", t.updated_at_ms},
      {"client", t.client},
      {"model", t.model},
      {"prompt", t.prompt_text},
      {"reason", t.reason},
      {"draft", t.draft_answer.empty() ? json(nullptr)
                                       : json{{"tier", t.draft_tier}, {"answer", t.draft_answer}}},
      {"answer", t.status == "answered" ? json(t.answer) : json(nullptr)},
      {"note", t.status == "rejected" ? json(t.answer) : json(nullptr)},
      {"reviewer", t.reviewer.empty() ? json(nullptr) : json(t.reviewer)}};
  if (t.status == "answered") {
    // The answer in the shape the client asked for originally, ready to use.
    const json request = json::parse(t.request_json, nullptr, false);
    const bool chat = request.is_object() && request.contains("messages");
    const auto kind = chat ? upstream::ApiKind::kChat : upstream::ApiKind::kCompletion;
    ResponseIds ids = new_response_ids(kind, t.model);
    ids.id = (chat ? "chatcmpl-" : "cmpl-") + t.id;
    ids.created = t.updated_at_ms / 1000;
    DecisionRecord record;
    record.tier = "human";
    record.tiers = {"human"};
    record.pattern = "review";
    record.reasons = {t.reason};
    record.review = ReviewPart{t.id, "answered", std::nullopt, std::nullopt, t.reviewer};
    const Outcome outcome{"stop", TierUsage{}};
    out["completion"] = completion_response(kind, ids, t.answer, nullptr, outcome, record);
  }
  return out;
}

ApiResponse list_reviews(Gateway& gateway, const std::string& query) {
  const std::string status = query_value(query, "status").value_or("pending");
  const std::string limit_text = query_value(query, "limit").value_or("50");
  size_t limit = 0;
  const auto [ptr, ec] =
      std::from_chars(limit_text.data(), limit_text.data() + limit_text.size(), limit);
  if (ec != std::errc() || ptr != limit_text.data() + limit_text.size()) {
    return error_response_body(invalid_request("limit must be an integer", "limit"));
  }
  if (status != "pending" && status != "answered" && status != "rejected" && status != "all") {
    return error_response_body(
        invalid_request("status must be pending, answered, rejected or all", "status"));
  }
  auto tickets = gateway.reviews().list(status == "all" ? "" : status, limit);
  if (!tickets) {
    return from_error(tickets.error());
  }
  json data = json::array();
  for (const auto& t : tickets.value()) {
    data.push_back(ticket_json(t));
  }
  return {200, {{"object", "list"}, {"data", std::move(data)}}};
}

ApiResponse get_review(Gateway& gateway, const std::string& id) {
  auto ticket = gateway.reviews().get(id);
  if (!ticket) {
    return from_error(ticket.error());
  }
  return {200, ticket_json(ticket.value())};
}

ApiResponse answer_review(Gateway& gateway, const std::string& id, const std::string& body,
                          const std::string& default_reviewer, bool reject) {
  const char* field = reject ? "note" : "answer";
  const ApiError wrong_shape = invalid_request(
      std::string("the body must be a JSON object with a string '") + field + "'", field);
  const std::variant<json, ApiError> document = parse_request_object(body, wrong_shape);
  if (const auto* error = std::get_if<ApiError>(&document)) {
    return error_response_body(*error);
  }
  const json& parsed = std::get<json>(document);
  if (!parsed.contains(field) || !parsed[field].is_string()) {
    return error_response_body(wrong_shape);
  }
  std::string reviewer = default_reviewer;
  if (parsed.contains("reviewer")) {
    if (!parsed["reviewer"].is_string()) {
      return error_response_body(invalid_request("reviewer must be a string", "reviewer"));
    }
    reviewer = parsed["reviewer"].get<std::string>();
  }
  const std::string text = parsed[field].get<std::string>();
  auto result = reject ? gateway.reviews().reject(id, text, reviewer, unix_ms())
                       : gateway.reviews().answer(id, text, reviewer, unix_ms());
  if (!result) {
    ApiError error = api_error_from(result.error());
    if (result.error().message.find("already") != std::string::npos) {
      error.kind = ErrorKind::kConflict;
      error.code = "review_already_closed";
    }
    return error_response_body(error);
  }
  if (!reject) {
    gateway.label_review(id, text);  // the edge's answer to this ticket, judged by a person
  }
  return {200, ticket_json(result.value())};
}

}  // namespace tandem::server
