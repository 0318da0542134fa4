#include "upstream/upstream.h"

#include <algorithm>
#include <cstdint>

#include "common/json_kind.h"
#include "common/log.h"
#include "net/sleep.h"
#include "net/sse.h"
#include "upstream/reply_parts.h"

namespace tandem::upstream {
namespace detail {

UpstreamFailure make_failure(const std::string& upstream, HttpFailure::Kind kind,
                             std::string message) {
  UpstreamFailure f;
  f.upstream = upstream;
  f.http.kind = kind;
  f.http.message = std::move(message);
  return f;
}

UpstreamFailure named_failure(const std::string& upstream, HttpFailure http) {
  UpstreamFailure f;
  f.upstream = upstream;
  f.http = std::move(http);
  f.http.message = "upstream " + upstream + ": " + f.http.message;
  return f;
}

// Read from an nlohmann::json: what the Responses reader (cloud_responses.cpp) holds. The chat
// reader has its own, over simdjson (cloud_reply.cpp).
int token_count(const nlohmann::json& usage, const char* key, const char* where,
                std::string& problems) {
  const auto it = usage.find(key);
  if (it == usage.end()) {
    return 0;
  }
  if (it->is_number_integer()) {
    const auto value = it->get<int64_t>();
    if (value >= 0 && value <= INT32_MAX) {
      return static_cast<int>(value);
    }
  }
  problems += std::string(problems.empty() ? "" : "; ") + where + key + " is " +
              (it->is_number_integer() ? std::to_string(it->get<int64_t>()) : json_kind(*it));
  return 0;
}

}  // namespace detail

namespace {

using std::chrono::milliseconds;
using Kind = HttpFailure::Kind;
using detail::make_failure;
using detail::named_failure;

constexpr size_t kMaxErrorBody = 4 << 10;

}  // namespace

Result<std::unique_ptr<Upstream>> Upstream::create(config::UpstreamConfig config,
                                                   std::shared_ptr<EgressGuard> guard,
                                                   CircuitBreaker::Now now) {
  if (!guard) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "upstream " + config.name + ": no egress guard: nothing may be sent unguarded");
  }
  auto endpoint = parse_base_url(config.base_url);
  if (!endpoint) {
    return make_error(ErrorCode::kInvalidArgument,
                      "upstream " + config.name + ": " + endpoint.error().message);
  }
  std::unique_ptr<net::ssl::context> tls;
  try {
    tls = make_tls_context(config.tls_verify, config.ca_file);
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidArgument,
                      "upstream " + config.name + ": cannot load TLS trust (" +
                          (config.ca_file.empty() ? std::string("system store") : config.ca_file) +
                          "): " + e.what());
  }
  return std::unique_ptr<Upstream>(new Upstream(std::move(config), std::move(endpoint).value(),
                                                std::move(tls), std::move(guard), std::move(now)));
}

Upstream::Upstream(config::UpstreamConfig config, Endpoint endpoint,
                   std::unique_ptr<net::ssl::context> tls, std::shared_ptr<EgressGuard> guard,
                   CircuitBreaker::Now now)
    : config_(std::move(config)),
      endpoint_(std::move(endpoint)),
      tls_(std::move(tls)),
      guard_(std::move(guard)),
      breaker_(config_.circuit, std::move(now)),
      jitter_(std::random_device{}()) {}

void Upstream::set_online(bool online, const std::string& why) {
  if (online_.exchange(online) != online) {
    log_event(online ? LogLevel::kInfo : LogLevel::kWarn, "upstream",
              online ? "upstream_online" : "upstream_offline",
              {{"upstream", config_.name}, {"reason", why}});
  }
}

void Upstream::note_circuit(CircuitState before, const std::string& why) {
  const CircuitState after = breaker_.state();
  if (before != after) {
    log_event(after == CircuitState::kOpen ? LogLevel::kWarn : LogLevel::kInfo, "upstream",
              std::string("circuit_") + circuit_state_name(after),
              {{"upstream", config_.name},
               {"consecutive_failures", std::to_string(breaker_.consecutive_failures())},
               {"reason", why}});
  }
}

void Upstream::note_usage_problem(const CloudEvent& event) const {
  note_usage_problem(event.usage_problem);
}

