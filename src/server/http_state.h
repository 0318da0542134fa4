#pragma once
// The HTTP transport's shared state and the helpers its endpoint files share: the session loop
// and dispatch (http_server.cpp), chat and completions (completions_endpoint.cpp), the
// Responses API (responses_endpoint.cpp). Private to the server library.
//
// Thread-safety: State is shared by every I/O thread; its members are either immutable after
// start, atomic, or guard themselves (InFlightRequests, StreamLimiter, the stores).

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/cancel.h"
#include "net/asio.h"
#include "server/access.h"
#include "server/dashboard.h"
#include "server/gateway.h"
#include "server/http_server.h"
#include "server/in_flight.h"
#include "server/openai_request.h"
#include "server/request_hints.h"
#include "server/request_watch.h"
#include "server/responses_api.h"
#include "server/responses_sinks.h"
#include "server/tandem_api.h"
#include "store/response_store.h"

namespace tandem::server {

using Response = net::http::response<net::http::string_body>;
using HttpRequest = net::http::request<net::http::string_body>;

struct HttpServer::State : std::enable_shared_from_this<HttpServer::State> {
  std::shared_ptr<Gateway> gateway;
  const config::ServerConfig& server;
  // Asio's shutdown() is protected; ~HttpServer needs it (see there). Each is run by one thread.
  struct IoContext : net::asio::io_context {
    IoContext() : net::asio::io_context(1) {}
    using net::asio::io_context::shutdown;
  };
  // One io_context per I/O thread (server.threads), each run by its own thread: a connection
  // lives on one from accept to close, so its handlers need no strand, and a request's path
  // never hands work from one I/O thread to another (in one shared io_context every hand-off
  // wakes a sleeping thread). The first also runs the acceptor, the probes and shutdown.
  std::vector<std::unique_ptr<IoContext>> contexts;
  IoContext& ioc;               // *contexts.front()
  net::tcp::acceptor acceptor;  // on ioc
  size_t next_context = 0;      // where the next connection goes; the accept loop's only
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
        contexts(make_contexts(server.threads)),
        ioc(*contexts.front()),
        acceptor(ioc),
        operations(gateway->config().operations),
        streams(server.limits.max_streams_per_key),
        response_store(gateway->database(), server.responses.max_stored,
                       std::chrono::hours(server.responses.ttl_hours)) {}

