#include "server/http_server.h"

#include <chrono>
#include <iostream>

#include <sys/socket.h>

#include "net/asio.h"
#include "net/async_queue.h"
#include "net/offload.h"
#include "net/spawn.h"
#include "net/sse.h"
#include "server/access.h"
#include "server/canary.h"
#include "server/dashboard.h"
#include "server/embeddings_api.h"
#include "server/embeddings_tiers.h"
#include "server/gateway_util.h"
#include "server/in_flight.h"
#include "server/operations_api.h"
#include "server/responses.h"
#include "server/responses_api.h"
#include "server/responses_sinks.h"
#include "server/shadow_api.h"
#include "server/sse_writer.h"
#include "server/status_api.h"
#include "server/tandem_api.h"
#include "store/response_store.h"

namespace tandem::server {

using nlohmann::json;
using upstream::ApiKind;
namespace asio = net::asio;
namespace beast = net::beast;
namespace http = net::http;
using Clock = std::chrono::steady_clock;
using Response = http::response<http::string_body>;

struct HttpServer::State : std::enable_shared_from_this<HttpServer::State> {
  std::shared_ptr<Gateway> gateway;
  const config::ServerConfig& server;
  // Asio's shutdown() is protected; ~HttpServer needs it (see there).
  struct IoContext : asio::io_context {
    using asio::io_context::shutdown;
  };
  IoContext ioc;
  net::tcp::acceptor acceptor{ioc};
  std::atomic<bool> shutting_down{false};
  InFlightRequests in_flight;  // requests being answered: shutdown cancels what is left
  std::vector<std::thread> threads;

  const config::OperationsConfig& operations;
  StreamLimiter streams;
  std::atomic<size_t> connections{0};   // client connections open now
  store::ResponseStore response_store;  // POST /v1/responses, in the routing database

  explicit State(std::shared_ptr<Gateway> g)
      : gateway(std::move(g)),
        server(gateway->config().server),
        operations(gateway->config().operations),
        streams(server.limits.max_streams_per_key),
        response_store(gateway->database(), server.responses.max_stored,
                       std::chrono::hours(server.responses.ttl_hours)) {}