void Upstream::note_usage_problem(const std::string& problem) const {
  if (!problem.empty()) {
    log_event(LogLevel::kWarn, "upstream", "usage_malformed",
              {{"upstream", config_.name}, {"message", problem + "; counted as 0 (unknown)"}});
  }
}

void Upstream::set_last_error(const std::string& message) {
  std::lock_guard lock(mutex_);
  last_error_ = message;
}

UpstreamStatus Upstream::status() const {
  UpstreamStatus s;
  s.name = config_.name;
  s.online = online_.load();
  s.circuit = breaker_.state();
  s.consecutive_failures = breaker_.consecutive_failures();
  s.cooldown_remaining_ms = breaker_.cooldown_remaining().count();
  std::lock_guard lock(mutex_);
  s.last_error = last_error_;
  return s;
}

milliseconds Upstream::backoff(int attempt, const HttpFailure& failure) {
  const uint64_t cap =
      std::min<uint64_t>(config_.retry.max_backoff_ms,
                         uint64_t{config_.retry.base_backoff_ms} << std::min(attempt, 20));
  uint64_t wait = 0;
  {
    std::lock_guard lock(mutex_);
    wait = std::uniform_int_distribution<uint64_t>(0, cap)(jitter_);  // "full jitter"
  }
  if (failure.retry_after) {
    wait = std::max<uint64_t>(wait, static_cast<uint64_t>(failure.retry_after->count()));
  }
  return milliseconds(wait);
}

net::awaitable<std::optional<UpstreamFailure>> Upstream::attempt(const CloudRequest& request,
                                                                 const EventSink& sink,
                                                                 CancelSignal& cancel,
                                                                 bool& delivered) {
  std::vector<JsonMember> members = {{"stream", request.stream ? "true" : "false"}};
  if (request.stream) {
    members.push_back({"stream_options", R"({"include_usage":true})"});
  }
  // GCC 12 mis-handles temporaries in co_await arguments: every argument is named.
  const std::string path = request.kind == ApiKind::kChat ? "/chat/completions" : "/completions";
  const std::string& model = config_.models.at(request.public_model);
  const char* accept = request.stream ? "text/event-stream" : "application/json";
  auto opened =
      co_await post(path, *request.body, std::move(members), model, request.egress, accept, cancel);
  if (auto* failed = std::get_if<UpstreamFailure>(&opened)) {
    co_return std::move(*failed);
  }
  auto exchange = std::move(std::get<std::unique_ptr<HttpExchange>>(opened));
  CancelRegistration registration(cancel, [raw = exchange.get()] { raw->cancel(); });
  if (!request.stream) {
    auto whole = co_await relay_whole(*exchange, request, sink, cancel, delivered);
    co_return whole;
  }
  auto streamed = co_await relay_stream(*exchange, request, sink, cancel, delivered);
  co_return streamed;
}

net::awaitable<std::optional<UpstreamFailure>> Upstream::relay_whole(HttpExchange& exchange,
                                                                     const CloudRequest& request,
                                                                     const EventSink& sink,
                                                                     CancelSignal& cancel,
                                                                     bool& delivered) {
  auto whole = co_await read_json(exchange);
  if (auto* failed = std::get_if<UpstreamFailure>(&whole)) {
    co_return std::move(*failed);
  }
  auto event = parse_cloud_chunk(std::get<std::string>(whole), request.kind, true);
  if (!event) {
    co_return make_failure(config_.name, Kind::kProtocol,
                           "upstream " + config_.name + ": " + event.error().message);
  }
  note_usage_problem(*event);
  delivered = true;
  const bool taken = co_await sink(std::move(event).value());
  if (!taken) {
    cancel.cancel();
    co_return make_failure(config_.name, Kind::kCancelled, "the client went away");
  }
  co_return std::nullopt;
}