  static std::vector<std::unique_ptr<IoContext>> make_contexts(int threads);
  // Every I/O thread's io_context: stop() ends their run().
  void stop_contexts();
  net::awaitable<void> accept_loop();
  net::awaitable<void> session(net::tcp::socket socket);
  // One request read off a session's connection: the response to write, or nullopt when the
  // answer streamed itself or the connection broke (`ec`). Sets `failure` when an endpoint
  // threw; the session then closes the connection.
  net::awaitable<std::optional<Response>> answer_request(net::beast::tcp_stream& stream,
                                                         const HttpRequest& req, bool keep_alive,
                                                         bool over_capacity,
                                                         boost::system::error_code& ec,
                                                         std::exception_ptr& failure);
  // Answers a completion request. Streams write themselves and return nullopt; everything
  // else returns the response to write. `ec` reports a broken stream.
  net::awaitable<std::optional<Response>> complete(net::beast::tcp_stream& stream,
                                                   const HttpRequest& req, const std::string& path,
                                                   Caller caller, bool keep_alive,
                                                   boost::system::error_code& ec);
  // The rest of a chat, completions or Responses request once its body is a chat request:
  // limits, routing hints, the stream slot, then the gateway's answer through the API's sink.
  net::awaitable<std::optional<Response>> answer(net::beast::tcp_stream& stream,
                                                 const HttpRequest& req, CompletionRequest request,
                                                 Caller caller, bool keep_alive,
                                                 boost::system::error_code& ec,
                                                 const ResponsesRequest* responses);
  // POST /v1/responses: the previous response's conversation, then answer() (responses_api.h).
  net::awaitable<std::optional<Response>> respond(net::beast::tcp_stream& stream,
                                                  const HttpRequest& req, Caller caller,
                                                  bool keep_alive, boost::system::error_code& ec);
  net::awaitable<std::optional<Response>> answer_responses(net::beast::tcp_stream& stream,
                                                           CompletionRequest request,
                                                           RequestContext context,
                                                           const ResponsesRequest& responses,
                                                           CancelSignal& cancel, bool keep_alive,
                                                           boost::system::error_code& ec);
  // GET and DELETE /v1/responses/{id}.
  net::awaitable<Response> stored_response(net::http::verb method, const std::string& id,
                                           bool keep_alive);
  // Keeps a finished response when the request and the routing allow (never on an I/O thread).
  net::awaitable<void> keep_response(const ResponsesRequest& request,
                                     const FinishedResponse& finished);
  // Everything after authentication: the endpoint's answer, or nullopt when it streamed.
  net::awaitable<std::optional<Response>> dispatch(net::beast::tcp_stream& stream,
                                                   const HttpRequest& req,
                                                   const std::string& target, Caller caller,
                                                   bool keep_alive, boost::system::error_code& ec);
  net::awaitable<void> shutdown_sequence();
  // POST /v1/embeddings: the edge model's vectors or a cloud upstream's (embeddings_tiers.h).
  net::awaitable<Response> embeddings(net::beast::tcp_stream& stream, const HttpRequest& req,
                                      Caller caller, bool keep_alive);
  // POST /v1/tandem/canary: runs the canary prompts now (operators), records and returns it.
  net::awaitable<Response> run_canary_now(Caller caller, bool keep_alive);
  ApiResponse tandem_endpoint(const HttpRequest& req, const std::string& path,
                              const std::string& query, Caller caller);
};

Response json_response(int status, const nlohmann::json& body, bool keep_alive);
// A body that is JSON text already (written with JsonWriter).
Response json_text_response(int status, std::string body, bool keep_alive);
Response text_response(const std::string& body, std::string_view content_type, bool keep_alive);
// The dashboard's files: same-origin only, never sniffed, never framed, never cached stale.
Response static_response(const StaticFile& file, bool keep_alive);
Response error_response(const ApiError& error, bool keep_alive);
std::string_view header_of(const HttpRequest& req, net::http::field field);
RoutingHeaders routing_headers(const HttpRequest& req);

// An error response whose body also carries the decision record (`tandem`).
Response error_response(const ApiError& error, const nlohmann::json& record, bool keep_alive);

// What the session does once a streamed answer is over, for any API's streaming sink (it has
// began(), broken(), failed_before_start(), record() and fail()): an exception after the
// headers ends the stream with the API's failure event, and the connection is not reused; one
// before them, or a failure before anything was sent, is a plain error response; a broken
// stream closes the connection. Returns the response to write, if any.
template <typename StreamSink>
net::awaitable<std::optional<Response>> settle_stream(StreamSink& sink, std::exception_ptr failure,
                                                      const std::string& request_id,
                                                      bool keep_alive,
                                                      boost::system::error_code& ec);

// A request that arrives while the gateway shuts down.
ApiError shutting_down_error();

// An exception that escaped an endpoint: logged with what it was, answered as a 500 that says
// only that (and under which request id, when there is one).
ApiError request_failed(const std::exception_ptr& failure, const std::string& request_id);

template <typename StreamSink>
net::awaitable<std::optional<Response>> settle_stream(StreamSink& sink, std::exception_ptr failure,
                                                      const std::string& request_id,
                                                      bool keep_alive,
                                                      boost::system::error_code& ec) {
  std::optional<Response> res;
  if (failure && sink.began()) {
    // Set first, so that the session closes the connection rather than answers, should the
    // failure event fail too.
    ec = net::asio::error::broken_pipe;
    DecisionRecord record;
    record.request_id = request_id;
    // A named value, not a temporary in the co_await's arguments (GCC 12 miscompiles those).
    const ApiError error = request_failed(failure, request_id);
    co_await sink.fail(error, record);
  } else if (failure) {
    res = error_response(request_failed(failure, request_id), false);
  } else if (sink.failed_before_start()) {
    res = error_response(*sink.failed_before_start(), sink.record().to_json(), keep_alive);
  } else if (sink.broken()) {
    ec = net::asio::error::broken_pipe;
  }
  co_return res;
}

}  // namespace tandem::server