  net::awaitable<void> accept_loop();
  net::awaitable<void> session(net::tcp::socket socket);
  // Answers a completion request. Streams write themselves and return nullopt; everything
  // else returns the response to write. `ec` reports a broken stream.
  net::awaitable<std::optional<Response>> complete(beast::tcp_stream& stream,
                                                   const http::request<http::string_body>& req,
                                                   const std::string& path, Caller caller,
                                                   bool keep_alive, boost::system::error_code& ec);
  // The rest of a chat, completions or Responses request once its body is a chat request:
  // limits, routing hints, the stream slot, then the gateway's answer through the API's sink.
  net::awaitable<std::optional<Response>> answer(beast::tcp_stream& stream,
                                                 const http::request<http::string_body>& req,
                                                 CompletionRequest request, Caller caller,
                                                 bool keep_alive, boost::system::error_code& ec,
                                                 const ResponsesRequest* responses);
  // POST /v1/responses: the previous response's conversation, then answer() (responses_api.h).
  net::awaitable<std::optional<Response>> respond(beast::tcp_stream& stream,
                                                  const http::request<http::string_body>& req,
                                                  Caller caller, bool keep_alive,
                                                  boost::system::error_code& ec);
  net::awaitable<std::optional<Response>> answer_responses(beast::tcp_stream& stream,
                                                           CompletionRequest request,
                                                           RequestContext context,
                                                           const ResponsesRequest& responses,
                                                           CancelSignal& cancel, bool keep_alive,
                                                           boost::system::error_code& ec);
  // GET and DELETE /v1/responses/{id}.
  net::awaitable<Response> stored_response(http::verb method, const std::string& id,
                                           bool keep_alive);
  // Keeps a finished response when the request and the routing allow (never on an I/O thread).
  net::awaitable<void> keep_response(const ResponsesRequest& request,
                                     const FinishedResponse& finished);
  // Everything after authentication: the endpoint's answer, or nullopt when it streamed.
  net::awaitable<std::optional<Response>> dispatch(beast::tcp_stream& stream,
                                                   const http::request<http::string_body>& req,
                                                   const std::string& target, Caller caller,
                                                   bool keep_alive, boost::system::error_code& ec);
  net::awaitable<void> shutdown_sequence();
  // POST /v1/embeddings: the edge model's vectors or a cloud upstream's (embeddings_tiers.h).
  net::awaitable<Response> embeddings(beast::tcp_stream& stream,
                                      const http::request<http::string_body>& req, Caller caller,
                                      bool keep_alive);
  // POST /v1/tandem/canary: runs the canary prompts now (operators), records and returns it.
  net::awaitable<Response> run_canary_now(Caller caller, bool keep_alive);
  ApiResponse tandem_endpoint(const http::request<http::string_body>& req, const std::string& path,
                              const std::string& query, Caller caller);
};

namespace {

Response json_response(int status, const json& body, bool keep_alive) {
  Response res{static_cast<http::status>(status), 11};
  res.set(http::field::content_type, "application/json");
  res.set(http::field::server, "tandem");
  res.keep_alive(keep_alive);
  res.body() = dump(body);
  res.prepare_payload();
  return res;
}

Response text_response(const std::string& body, std::string_view content_type, bool keep_alive) {
  Response res{http::status::ok, 11};
  res.set(http::field::content_type, std::string(content_type));
  res.set(http::field::server, "tandem");
  res.keep_alive(keep_alive);
  res.body() = body;
  res.prepare_payload();
  return res;
}

// The dashboard's files: same-origin only, never sniffed, never framed, never cached stale.
Response static_response(const StaticFile& file, bool keep_alive) {
  Response res = text_response(std::string(file.body), file.content_type, keep_alive);
  res.set("Content-Security-Policy",
          "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  res.set("X-Content-Type-Options", "nosniff");
  res.set(http::field::cache_control, "no-cache");
  return res;
}

Response error_response(const ApiError& error, bool keep_alive) {
  Response res = json_response(error.status, error_body(error), keep_alive);
  if (error.retry_after_seconds) {
    res.set(http::field::retry_after, std::to_string(*error.retry_after_seconds));
  }
  return res;
}

std::string_view header_of(const http::request<http::string_body>& req, http::field field) {
  const auto value = req[field];
  return {value.data(), value.size()};
}

RoutingHeaders routing_headers(const http::request<http::string_body>& req) {
  auto field = [&](const char* name) {
    const auto value = req[name];
    return std::string(value.data(), value.size());
  };
  RoutingHeaders h;
  h.privacy = field("X-Tandem-Privacy");
  h.latency_budget = field("X-Tandem-Latency-Budget-Ms");
  h.client = field("X-Tandem-Client");
  h.pattern = field("X-Tandem-Pattern");
  h.review = field("X-Tandem-Review");
  return h;
}

// `detailed` adds the last upstream error and why the edge is not loaded: words of the
// upstreams and file paths that a gateway with keys does not show on its public /health (its
// admins read them in /v1/tandem/status).
json health_body(const Gateway& gateway, bool shutting_down, bool detailed) {
  json upstreams = json::array();
  bool cloud_online = false;
  for (const auto& u : gateway.upstreams()) {
    const auto s = u->status();
    cloud_online = cloud_online || (s.online && s.circuit != upstream::CircuitState::kOpen);
    upstreams.push_back({{"name", s.name},
                         {"online", s.online},
                         {"circuit", upstream::circuit_state_name(s.circuit)},
                         {"consecutive_failures", s.consecutive_failures},
                         {"cooldown_remaining_ms", s.cooldown_remaining_ms}});
    if (detailed) {
      upstreams.back()["last_error"] = s.last_error.empty() ? json(nullptr) : json(s.last_error);
    }
  }
  const auto* engine = gateway.engine();
  json edge = {{"loaded", engine != nullptr}};
  if (engine != nullptr) {
    const auto stats = engine->stats();
    edge["model"] = gateway.edge_name();
    edge["sha256"] = engine->model().sha256;
    edge["queued"] = stats.queued;
    edge["active"] = stats.active;
  } else if (detailed) {
    edge["error"] = gateway.edge_problem();
  }
  const bool ready = !shutting_down && (engine != nullptr || cloud_online);
  return {{"status", shutting_down ? "shutting_down" : (ready ? "ok" : "unavailable")},
          {"live", true},
          {"ready", ready},
          {"edge", std::move(edge)},
          {"cloud", {{"online", cloud_online}, {"upstreams", std::move(upstreams)}}},
          // Not part of readiness: without its stores the gateway routes on defaults.
          {"store",
           {{"backend", gateway.shared().backend()},
            {"reachable", !gateway.store_outage().has_value()}}}};
}

// Writes a chat or completions stream as server-sent events.
class StreamingSink final : public ResponseSink {
 public:
  StreamingSink(beast::tcp_stream& stream, ApiKind kind, ResponseIds ids, bool include_usage,
                bool keep_alive)
      : writer_(stream, keep_alive),
        kind_(kind),
        ids_(std::move(ids)),
        include_usage_(include_usage) {}

  bool began() const { return writer_.began(); }
  bool broken() const { return writer_.broken(); }
  bool ended() const { return ended_; }

  net::awaitable<bool> begin(const DecisionRecord& record) override {
    const bool written = co_await writer_.headers(record.tier);
    co_return written;
  }

  net::awaitable<bool> piece(const Piece& piece) override {
    const std::string payload = dump(content_chunk(kind_, ids_, piece, first_));
    const bool written = co_await write_event(payload);
    co_return written;
  }

  // A named SSE event that OpenAI clients still parse as a chunk (no choices, so nothing is
  // appended), carrying the revision for clients that watch for it.
  net::awaitable<bool> revise(const Revision& revision) override {
    json chunk = usage_chunk(kind_, ids_, TierUsage{});
    chunk.erase("usage");
    chunk["tandem"] = {{"revision", revision.to_json()}};
    const std::string payload = "event: tandem.revision\n" + net::sse_event(dump(chunk));
    first_ = false;
    const bool written = co_await writer_.write(payload);
    co_return written;
  }

  net::awaitable<void> finish(const Outcome& outcome, const DecisionRecord& record) override {
    if (ended_) {
      co_return;
    }
    ended_ = true;
    json last = finish_chunk(kind_, ids_, outcome.finish_reason);
    if (include_usage_) {
      const std::string finish = dump(last);
      if (!co_await write_event(finish)) {
        co_return;
      }
      last = usage_chunk(kind_, ids_, outcome.usage);
    }
    last["tandem"] = record.to_json();
    const std::string payload = dump(last);
    if (co_await write_event(payload)) {
      co_await writer_.end(/*done_marker=*/true);
    }
  }

  net::awaitable<void> fail(const ApiError& error, const DecisionRecord& record) override {
    if (ended_) {
      co_return;
    }
    ended_ = true;
    if (!writer_.began()) {
      failed_before_start_ = error;
      record_ = record;
      co_return;
    }
    json body = error_body(error);
    body["tandem"] = record.to_json();
    const std::string payload = dump(body);
    if (co_await write_event(payload)) {
      co_await writer_.end(/*done_marker=*/true);
    }
  }

  // When the request failed before anything was sent, the session answers with a plain
  // error response instead.
  const std::optional<ApiError>& failed_before_start() const { return failed_before_start_; }
  const DecisionRecord& record() const { return record_; }

 private:
  net::awaitable<bool> write_event(const std::string& payload) {
    first_ = false;
    const bool written = co_await writer_.write(net::sse_event(payload));
    co_return written;
  }

  SseWriter writer_;
  ApiKind kind_;
  ResponseIds ids_;
  bool include_usage_;
  bool first_ = true;
  bool ended_ = false;  // finish() or fail() ran: nothing more is written
  std::optional<ApiError> failed_before_start_;
  DecisionRecord record_;
};

// Collects the answer for a non-streaming response.
class BufferedSink final : public ResponseSink {
 public:
  BufferedSink(ApiKind kind, ResponseIds ids) : kind_(kind), ids_(std::move(ids)) {}

  net::awaitable<bool> begin(const DecisionRecord&) override { co_return true; }
  net::awaitable<bool> piece(const Piece& piece) override {
    answer_.add(kind_, piece);
    co_return true;
  }
  net::awaitable<bool> revise(const Revision&) override {
    answer_ = WholeAnswer{};
    co_return true;
  }
  net::awaitable<void> finish(const Outcome& outcome, const DecisionRecord& record) override {
    if (!ended()) {
      body_ = completion_response(kind_, ids_, answer_, outcome, record);
      tier_ = record.tier;
    }
    co_return;
  }
  net::awaitable<void> fail(const ApiError& error, const DecisionRecord& record) override {
    if (!ended()) {
      error_ = error;
      record_ = record.to_json();
    }
    co_return;
  }
  bool ended() const { return error_.has_value() || !body_.is_null(); }

  Response response(bool keep_alive) const {
    if (error_) {
      Response res = error_response(*error_, keep_alive);
      json body = error_body(*error_);
      body["tandem"] = record_;
      res.body() = dump(body);
      res.prepare_payload();
      return res;
    }
    Response res = json_response(200, body_, keep_alive);
    res.set("X-Tandem-Tier", tier_);
    return res;
  }

 private:
  ApiKind kind_;
  ResponseIds ids_;
  WholeAnswer answer_;  // text, logprobs, reasoning and tool calls so far
  json body_;
  std::string tier_;
  std::optional<ApiError> error_;
  json record_;
};

// An exception that escaped an endpoint: logged with what it was, answered as a 500 that says
// only that (and under which request id, when there is one).
ApiError request_failed(const std::exception_ptr& failure, const std::string& request_id) {
  log_event(LogLevel::kError, "server", "request_failed",
            {{"request_id", request_id}, {"message", net::exception_text(failure)}});
  return internal_error(request_id.empty() ? "(none)" : request_id);
}

// Watches an idle-reading socket while a request is answered: the peer closing it (EOF or
// reset) means the client is gone, and its request is cancelled. Data (a pipelined request)
// just ends the watch; it stays in the socket for the next read.
net::awaitable<void> watch_disconnect(net::tcp::socket& socket, std::shared_ptr<bool> done,
                                      CancelSignal& cancel) {
  boost::system::error_code ec;
  co_await socket.async_wait(net::tcp::socket::wait_read,
                             asio::redirect_error(net::use_awaitable, ec));
  if (*done || ec) {
    co_return;
  }
  char probe = 0;
  const auto n = ::recv(socket.native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
    cancel.cancel();
  }
}

// Cancels a request when its client leaves or its deadline passes. However the request ends
// (an exception included), the watch and the deadline let go of `cancel` when this goes, so
// it must be destroyed before `cancel`.
class RequestWatch {
 public:
  RequestWatch(beast::tcp_stream& stream, CancelSignal& cancel,
               const asio::any_io_executor& executor, std::chrono::milliseconds timeout)
      : stream_(stream),
        done_(std::make_shared<bool>(false)),
        deadline_(std::make_shared<asio::steady_timer>(executor, timeout)) {
    asio::co_spawn(executor, watch_disconnect(stream.socket(), done_, cancel),
                   net::log_failure("server", "watch_disconnect"));
    deadline_->async_wait([&cancel, done = done_](boost::system::error_code timer_ec) {
      if (!timer_ec && !*done) {
        cancel.cancel();
      }
    });
  }
  ~RequestWatch() {
    *done_ = true;
    deadline_->cancel();
    boost::system::error_code ignored;
    stream_.socket().cancel(ignored);  // ends the disconnect watch
  }
  RequestWatch(const RequestWatch&) = delete;
  RequestWatch& operator=(const RequestWatch&) = delete;

 private:
  beast::tcp_stream& stream_;
  std::shared_ptr<bool> done_;
  std::shared_ptr<asio::steady_timer> deadline_;
};

}  // namespace

net::awaitable<std::optional<Response>> HttpServer::State::complete(
    beast::tcp_stream& stream, const http::request<http::string_body>& req, const std::string& path,
    Caller caller, bool keep_alive, boost::system::error_code& ec) {
  const ApiKind kind = path == "/v1/completions" ? ApiKind::kCompletion : ApiKind::kChat;
  auto parsed = parse_completion_request(
      req.body(), kind, static_cast<int>(gateway->config().edge.default_max_tokens));
  if (auto* error = std::get_if<ApiError>(&parsed)) {
    co_return error_response(*error, keep_alive);
  }
  auto answered = co_await answer(stream, req, std::move(std::get<CompletionRequest>(parsed)),
                                  caller, keep_alive, ec, nullptr);
  co_return answered;
}

net::awaitable<std::optional<Response>> HttpServer::State::answer(
    beast::tcp_stream& stream, const http::request<http::string_body>& req,
    CompletionRequest request, Caller caller, bool keep_alive, boost::system::error_code& ec,
    const ResponsesRequest* responses) {
  if (auto denied = refuse_model(caller, request.model)) {
    co_return error_response(*denied, keep_alive);
  }
  if (auto over = refuse_over_limits(request, server.limits)) {
    co_return error_response(*over, keep_alive);
  }
  auto hints = request_hints(routing_headers(req), caller);
  if (const ApiError* bad = std::get_if<ApiError>(&hints)) {
    co_return error_response(*bad, keep_alive);
  }
  // A stream holds an edge slot or an upstream connection for its whole length: each client
  // may hold only so many at once.
  std::optional<StreamLimiter::Slot> stream_slot;
  if (request.stream) {
    boost::system::error_code peer_ec;
    const auto peer = stream.socket().remote_endpoint(peer_ec);
    auto slot = streams.acquire(caller != nullptr ? "key:" + caller->name
                                                  : "addr:" + peer.address().to_string());
    if (const ApiError* busy = std::get_if<ApiError>(&slot)) {
      co_return error_response(*busy, keep_alive);
    }
    stream_slot.emplace(std::move(std::get<StreamLimiter::Slot>(slot)));
  }
  RequestContext context;
  context.hints = std::move(std::get<routing::RequestHints>(hints));
  if (shutting_down) {
    co_return error_response(
        api_error_from(make_error(ErrorCode::kShuttingDown, "the gateway is shutting down")),
        keep_alive);
  }

  CancelSignal cancel;
  const auto registered = in_flight.enter(cancel);
  auto executor = co_await asio::this_coro::executor;
  // The whole request, streaming included, is bounded by request_timeout_ms.
  const RequestWatch watch(stream, cancel, executor,
                           std::chrono::milliseconds(server.request_timeout_ms));

  if (responses != nullptr) {
    auto answered = co_await answer_responses(stream, std::move(request), std::move(context),
                                              *responses, cancel, keep_alive, ec);
    co_return answered;
  }
  const ApiKind kind = request.kind;
  std::optional<Response> res;
  const ResponseIds ids = new_response_ids(kind, request.model);
  context.request_id = ids.id;
  std::exception_ptr failure;  // escaped the gateway's own handling: a 500 or the stream's end
  if (request.stream) {
    StreamingSink sink(stream, kind, ids, request.include_usage, keep_alive);
    try {
      co_await gateway->execute(std::move(request), std::move(context), sink, cancel);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure && sink.began()) {
      // The stream ends with an error event; the connection is not reused (set first, so that
      // the session closes it rather than answers, should the event fail too).
      ec = asio::error::broken_pipe;
      DecisionRecord record;
      record.request_id = ids.id;
      co_await sink.fail(request_failed(failure, ids.id), record);
    } else if (failure) {
      res = error_response(request_failed(failure, ids.id), false);
    } else if (sink.failed_before_start()) {
      res = error_response(*sink.failed_before_start(), keep_alive);
      json body = error_body(*sink.failed_before_start());
      body["tandem"] = sink.record().to_json();
      res->body() = dump(body);
      res->prepare_payload();
    } else if (sink.broken()) {
      ec = asio::error::broken_pipe;
    }
  } else {
    // Also after a cancellation: a client that is gone makes the write fail, one that hit
    // request_timeout_ms gets the error.
    BufferedSink sink(kind, ids);
    try {
      co_await gateway->execute(std::move(request), std::move(context), sink, cancel);
    } catch (...) {
      failure = std::current_exception();
    }
    res = failure && !sink.ended() ? error_response(request_failed(failure, ids.id), keep_alive)
                                   : sink.response(keep_alive);
  }
  co_return res;
}

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
  error.status = 404;
  return error;
}

net::awaitable<std::optional<Response>> HttpServer::State::respond(
    beast::tcp_stream& stream, const http::request<http::string_body>& req, Caller caller,
    bool keep_alive, boost::system::error_code& ec) {
  auto parsed = parse_responses_request(req.body(), server.responses.store);
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
  auto answered = co_await answer(stream, req, std::move(std::get<CompletionRequest>(chat)), caller,
                                  keep_alive, ec, &responses);
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
    ResponsesStreamSink sink(stream, keep_alive, head, responses);
    try {
      co_await gateway->execute(std::move(request), std::move(context), sink, cancel);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure && sink.began()) {
      ec = asio::error::broken_pipe;  // the stream ends with response.failed; not reused
      DecisionRecord record;
      record.request_id = head.id;
      co_await sink.fail(request_failed(failure, head.id), record);
    } else if (failure) {
      res = error_response(request_failed(failure, head.id), false);
    } else if (sink.failed_before_start()) {
      res = error_response(*sink.failed_before_start(), keep_alive);
      json body = error_body(*sink.failed_before_start());
      body["tandem"] = sink.record().to_json();
      res->body() = dump(body);
      res->prepare_payload();
    } else if (sink.broken()) {
      ec = asio::error::broken_pipe;
    }
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
      res = error_response(*sink.error(), keep_alive);
      json body = error_body(*sink.error());
      body["tandem"] = sink.error_record();
      res->body() = dump(body);
      res->prepare_payload();
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
  stored.conversation = dump(conversation_after(request, finished.answer));
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

ApiResponse HttpServer::State::tandem_endpoint(const http::request<http::string_body>& req,
                                               const std::string& path, const std::string& query,
                                               Caller caller) {
  const bool get = req.method() == http::verb::get;
  const bool post = req.method() == http::verb::post;
  if (path == "/v1/tandem/route") {
    if (!post) {
      return error_response_body(invalid_request("use POST on /v1/tandem/route"));
    }
    auto hints = request_hints(routing_headers(req), caller);
    if (const ApiError* bad = std::get_if<ApiError>(&hints)) {
      return error_response_body(*bad);
    }
    const bool detailed = query.find("explain") != std::string::npos;
    return route_endpoint(*gateway, req.body(), std::get<routing::RequestHints>(hints), detailed);
  }
  if (path == "/v1/tandem/shadow" || path == "/v1/tandem/status" || path == "/v1/tandem/audit") {
    if (!get) {
      return error_response_body(invalid_request("use GET on " + path));
    }
    if (auto denied = refuse_unless_admin(caller, path)) {
      return error_response_body(*denied);
    }
    if (path == "/v1/tandem/shadow") {
      return shadow_endpoint(*gateway, query);
    }
    if (path == "/v1/tandem/audit") {
      return audit_endpoint(*gateway, query);
    }
    const bool ready = health_body(*gateway, shutting_down, false)["ready"].get<bool>();
    return {200, status_json(*gateway, ready)};
  }
  constexpr std::string_view kReviews = "/v1/tandem/reviews";
  if (path.rfind(kReviews, 0) != 0) {
    return error_response_body(
        api_error_from(make_error(ErrorCode::kNotFound, "no such endpoint: " + path)));
  }
  std::string rest = path.substr(kReviews.size());
  // Reviewers list and answer; a client may fetch a ticket it holds (the id is unguessable).
  const auto not_reviewer = refuse_unless_reviewer(caller);
  if (rest.empty() || rest == "/") {
    if (!get) {
      return error_response_body(invalid_request("use GET to list reviews"));
    }
    return not_reviewer ? error_response_body(*not_reviewer) : list_reviews(*gateway, query);
  }
  rest = rest.substr(1);
  const size_t slash = rest.find('/');
  const std::string id = rest.substr(0, slash);
  const std::string action = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (action.empty() && get) {
    return get_review(*gateway, id);
  }
  if ((action == "answer" || action == "reject") && post) {
    if (not_reviewer) {
      return error_response_body(*not_reviewer);
    }
    return answer_review(*gateway, id, req.body(), caller ? caller->name : "api",
                         action == "reject");
  }
  return error_response_body(invalid_request(
      "use GET /v1/tandem/reviews/{id} or POST /v1/tandem/reviews/{id}/answer|reject"));
}

net::awaitable<Response> HttpServer::State::embeddings(beast::tcp_stream& stream,
                                                       const http::request<http::string_body>& req,
                                                       Caller caller, bool keep_alive) {
  auto parsed = parse_embeddings_request(req.body());
  if (auto* error = std::get_if<ApiError>(&parsed)) {
    co_return error_response(*error, keep_alive);
  }
  EmbeddingsRequest request = std::move(std::get<EmbeddingsRequest>(parsed));
  if (auto denied = refuse_model(caller, request.model)) {
    co_return error_response(*denied, keep_alive);
  }
  auto hints = request_hints(routing_headers(req), caller);
  if (const ApiError* bad = std::get_if<ApiError>(&hints)) {
    co_return error_response(*bad, keep_alive);
  }
  if (shutting_down) {
    co_return error_response(
        api_error_from(make_error(ErrorCode::kShuttingDown, "the gateway is shutting down")),
        keep_alive);
  }
  // A cloud request ends when the client leaves, at request_timeout_ms, or at shutdown.
  CancelSignal cancel;
  const auto registered = in_flight.enter(cancel);
  auto executor = co_await asio::this_coro::executor;
  const RequestWatch watch(stream, cancel, executor,
                           std::chrono::milliseconds(server.request_timeout_ms));

  const EmbeddingsAnswer answer = co_await answer_embeddings(
      *gateway, std::move(request), std::move(std::get<routing::RequestHints>(hints)), cancel);
  Response res = json_response(answer.status, answer.body, keep_alive);
  if (answer.retry_after_seconds) {
    res.set(http::field::retry_after, std::to_string(*answer.retry_after_seconds));
  }
  if (!answer.tier.empty()) {
    res.set("X-Tandem-Tier", answer.tier);
  }
  co_return res;
}

net::awaitable<Response> HttpServer::State::run_canary_now(Caller caller, bool keep_alive) {
  if (auto denied = refuse_unless_admin(caller, "/v1/tandem/canary")) {
    co_return error_response(*denied, keep_alive);
  }
  if (gateway->engine() == nullptr || gateway->cloud_model().empty()) {
    co_return error_response(
        unavailable("a canary needs both tiers: " +
                        std::string(gateway->engine() == nullptr ? "the edge model is not loaded"
                                                                 : "no cloud model is configured"),
                    "canary_unavailable"),
        keep_alive);
  }
  CancelSignal cancel;
  const auto registered = in_flight.enter(cancel);
  const auto run = co_await tandem::server::run_canary(*gateway, cancel);
  gateway->record_canary(run);
  co_return json_response(200, canary_json(run), keep_alive);
}

net::awaitable<std::optional<Response>> HttpServer::State::dispatch(
    beast::tcp_stream& stream, const http::request<http::string_body>& req,
    const std::string& target, Caller caller, bool keep_alive, boost::system::error_code& ec) {
  const std::string path = target.substr(0, target.find('?'));
  const bool get = req.method() == http::verb::get;
  const bool post = req.method() == http::verb::post;
  if (path == "/health" && get) {
    const json body = health_body(*gateway, shutting_down, server.api_keys.empty());
    co_return json_response(body["ready"].get<bool>() ? 200 : 503, body, keep_alive);
  }
  if (path == "/v1/models" && get) {
    co_return json_response(200, models_response(gateway->models()), keep_alive);
  }
  if ((path == "/v1/chat/completions" || path == "/v1/completions") && post) {
    auto answered = co_await complete(stream, req, path, caller, keep_alive, ec);
    co_return answered;
  }
  if (path == "/v1/responses" && post) {
    auto answered = co_await respond(stream, req, caller, keep_alive, ec);
    co_return answered;
  }
  constexpr std::string_view kResponses = "/v1/responses/";
  if (path.rfind(kResponses, 0) == 0 && path.size() > kResponses.size() &&
      (get || req.method() == http::verb::delete_)) {
    auto stored =
        co_await stored_response(req.method(), path.substr(kResponses.size()), keep_alive);
    co_return stored;
  }
  if (const auto file = dashboard_file(path); file && operations.dashboard && get) {
    co_return static_response(*file, keep_alive);
  }
  if (path == "/favicon.ico" && operations.dashboard && get) {
    // Browsers ask for it with every page; the dashboard has none.
    Response res = text_response("", "image/x-icon", keep_alive);
    res.result(http::status::no_content);
    co_return res;
  }
  if (path == "/metrics" && operations.metrics && get) {
    if (auto denied = refuse_unless_admin(caller, "/metrics")) {
      co_return error_response(*denied, keep_alive);
    }
    // Some gauges ask the stores (pending review tickets): read them off the I/O thread.
    std::string text =
        co_await net::run_on(gateway->store_workers(), [this] { return metrics_text(*gateway); });
    co_return text_response(std::move(text), "text/plain; version=0.0.4; charset=utf-8",
                            keep_alive);
  }
  if (path == "/v1/tandem/canary" && post) {
    auto run = co_await run_canary_now(caller, keep_alive);
    co_return run;
  }
  if (path == "/v1/embeddings" && post) {
    auto answer = co_await embeddings(stream, req, caller, keep_alive);
    co_return answer;
  }
  if (path.rfind("/v1/tandem/", 0) == 0) {
    const std::string query = target.size() > path.size() ? target.substr(path.size() + 1) : "";
    // Tickets, traces, the audit, the routing memory: every one of these reads a store.
    const ApiResponse answer = co_await net::run_on(
        gateway->store_workers(), [&] { return tandem_endpoint(req, path, query, caller); });
    co_return json_response(answer.status, answer.body, keep_alive);
  }
  const bool known = path == "/health" || path == "/v1/models" || path == "/v1/chat/completions" ||
                     path == "/v1/completions" || path == "/v1/embeddings" ||
                     path.rfind("/v1/responses", 0) == 0;
  ApiError error;
  error.status = known ? 405 : 404;
  error.type = "invalid_request_error";
  error.message = known
                      ? "method " + std::string(req.method_string()) + " is not allowed on " + path
                      : "no such endpoint: " + path;
  co_return error_response(error, keep_alive);
}

net::awaitable<void> HttpServer::State::session(net::tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  auto self = shared_from_this();
  // Beyond server.max_connections the request is still read (so the client sees the answer,
  // not a reset), then refused and the connection closed.
  const bool over_capacity = connections.fetch_add(1) >= server.max_connections;
  struct Leave {
    std::atomic<size_t>& count;
    ~Leave() { count.fetch_sub(1); }
  } leave{connections};
  while (true) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(server.max_body_bytes);
    parser.header_limit(static_cast<uint32_t>(server.max_header_bytes));
    stream.expires_after(std::chrono::milliseconds(server.read_timeout_ms));
    boost::system::error_code ec;
    co_await http::async_read(stream, buffer, parser, asio::redirect_error(net::use_awaitable, ec));
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
      break;
    }
    if (ec) {
      ApiError error = invalid_request("cannot read the request: " + ec.message());
      if (ec == http::error::body_limit) {
        error.status = 413;
        error.message = "the request body exceeds " + std::to_string(server.max_body_bytes) +
                        " bytes (server.max_body_bytes)";
      } else if (ec == http::error::header_limit) {
        error.status = 431;
        error.message =
            "the request headers exceed " + std::to_string(server.max_header_bytes) + " bytes";
      } else if (ec == beast::error::timeout) {
        error.status = 408;
        error.message =
            "the request was not received within " + std::to_string(server.read_timeout_ms) + " ms";
      }
      stream.expires_after(std::chrono::seconds(5));
      Response res = error_response(error, false);
      co_await http::async_write(stream, res, asio::redirect_error(net::use_awaitable, ec));
      break;
    }
    stream.expires_never();
    auto req = parser.release();
    const bool keep_alive = req.keep_alive() && !shutting_down && !over_capacity;
    const std::string target(req.target());

    // Every branch leaves its answer in `res` (or writes a stream itself): one write below.
    std::optional<Response> res;
    std::exception_ptr failure;  // an endpoint threw: answered, then the connection closes
    const auto caller = authenticate(server, target.substr(0, target.find('?')),
                                     header_of(req, http::field::authorization));
    if (over_capacity) {
      ApiError busy = unavailable("the gateway has " + std::to_string(server.max_connections) +
                                      " connections open (server.max_connections); retry shortly",
                                  "too_many_connections");
      busy.retry_after_seconds = 1;
      res = error_response(busy, false);
    } else if (const ApiError* denied = std::get_if<ApiError>(&caller)) {
      res = error_response(*denied, keep_alive);
    } else {
      // An exception out of an endpoint is answered with a 500, not a dropped connection,
      // unless a stream had begun (complete() then sets `ec`): that connection is closed.
      try {
        res = co_await dispatch(stream, req, target, std::get<Caller>(caller), keep_alive, ec);
      } catch (...) {
        failure = std::current_exception();
      }
      if (failure) {
        const ApiError error = request_failed(failure, "");
        res.reset();
        if (!ec) {
          res = error_response(error, false);
        }
      }
    }
    if (res) {
      co_await http::async_write(stream, *res, asio::redirect_error(net::use_awaitable, ec));
    }
    if (ec || !keep_alive || failure) {
      break;
    }
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(net::tcp::socket::shutdown_send, ignored);
  stream.socket().close(ignored);
}

net::awaitable<void> HttpServer::State::accept_loop() {
  auto self = shared_from_this();
  while (!shutting_down) {
    boost::system::error_code ec;
    net::tcp::socket socket = co_await acceptor.async_accept(
        asio::make_strand(ioc), asio::redirect_error(net::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) {
        co_return;
      }
      if (ec == asio::error::no_descriptors) {  // out of file descriptors: back off briefly
        asio::steady_timer pause(ioc, std::chrono::milliseconds(50));
        co_await pause.async_wait(asio::redirect_error(net::use_awaitable, ec));
      }
      continue;
    }
    auto executor = socket.get_executor();
    asio::co_spawn(executor, session(std::move(socket)), net::log_failure("server", "session"));
  }
}

net::awaitable<void> HttpServer::State::shutdown_sequence() {
  auto self = shared_from_this();
  boost::system::error_code ec;
  acceptor.close(ec);
  gateway->stop();
  const auto deadline = Clock::now() + std::chrono::milliseconds(server.shutdown_grace_ms);
  asio::steady_timer tick(ioc);
  while (Clock::now() < deadline) {
    if (in_flight.size() == 0) {
      break;
    }
    tick.expires_after(std::chrono::milliseconds(20));
    co_await tick.async_wait(asio::redirect_error(net::use_awaitable, ec));
  }
  in_flight.cancel_all();
  // Give cancelled requests a moment to write their last bytes, then stop.
  tick.expires_after(std::chrono::milliseconds(100));
  co_await tick.async_wait(asio::redirect_error(net::use_awaitable, ec));
  ioc.stop();
}

Result<std::unique_ptr<HttpServer>> HttpServer::create(std::shared_ptr<Gateway> gateway) {
  auto state = std::make_shared<State>(std::move(gateway));
  const auto& server = state->server;
  // Checked again here: --host may have changed the address after the config was read.
  if (const std::string problem = config::exposure_problem(server); !problem.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "server.host: " + problem);
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(server.host, ec);
  if (ec) {
    return make_error(ErrorCode::kInvalidArgument,
                      "server.host '" + server.host + "' is not an IP address");
  }
  const net::tcp::endpoint endpoint(address, server.port);
  state->acceptor.open(endpoint.protocol(), ec);
  if (!ec) {
    state->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    state->acceptor.bind(endpoint, ec);
  }
  if (!ec) {
    state->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    return make_error(ErrorCode::kInvalidArgument, "cannot listen on " + server.host + ":" +
                                                       std::to_string(server.port) + ": " +
                                                       ec.message());
  }
  auto created = std::unique_ptr<HttpServer>(new HttpServer(state));
  created->port_ = state->acceptor.local_endpoint().port();
  return created;
}

HttpServer::HttpServer(std::shared_ptr<State> state) : state_(std::move(state)) {}

HttpServer::~HttpServer() {
  state_->ioc.stop();
  for (auto& thread : state_->threads) {
    if (thread.joinable()) {
      thread.join();
    }
  }
  // Destroys what is still queued (idle keep-alive sessions, above all): those coroutine frames
  // hold the State, which holds the io_context, so its destructor would never run and the
  // gateway would leak, its trace writer never writing what was still queued.
  state_->ioc.shutdown();
}

void HttpServer::run() {
  state_->gateway->start_probes(state_->ioc.get_executor());
  asio::co_spawn(state_->ioc, state_->accept_loop(), net::log_failure("server", "accept_loop"));
  const int extra = std::max(0, state_->server.threads - 1);
  for (int i = 0; i < extra; ++i) {
    state_->threads.emplace_back([state = state_] { state->ioc.run(); });
  }
  state_->ioc.run();
  for (auto& thread : state_->threads) {
    thread.join();
  }
  state_->threads.clear();
  // Audit rows still being written, and work still on the edge and store workers, answer
  // through this io_context: let them answer while it exists (stopped, it only queues the
  // answers, which its shutdown then destroys).
  state_->gateway->flush_traces();
  state_->gateway->join_workers();
}

void HttpServer::shutdown() {
  if (state_->shutting_down.exchange(true)) {
    return;
  }
  asio::co_spawn(state_->ioc, state_->shutdown_sequence(),
                 net::log_failure("server", "shutdown_sequence"));
}

}  // namespace tandem::server