net::awaitable<std::optional<UpstreamFailure>> Upstream::relay_stream(HttpExchange& exchange,
                                                                      const CloudRequest& request,
                                                                      const EventSink& sink,
                                                                      CancelSignal& cancel,
                                                                      bool& delivered) {
  if (exchange.content_type().rfind("text/event-stream", 0) != 0) {
    co_return make_failure(config_.name, Kind::kProtocol,
                           "upstream " + config_.name + " answered with Content-Type '" +
                               exchange.content_type() + "', expected text/event-stream");
  }
  net::SseParser parser;
  std::vector<std::string> events;
  bool finished = false;
  bool answered = false;  // some chunk carried a choice: a stream of none answered nothing
  const auto no_answer = [&] {
    return make_failure(config_.name, Kind::kProtocol,
                        "upstream " + config_.name +
                            ": the upstream sent a malformed stream: no event carried choices");
  };
  while (true) {
    auto part = co_await exchange.read_some();
    if (auto* failed = std::get_if<HttpFailure>(&part)) {
      co_return named_failure(config_.name, std::move(*failed));
    }
    const std::string& bytes = std::get<std::string>(part);
    if (bytes.empty()) {
      if (finished) {
        co_return std::nullopt;  // some servers end without [DONE]
      }
      if (!answered) {
        co_return no_answer();
      }
      co_return make_failure(config_.name, Kind::kProtocol,
                             "upstream " + config_.name + " ended the stream before it finished");
    }
    events.clear();
    if (auto status = parser.feed(bytes, events); !status) {
      co_return make_failure(config_.name, Kind::kProtocol, status.error().message);
    }
    for (const auto& data : events) {
      if (data == "[DONE]") {
        if (!answered) {
          co_return no_answer();
        }
        // Read the stream's terminating chunk too, so the connection can be pooled.
        auto rest = co_await exchange.read_some();
        if (std::holds_alternative<std::string>(rest) && !std::get<std::string>(rest).empty()) {
          co_await exchange.read_all(kMaxErrorBody);
        }
        co_return std::nullopt;
      }
      auto event = parse_cloud_chunk(data, request.kind);
      if (!event) {
        co_return make_failure(config_.name, Kind::kProtocol,
                               "upstream " + config_.name + ": " + event.error().message);
      }
      finished = finished || event->finish_reason.has_value();
      answered = answered || event->has_choice;
      note_usage_problem(*event);
      if (!event->has_output() && !event->finish_reason && !event->usage) {
        continue;  // e.g. the role-only first chunk
      }
      // Only output makes a retry unsafe: a usage, a finish or a model alone is overwritten by
      // the next attempt's.
      delivered = delivered || event->has_output();
      const bool taken = co_await sink(std::move(event).value());
      if (!taken) {
        cancel.cancel();
        co_return make_failure(config_.name, Kind::kCancelled, "the client went away");
      }
    }
  }
}

net::awaitable<std::optional<UpstreamFailure>> Upstream::complete(const CloudRequest& request,
                                                                  const EventSink& sink,
                                                                  CancelSignal& cancel) {
  const Attempt once = [&](bool& delivered) { return attempt(request, sink, cancel, delivered); };
  auto failure = co_await with_retries(once, cancel);
  co_return failure;
}

net::awaitable<std::variant<CloudEmbeddings, UpstreamFailure>> Upstream::embed(
    const EmbeddingsCall& call, CancelSignal& cancel) {
  CloudEmbeddings answer;
  const Attempt once = [&](bool& delivered) -> net::awaitable<std::optional<UpstreamFailure>> {
    auto failure = co_await attempt_embeddings(call, cancel, answer);
    delivered = false;  // nothing reaches the caller before the whole answer is checked
    co_return failure;
  };
  auto failure = co_await with_retries(once, cancel);
  if (failure) {
    co_return std::move(*failure);
  }
  co_return answer;
}

net::awaitable<std::optional<UpstreamFailure>> Upstream::attempt_embeddings(
    const EmbeddingsCall& call, CancelSignal& cancel, CloudEmbeddings& answer) {
  const std::string path = "/embeddings";
  const std::string& model = config_.embeddings_models.at(call.public_model);
  std::vector<JsonMember> members;
  auto opened = co_await post(path, *call.body, std::move(members), model, call.egress,
                              "application/json", cancel);
  if (auto* failed = std::get_if<UpstreamFailure>(&opened)) {
    co_return std::move(*failed);
  }
  auto exchange = std::move(std::get<std::unique_ptr<HttpExchange>>(opened));
  CancelRegistration registration(cancel, [raw = exchange.get()] { raw->cancel(); });
  auto whole = co_await read_json(*exchange);
  if (auto* failed = std::get_if<UpstreamFailure>(&whole)) {
    co_return std::move(*failed);
  }
  auto parsed = parse_cloud_embeddings(std::get<std::string>(whole), call.inputs);
  if (!parsed) {
    co_return make_failure(config_.name, Kind::kProtocol,
                           "upstream " + config_.name + ": " + parsed.error().message);
  }
  note_usage_problem(parsed->usage_problem);
  answer = std::move(parsed).value();
  co_return std::nullopt;
}

