#include "common/log.h"
#include "net/offload.h"
#include "server/gateway_util.h"
#include "server/http_state.h"
#include "server/responses_native.h"

namespace tandem::server {

using nlohmann::json;
using upstream::ApiKind;
namespace asio = net::asio;
namespace beast = net::beast;
namespace http = net::http;

namespace {

// A stored response that cannot be read (or kept) is the store's failure, not the client's.
ApiError response_store_error(const Error& error) {
  ApiError api = api_error_from(make_error(ErrorCode::kBusy, "response store: " + error.message));
  api.code = "store_unavailable";
  return api;
}

ApiError response_not_found(const std::string& id, const std::string& param) {
  ApiError error = invalid_request(
      "response '" + id +
          "' was not found: it expired or was deleted, was not stored (store: false, or the "
          "routing kept it on the device because it holds private data), or another gateway "
          "answered it; send the conversation's items instead",
      param, "response_not_found");
  error.kind = ErrorKind::kNotFound;
  return error;
}

}  // namespace

net::awaitable<std::optional<Response>> HttpServer::State::respond(
    beast::tcp_stream& stream, const http::request<http::string_body>& req, Caller caller,
    bool keep_alive, boost::system::error_code& ec) {
  const ServedNatively served_natively = [this](const std::string& model) {
    return gateway->serves_natively(model);
  };
  auto parsed = parse_responses_request(req.body(), server.responses.store, served_natively);
  if (auto* error = std::get_if<ApiError>(&parsed)) {
    co_return error_response(*error, keep_alive);
  }
  ResponsesRequest responses = std::move(std::get<ResponsesRequest>(parsed));
  if (!responses.previous_response_id.empty()) {
    const std::string& id = responses.previous_response_id;
    auto stored = co_await net::run_on(gateway->store_workers(),
                                       [&] { return response_store.get(id, unix_ms()); });
    if (!stored) {
      co_return error_response(response_store_error(stored.error()), keep_alive);
    }
    if (!stored->has_value()) {
      co_return error_response(response_not_found(id, "previous_response_id"), keep_alive);
    }
    json history = json::parse((*stored)->conversation, nullptr, false);
    if (history.is_array()) {  // written by this gateway: unreadable only if edited by hand
      responses.history = std::move(history);
    }
  }
  auto chat = parse_completion_request(chat_completions_body(responses), ApiKind::kChat,
                                       static_cast<int>(gateway->config().edge.default_max_tokens));
  if (auto* error = std::get_if<ApiError>(&chat)) {
    co_return error_response(*error, keep_alive);
  }
  CompletionRequest& request = std::get<CompletionRequest>(chat);
  // What an upstream that speaks the Responses API receives instead of the translation; the
  // fields only it honours keep the request from the edge and from chat upstreams.
  request.responses_body = native_responses_body(responses);
  request.needs_native = !responses.native_only.empty();
  for (const std::string& field : responses.native_only) {
    request.cloud_only_fields.push_back(field);
  }
  auto answered =
      co_await answer(stream, req, std::move(request), caller, keep_alive, ec, &responses);
  co_return answered;
}

net::awaitable<std::optional<Response>> HttpServer::State::answer_responses(
    beast::tcp_stream& stream, CompletionRequest request, RequestContext context,
    const ResponsesRequest& responses, CancelSignal& cancel, bool keep_alive,
    boost::system::error_code& ec) {
  const ResponseHead head = new_response_head(responses.model);
  context.request_id = head.id;
  std::exception_ptr failure;
  std::optional<Response> res;
  std::optional<FinishedResponse> finished;
  if (request.stream) {
    const SseWriter writer(stream, keep_alive, std::chrono::milliseconds(server.write_timeout_ms));
    ResponsesStreamSink sink(writer, head, responses);
    try {
      co_await gateway->execute(std::move(request), std::move(context), sink, cancel);
    } catch (...) {
      failure = std::current_exception();
    }
    res = co_await settle_stream(sink, failure, head.id, keep_alive, ec);
    finished = sink.finished();
  } else {
    ResponsesBufferedSink sink(head, responses);
    try {
      co_await gateway->execute(std::move(request), std::move(context), sink, cancel);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure && !sink.ended()) {
      res = error_response(request_failed(failure, head.id), keep_alive);
    } else if (sink.error()) {
      res = error_response(*sink.error(), sink.error_record(), keep_alive);
    } else if (sink.finished()) {
      res = json_response(200, sink.finished()->response, keep_alive);
      res->set("X-Tandem-Tier", sink.tier());
    }
    finished = sink.finished();
  }
  if (finished) {
    co_await keep_response(responses, *finished);
  }
  co_return res;
}

net::awaitable<void> HttpServer::State::keep_response(const ResponsesRequest& request,
                                                      const FinishedResponse& finished) {
  if (!request.store || finished.private_data) {
    co_return;
  }
  store::StoredResponse stored;
  stored.id = finished.response["id"].get<std::string>();
  json response = finished.response;
  response.erase("tandem");  // the routing record belongs to the request that was answered
  stored.response = dump(response);
  stored.conversation =
      dump(finished.native ? conversation_after_native(request, finished.response["output"])
                           : conversation_after(request, finished.answer));
  const Status kept = co_await net::run_on(gateway->store_workers(),
                                           [&] { return response_store.put(stored, unix_ms()); });
  if (!kept) {
    log_event(LogLevel::kWarn, "server", "response_not_stored",
              {{"response_id", stored.id}, {"message", kept.error().message}});
  }
}

net::awaitable<Response> HttpServer::State::stored_response(http::verb method,
                                                            const std::string& id,
                                                            bool keep_alive) {
  if (method == http::verb::delete_) {
    auto removed =
        co_await net::run_on(gateway->store_workers(), [&] { return response_store.remove(id); });
    if (!removed) {
      co_return error_response(response_store_error(removed.error()), keep_alive);
    }
    if (!*removed) {
      co_return error_response(response_not_found(id, "id"), keep_alive);
    }
    co_return json_response(200, {{"id", id}, {"object", "response"}, {"deleted", true}},
                            keep_alive);
  }
  auto stored = co_await net::run_on(gateway->store_workers(),
                                     [&] { return response_store.get(id, unix_ms()); });
  if (!stored) {
    co_return error_response(response_store_error(stored.error()), keep_alive);
  }
  if (!stored->has_value()) {
    co_return error_response(response_not_found(id, "id"), keep_alive);
  }
  co_return json_response(200, json::parse((*stored)->response, nullptr, false), keep_alive);
}

}  // namespace tandem::server
