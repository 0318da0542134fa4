#include "server/http_server.h"

#include <chrono>
#include <iostream>

#include <sys/socket.h>

#include "net/asio.h"
#include "net/async_queue.h"
#include "net/http_read.h"
#include "net/http_write.h"
#include "net/offload.h"
#include "net/spawn.h"
#include "server/access.h"
#include "server/canary.h"
#include "server/dashboard.h"
#include "server/embeddings_api.h"
#include "server/embeddings_tiers.h"
#include "server/gateway_util.h"
#include "server/http_state.h"
#include "server/in_flight.h"
#include "server/operations_api.h"
#include "server/responses.h"
#include "server/series_api.h"
#include "server/shadow_api.h"
#include "server/status_api.h"
#include "server/tandem_api.h"

namespace tandem::server {

using nlohmann::json;
using upstream::ApiKind;
namespace asio = net::asio;
namespace beast = net::beast;
namespace http = net::http;
using Clock = std::chrono::steady_clock;

namespace {

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
           {{"backend", gateway.operations().shared().backend()},
            {"reachable", !gateway.operations().store_outage().has_value()}}}};
}

// Whether a failed read means the connection is over (the client left, or the server is
// stopping): there is no one to answer.
bool connection_ended(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::operation_aborted;
}

// The answer to a request that could not be read: too large, too slow, or malformed.
ApiError read_error(const boost::system::error_code& ec, const config::ServerConfig& server) {
  ApiError error = invalid_request("cannot read the request: " + ec.message());
  if (ec == http::error::body_limit) {
    error.kind = ErrorKind::kBodyTooLarge;
    error.message = "the request body exceeds " + std::to_string(server.max_body_bytes) +
                    " bytes (server.max_body_bytes)";
  } else if (ec == http::error::header_limit) {
    error.kind = ErrorKind::kHeadersTooLarge;
    error.message =
        "the request headers exceed " + std::to_string(server.max_header_bytes) + " bytes";
  } else if (ec == beast::error::timeout) {
    error.kind = ErrorKind::kRequestTimeout;
    error.message =
        "the request was not received within " + std::to_string(server.read_timeout_ms) + " ms";
  }
  return error;
}

// The refusal of every request on a connection beyond server.max_connections.
ApiError over_capacity_error(const config::ServerConfig& server) {
  ApiError busy = unavailable("the gateway has " + std::to_string(server.max_connections) +
                                  " connections open (server.max_connections); retry shortly",
                              "too_many_connections");
  busy.retry_after_seconds = 1;
  return busy;
}

}  // namespace

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
  if (path == "/v1/tandem/shadow" || path == "/v1/tandem/status" || path == "/v1/tandem/audit" ||
      path == "/v1/tandem/series") {
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
    if (path == "/v1/tandem/series") {
      return series_endpoint(*gateway, query);
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
    co_return error_response(shutting_down_error(), keep_alive);
  }
  // A cloud request ends when the client leaves, at request_timeout_ms, or at shutdown.
  CancelSignal cancel;
  const auto registered = in_flight.enter(cancel);
  const RequestWatch watch(stream, cancel, std::chrono::milliseconds(server.request_timeout_ms));

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
  gateway->operations().record_canary(run);
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
  const ApiError error =
      known ? make_api_error(
                  ErrorKind::kMethodNotAllowed, ErrorOrigin::kClient,
                  "method " + std::string(req.method_string()) + " is not allowed on " + path, "")
            : make_api_error(ErrorKind::kNotFound, ErrorOrigin::kClient,
                             "no such endpoint: " + path, "");
  co_return error_response(error, keep_alive);
}

net::awaitable<std::optional<Response>> HttpServer::State::answer_request(
    beast::tcp_stream& stream, const HttpRequest& req, bool keep_alive, bool over_capacity,
    boost::system::error_code& ec, std::exception_ptr& failure) {
  const std::string target(req.target());
  // Every branch leaves its answer in `res` (or writes a stream itself): one write after.
  std::optional<Response> res;
  const auto caller = authenticate(server, target.substr(0, target.find('?')),
                                   header_of(req, http::field::authorization));
  if (over_capacity) {
    res = error_response(over_capacity_error(server), false);
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
  co_return res;
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
    boost::system::error_code ec = co_await net::read_message(stream, buffer, parser);
    if (connection_ended(ec)) {
      break;
    }
    if (ec) {
      const ApiError error = read_error(ec, server);
      stream.expires_after(std::chrono::seconds(5));
      Response res = error_response(error, false);
      ec = co_await net::write_message(stream, res);
      break;
    }
    stream.expires_never();
    auto req = parser.release();
    const bool keep_alive = req.keep_alive() && !shutting_down && !over_capacity;
    std::exception_ptr failure;  // an endpoint threw: answered, then the connection closes
    std::optional<Response> res =
        co_await answer_request(stream, req, keep_alive, over_capacity, ec, failure);
    if (res) {
      // A client that takes none of the answer for this long is dropped, not waited for.
      stream.expires_after(std::chrono::milliseconds(server.write_timeout_ms));
      ec = co_await net::write_message(stream, *res);
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
    // Round robin: with keep-alive clients connections are long and few, so this spreads
    // them as evenly as the kernel's SO_REUSEPORT would, with one listening socket.
    auto& context = *contexts[next_context++ % contexts.size()];
    net::tcp::socket socket =
        co_await acceptor.async_accept(context, asio::redirect_error(net::use_awaitable, ec));
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
  stop_contexts();
}

std::vector<std::unique_ptr<HttpServer::State::IoContext>> HttpServer::State::make_contexts(
    int threads) {
  std::vector<std::unique_ptr<IoContext>> made;
  for (int i = 0; i < std::max(1, threads); ++i) {
    made.push_back(std::make_unique<IoContext>());
  }
  return made;
}

void HttpServer::State::stop_contexts() {
  for (auto& context : contexts) {
    context->stop();
  }
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
  state_->stop_contexts();
  for (auto& thread : state_->threads) {
    if (thread.joinable()) {
      thread.join();
    }
  }
  // Destroys what is still queued (idle keep-alive sessions, above all): those coroutine frames
  // hold the State, which holds the io_context, so its destructor would never run and the
  // gateway would leak, its trace writer never writing what was still queued.
  for (auto& context : state_->contexts) {
    context->shutdown();
  }
}

void HttpServer::run() {
  state_->gateway->start_probes(state_->ioc.get_executor());
  asio::co_spawn(state_->ioc, state_->accept_loop(), net::log_failure("server", "accept_loop"));
  // The other threads' io_contexts have no work until a connection comes: keep them running
  // until stopped.
  for (size_t i = 1; i < state_->contexts.size(); ++i) {
    state_->threads.emplace_back([state = state_, i] {
      auto& context = *state->contexts[i];
      const auto keep_running = asio::make_work_guard(context);
      context.run();
    });
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