net::awaitable<Upstream::Opened> Upstream::post(const std::string& path, const nlohmann::json& body,
                                                std::vector<JsonMember> members,
                                                const std::string& model, EgressSend send,
                                                const char* accept, CancelSignal& cancel) {
  send.upstream = config_.name;
  send.model = model;
  std::string model_json;
  append_json_string(model_json, model);
  members.push_back({"model", model_json});
  std::string body_bytes = dump_object_with(body, std::move(members));
  auto admitted = co_await guard_->admit(std::move(body_bytes), send);
  if (auto* refused = std::get_if<EgressRefusal>(&admitted)) {
    UpstreamFailure f =
        make_failure(config_.name, Kind::kRefused,
                     "not sent to upstream " + config_.name + ": " + refused->message);
    f.refused = std::move(*refused);
    co_return f;
  }
  HttpRequest http_request("POST", path, std::get<GuardedBody>(std::move(admitted)));
  http_request.headers["Accept"] = accept;
  if (!config_.api_key.empty()) {
    http_request.headers["Authorization"] = "Bearer " + config_.api_key;
  }
  auto opened = co_await open_exchange(*tls_, endpoint_, http_request, config_.timeouts,
                                       config_.max_response_bytes, &pool_, &cancel);
  if (auto* failed = std::get_if<HttpFailure>(&opened)) {
    co_return named_failure(config_.name, std::move(*failed));
  }
  auto exchange = std::move(std::get<std::unique_ptr<HttpExchange>>(opened));
  if (exchange->status() >= 200 && exchange->status() < 300) {
    co_return std::move(exchange);
  }
  CancelRegistration registration(cancel, [raw = exchange.get()] { raw->cancel(); });
  UpstreamFailure f = make_failure(config_.name, Kind::kStatus, "");
  f.http.status = exchange->status();
  auto error_body = co_await exchange->read_all(kMaxErrorBody);
  if (auto* text = std::get_if<std::string>(&error_body)) {
    f.http.body = *text;
  }
  f.http.message = "upstream " + config_.name + " answered " + std::to_string(exchange->status()) +
                   ": " + error_message_of(f.http.body);
  f.http.retry_after = parse_retry_after(exchange->retry_after());
  co_return f;
}

net::awaitable<Upstream::Body> Upstream::read_json(HttpExchange& exchange) {
  if (exchange.content_type().rfind("application/json", 0) != 0) {
    co_return make_failure(config_.name, Kind::kProtocol,
                           "upstream " + config_.name + " answered with Content-Type '" +
                               exchange.content_type() + "', expected application/json");
  }
  auto whole = co_await exchange.read_all(config_.max_response_bytes);
  if (auto* failed = std::get_if<HttpFailure>(&whole)) {
    co_return named_failure(config_.name, std::move(*failed));
  }
  co_return std::move(std::get<std::string>(whole));
}

