#include "net/sse.h"
#include "server/http_state.h"
#include "server/responses.h"
#include "server/sse_writer.h"

namespace tandem::server {

using nlohmann::json;
using upstream::ApiKind;
namespace asio = net::asio;
namespace beast = net::beast;
namespace http = net::http;

namespace {

// Writes a chat or completions stream as server-sent events.
class StreamingSink final : public ResponseSink {
 public:
  StreamingSink(SseWriter writer, ApiKind kind, ResponseIds ids, bool include_usage)
      : writer_(writer), kind_(kind), ids_(std::move(ids)), include_usage_(include_usage) {}

  bool began() const { return writer_.began(); }
  bool broken() const { return writer_.broken(); }
  bool ended() const { return ended_; }

  net::awaitable<bool> begin(const DecisionRecord& record) override {
    const bool written = co_await writer_.headers(record.tier);
    co_return written;
  }

  net::awaitable<bool> piece(const Piece& piece) override {
    const std::string payload = content_chunk_text(kind_, ids_, piece, first_);
    const bool written = co_await write_event(payload);
    co_return written;
  }

  // A named SSE event that OpenAI clients still parse as a chunk (no choices, so nothing is
  // appended), carrying the revision for clients that watch for it.
  net::awaitable<bool> revise(const Revision& revision) override {
    const std::string payload =
        "event: tandem.revision\n" + net::sse_event(revision_chunk_text(kind_, ids_, revision));
    first_ = false;
    const bool written = co_await writer_.write(payload);
    co_return written;
  }

  net::awaitable<void> finish(const Outcome& outcome, const DecisionRecord& record) override {
    if (ended_) {
      co_return;
    }
    ended_ = true;
    // The last chunk carries the decision record: the usage chunk when the client asked for
    // usage, else the one with finish_reason.
    std::string last;
    if (include_usage_) {
      const std::string finish = finish_chunk_text(kind_, ids_, outcome.finish_reason);
      if (!co_await write_event(finish)) {
        co_return;
      }
      last = usage_chunk_text(kind_, ids_, outcome.usage, &record);
    } else {
      last = finish_chunk_text(kind_, ids_, outcome.finish_reason, &record);
    }
    if (co_await write_event(last)) {
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
    // A named value, not a temporary in the co_await's arguments (GCC 12 miscompiles those).
    const std::string event = net::sse_event(payload);
    const bool written = co_await writer_.write(event);
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
      body_ = completion_response_text(kind_, ids_, answer_, outcome, record);
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
  bool ended() const { return error_.has_value() || !body_.empty(); }

  // Once: the body moves into the response.
  Response response(bool keep_alive) {
    if (error_) {
      return error_response(*error_, record_, keep_alive);
    }
    Response res = json_text_response(200, std::move(body_), keep_alive);
    res.set("X-Tandem-Tier", tier_);
    return res;
  }

 private:
  ApiKind kind_;
  ResponseIds ids_;
  WholeAnswer answer_;  // text, logprobs, reasoning and tool calls so far
  std::string body_;    // the response's JSON text, once finished
  std::string tier_;
  std::optional<ApiError> error_;
  json record_;
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
    co_return error_response(shutting_down_error(), keep_alive);
  }

  CancelSignal cancel;
  const auto registered = in_flight.enter(cancel);
  // The whole request, streaming included, is bounded by request_timeout_ms.
  const RequestWatch watch(stream, cancel, std::chrono::milliseconds(server.request_timeout_ms));

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
    const SseWriter writer(stream, keep_alive, std::chrono::milliseconds(server.write_timeout_ms));
    StreamingSink sink(writer, kind, ids, request.include_usage);
    try {
      co_await gateway->execute(std::move(request), std::move(context), sink, cancel);
    } catch (...) {
      failure = std::current_exception();
    }
    res = co_await settle_stream(sink, failure, ids.id, keep_alive, ec);
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

}  // namespace tandem::server