net::awaitable<std::optional<UpstreamFailure>> Upstream::with_retries(const Attempt& attempt_once,
                                                                      CancelSignal& cancel) {
  bool delivered = false;
  for (int attempt_no = 0;; ++attempt_no) {
    if (cancel.cancelled()) {
      co_return make_failure(config_.name, Kind::kCancelled, "cancelled");
    }
    if (!breaker_.allow()) {
      auto f =
          make_failure(config_.name, Kind::kConnect,
                       "upstream " + config_.name + " is cooling down after " +
                           std::to_string(breaker_.consecutive_failures()) +
                           " consecutive failures (circuit open for " +
                           std::to_string(breaker_.cooldown_remaining().count()) + " ms more)");
      f.attempts = attempt_no;
      co_return f;
    }
    const CircuitState before = breaker_.state();
    auto failure = co_await attempt_once(delivered);
    if (!failure) {
      breaker_.record_success();
      note_circuit(before, "request succeeded");
      set_online(true, "request succeeded");
      co_return std::nullopt;
    }
    failure->attempts = attempt_no + 1;
    failure->delivered = delivered;
    const HttpFailure& http = failure->http;
    set_last_error(http.message);
    bool retryable = false;
    switch (http.kind) {
      case Kind::kCancelled:
      case Kind::kRefused:
        breaker_.record_abandoned();
        co_return failure;
      case Kind::kStatus:
        if (http.status == 429) {
          breaker_.record_abandoned();  // rate limited is not broken
          retryable = true;
        } else if (http.status >= 500 || http.status == 408) {
          breaker_.record_failure();
          retryable = true;
        } else if (http.status == 401 || http.status == 403 || http.status == 404 ||
                   http.status == 409) {
          breaker_.record_failure();  // our key or model map is wrong for this upstream
        } else {
          breaker_.record_success();  // healthy; the request itself was refused
          failure->client_error = true;
        }
        break;
      case Kind::kTooLarge:
        breaker_.record_failure();
        break;
      case Kind::kConnect:
      case Kind::kTimeout:
      case Kind::kProtocol:
        breaker_.record_failure();
        retryable = true;
        if (http.kind == Kind::kConnect && config_.health.interval_ms > 0) {
          set_online(false, http.message);  // until a probe finds it back
        }
        break;
    }
    note_circuit(before, http.message);
    if (delivered || !retryable || attempt_no >= config_.retry.max_retries) {
      co_return failure;
    }
    if (http.retry_after &&
        http.retry_after->count() > static_cast<int64_t>(config_.retry.max_retry_after_ms)) {
      co_return failure;  // waiting that long is worse than the next upstream
    }
    if (!co_await net::sleep_for(backoff(attempt_no, http), cancel)) {
      co_return make_failure(config_.name, Kind::kCancelled, "cancelled");
    }
  }
}

net::awaitable<void> Upstream::probe_forever(CancelSignal& stop) {
  if (config_.health.interval_ms == 0) {
    co_return;
  }
  config::Timeouts probe_timeouts;
  probe_timeouts.connect_ms = config_.health.timeout_ms;
  probe_timeouts.first_byte_ms = config_.health.timeout_ms;
  probe_timeouts.idle_ms = config_.health.timeout_ms;
  probe_timeouts.total_ms = config_.health.timeout_ms;
  EgressSend send;
  send.purpose = "health";
  send.upstream = config_.name;
  std::string no_body;  // a GET: only the configured path leaves
  auto admitted = co_await guard_->admit(std::move(no_body), send);
  if (auto* refused = std::get_if<EgressRefusal>(&admitted)) {
    set_last_error("health probe not sent: " + refused->message);
    co_return;
  }
  HttpRequest probe("GET", config_.health.path, std::get<GuardedBody>(std::move(admitted)));
  if (!config_.api_key.empty()) {
    probe.headers["Authorization"] = "Bearer " + config_.api_key;
  }
  while (!stop.cancelled()) {
    auto opened = co_await open_exchange(*tls_, endpoint_, probe, probe_timeouts, 1 << 20);
    bool ok = false;
    std::string problem;
    if (auto* exchange = std::get_if<std::unique_ptr<HttpExchange>>(&opened)) {
      ok = (*exchange)->status() >= 200 && (*exchange)->status() < 300;
      problem = "health probe answered " + std::to_string((*exchange)->status());
      if (ok) {
        auto rest = co_await (*exchange)->read_all(1 << 20);
        ok = std::holds_alternative<std::string>(rest);
        problem = "health probe: incomplete response";
      }
    } else {
      problem = "health probe: " + std::get<HttpFailure>(opened).message;
    }
    set_online(ok, ok ? "health probe succeeded" : problem);
    if (!ok) {
      set_last_error(problem);
    }
    if (!co_await net::sleep_for(milliseconds(config_.health.interval_ms), stop)) {
      co_return;
    }
  }
}

}  // namespace tandem::upstream
