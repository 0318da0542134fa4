// The tiers on their own: the edge engine and the cloud upstreams, as building blocks that the
// routing patterns (gateway_patterns.cpp) compose.

#include <algorithm>

#include "common/answer_match.h"
#include "engine/text_stream.h"
#include "net/async_queue.h"
#include "net/offload.h"
#include "server/cloud_fallback.h"
#include "server/egress_guard.h"
#include "server/gateway.h"
#include "server/gateway_util.h"
#include "server/responses.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using upstream::ApiKind;

json bytes_of(const std::string& text) {
  json bytes = json::array();
  for (unsigned char c : text) {
    bytes.push_back(static_cast<int>(c));
  }
  return bytes;
}

// One edge token's logprobs in the request's API format.
json edge_logprobs(const engine::TokenEvent& event, ApiKind kind, size_t text_offset) {
  const std::string token = engine::utf8_sanitize(event.piece);
  if (kind == ApiKind::kChat) {
    json top = json::array();
    for (size_t i = 0; i < event.signals.top.size(); ++i) {
      const std::string alt = engine::utf8_sanitize(event.top_pieces[i]);
      top.push_back({{"token", alt},
                     {"logprob", event.signals.top[i].logprob},
                     {"bytes", bytes_of(event.top_pieces[i])}});
    }
    return json::array({{{"token", token},
                         {"logprob", event.signals.logprob},
                         {"bytes", bytes_of(event.piece)},
                         {"top_logprobs", std::move(top)}}});
  }
  json top = json::object();
  for (size_t i = 0; i < event.signals.top.size(); ++i) {
    top[engine::utf8_sanitize(event.top_pieces[i])] = event.signals.top[i].logprob;
  }
  return {{"tokens", json::array({token})},
          {"token_logprobs", json::array({event.signals.logprob})},
          {"top_logprobs", json::array({std::move(top)})},
          {"text_offset", json::array({text_offset})}};
}

// A cloud chunk's logprobs in the same shape as edge_logprobs (chat: the content list;
// completions: the object of parallel lists). Anything else is no logprobs.
json cloud_logprobs(const json& logprobs, ApiKind kind) {
  if (!logprobs.is_object()) {
    return nullptr;
  }
  if (kind == ApiKind::kChat) {
    const auto content = logprobs.find("content");
    if (content != logprobs.end() && content->is_array()) {
      return *content;
    }
    return nullptr;
  }
  return logprobs;
}

using EdgeItem = std::variant<engine::TokenEvent, engine::CompletionSummary, Error>;

// What the answer parser read from the latest text, as one piece for the client.
void add_deltas(Piece& piece, const std::vector<engine::MessageDelta>& deltas) {
  for (const auto& delta : deltas) {
    piece.text += delta.content;
    piece.reasoning += delta.reasoning;
    if (delta.tool_index) {
      piece.tool_calls.push_back(
          {*delta.tool_index, delta.tool_call.id, delta.tool_call.name, delta.tool_call.arguments});
    }
  }
}

bool has_content(const Piece& piece) {
  return !piece.text.empty() || !piece.reasoning.empty() || !piece.tool_calls.empty() ||
         !piece.logprobs.is_null();
}

}  // namespace

net::awaitable<bool> Gateway::start_answer(Run& run, const std::string& tier) {
  run.record.add_tier(tier);
  if (run.started) {
    co_return true;
  }
  run.started = true;
  run.record.tier = tier;
  run.record.ttft_ms = ms_since(run.record.started_at);
  const bool open = co_await run.sink.begin(run.record);
  co_return open;
}

std::variant<engine::GenerationRequest, ApiError> Gateway::edge_generation(
    const CompletionRequest& request) const {
  if (!engine_) {
    return unavailable("the edge model is not available: " + edge_problem_, "edge_unavailable",
                       ErrorOrigin::kEdge);
  }
  if (!request.cloud_only_fields.empty()) {
    return invalid_request("the edge model cannot honour " + join(request.cloud_only_fields),
                           request.cloud_only_fields.front());
  }
  engine::GenerationRequest generation;
  generation.sampling = request.sampling;
  if (request.kind == ApiKind::kChat) {
    auto formatted = engine_->format_chat(request.chat_request());
    if (!formatted) {
      const Error& error = formatted.error();
      if (error.code == ErrorCode::kInvalidArgument) {
        return invalid_request(error.message, request.json_schema ? "response_format" : "messages");
      }
      return api_error_from(error);
    }
    generation.prompt = std::move(formatted->prompt);
    generation.parse_special = formatted->parse_special;
    generation.constraint = std::move(formatted->constraint);
    generation.answer_format = std::move(formatted->output);
    // The template's own end-of-turn strings first: without them the answer runs on.
    std::vector<std::string> stops = std::move(formatted->stops);
    for (auto& stop : generation.sampling.stop) {
      if (std::find(stops.begin(), stops.end(), stop) == stops.end()) {
        stops.push_back(std::move(stop));
      }
    }
    generation.sampling.stop = std::move(stops);
  } else {
    generation.prompt = request.prompt;
  }
  return generation;
}

net::awaitable<std::variant<engine::GenerationRequest, ApiError>> Gateway::prepare_edge(
    const CompletionRequest& request) {
  const auto prepare = [this, &request] { return edge_generation(request); };
  auto prepared = co_await net::run_on(*edge_workers_, prepare);
  co_return prepared;
}

net::awaitable<std::variant<engine::CompletionSummary, ApiError>> Gateway::edge_generate(
    engine::GenerationRequest generation, const TokenHandler& on_token, CancelSignal& cancel) {
  auto executor = co_await net::asio::this_coro::executor;
  auto queue = std::make_shared<net::AsyncQueue<EdgeItem>>(executor);
  engine::GenerationCallbacks callbacks;
  callbacks.on_token = [queue](const engine::TokenEvent& e) { queue->push(e); };
  callbacks.on_complete = [queue](const engine::CompletionSummary& s) { queue->push(s); };
  callbacks.on_error = [queue](const Error& e) { queue->push(e); };
  // Tokenizing the prompt and building its grammar happen on the edge's workers.
  const auto submit = [this, &generation, &callbacks] {
    return engine_->submit(std::move(generation), std::move(callbacks));
  };
  auto handle = co_await net::run_on(*edge_workers_, submit);
  if (!handle) {
    co_return api_error_from(handle.error());
  }
  auto request_handle = handle.value();
  const size_t registration = cancel.on_cancel([request_handle] { request_handle->cancel(); });
  // However this frame ends (an exception from on_token included), the generation stops with
  // it: its tokens would go to a queue nobody reads (after the summary, a no-op).
  struct Unregister {
    CancelSignal& signal;
    size_t id;
    engine::RequestHandle& handle;
    ~Unregister() {
      signal.remove(id);
      handle.cancel();
    }
  } unregister{cancel, registration, *request_handle};

  bool stopped = false;  // the handler asked to stop: drain to the summary, deliver nothing
  while (true) {
    auto item = co_await queue->pop();
    if (!item) {
      request_handle->cancel();
      co_return unavailable("the edge engine stopped answering", "edge_unavailable",
                            ErrorOrigin::kEdge);
    }
    if (auto* event = std::get_if<engine::TokenEvent>(&*item)) {
      if (stopped) {
        continue;
      }
      if (!co_await on_token(*event)) {
        stopped = true;
        request_handle->cancel();
      }
    } else if (auto* summary = std::get_if<engine::CompletionSummary>(&*item)) {
      // The device's decode speed against its baseline (thermal throttling shows here first).
      monitors_->throttle().record_decode(
          summary->decode_tokens_per_second, static_cast<uint32_t>(summary->completion_tokens),
          static_cast<uint32_t>(engine_->stats().active + 1), unix_ms());
      co_return *summary;
    } else {
      co_return api_error_from(std::get<Error>(*item));
    }
  }
}

std::optional<Piece> Gateway::edge_piece(const engine::TokenEvent& event,
                                         const CompletionRequest& request,
                                         size_t& text_offset) const {
  const bool with_logprobs = request.logprobs && !event.is_flush();
  if (event.text.empty() && !with_logprobs) {
    return std::nullopt;  // held back (half a character, or a possible stop string)
  }
  Piece piece;
  piece.text = event.text;
  if (with_logprobs) {
    piece.logprobs = edge_logprobs(event, request.kind, text_offset);
  }
  text_offset += event.text.size();
  return piece;
}

net::awaitable<std::optional<ApiError>> Gateway::run_edge(Run& run) {
  auto generation = co_await prepare_edge(run.request);
  if (auto* error = std::get_if<ApiError>(&generation)) {
    co_return *error;
  }
  size_t text_offset = 0;
  bool client_left = false;
  std::string answer;  // hashed for the routing trace, then dropped
  // A chat template's answer is parsed as it streams: tool calls and reasoning come out of the
  // text (null format: the text is the answer).
  engine::ChatOutput parsed(std::get<engine::GenerationRequest>(generation).answer_format);
  const TokenHandler relay = [&](const engine::TokenEvent& event) -> net::awaitable<bool> {
    auto piece = edge_piece(event, run.request, text_offset);
    if (!piece) {
      co_return true;
    }
    const std::string text = std::move(piece->text);
    piece->text.clear();
    add_deltas(*piece, parsed.push(text));
    if (!has_content(*piece)) {
      co_return true;
    }
    answer += piece->text;
    // GCC 12 mis-handles co_await inside && / || and temporaries in co_await expressions:
    // one await per statement, arguments named.
    bool delivered = co_await start_answer(run, "edge");
    if (delivered) {
      delivered = co_await run.sink.piece(*piece);
    }
    client_left = !delivered;
    co_return delivered;
  };
  auto result = co_await edge_generate(std::move(std::get<engine::GenerationRequest>(generation)),
                                       relay, run.cancel);
  if (auto* error = std::get_if<ApiError>(&result)) {
    co_return *error;
  }
  const auto& summary = std::get<engine::CompletionSummary>(result);
  if (client_left || summary.finish_reason == engine::FinishReason::kCancelled) {
    co_return client_gone();
  }
  if (!co_await start_answer(run, "edge")) {
    co_return client_gone();
  }
  Piece rest;
  add_deltas(rest, parsed.finish());
  if (has_content(rest)) {
    answer += rest.text;
    const bool sent = co_await run.sink.piece(rest);
    if (!sent) {
      co_return client_gone();
    }
  }
  run.record.edge_usage = edge_usage_of(summary);
  run.record.latency_ms = ms_since(run.record.started_at);
  if (!answer.empty()) {
    run.record.edge_answer_hash = answer_hash(answer);
  }
  Outcome outcome;
  outcome.finish_reason =
      summary.finish_reason == engine::FinishReason::kLength ? "length" : "stop";
  if (parsed.tool_calls() > 0) {
    outcome.finish_reason = "tool_calls";
  }
  outcome.usage = *run.record.edge_usage;
  co_await run.sink.finish(outcome, run.record);
  co_return std::nullopt;
}

void Gateway::add_cloud_usage(DecisionRecord& record, const upstream::Upstream& u,
                              const std::string& model, const upstream::CloudUsage& usage) const {
  record.cloud_upstream = u.name();
  record.cloud_model = u.config().models.at(model);
  TierUsage total = record.cloud_usage.value_or(TierUsage{});
  total.prompt_tokens = add_tokens(total.prompt_tokens, usage.prompt_tokens);
  total.completion_tokens = add_tokens(total.completion_tokens, usage.completion_tokens);
  total.cached_prompt_tokens = add_tokens(total.cached_prompt_tokens, usage.cached_prompt_tokens);
  record.cloud_usage = total;
  record.cloud_cost_usd += (usage.prompt_tokens * u.config().prices.input_per_million +
                            usage.completion_tokens * u.config().prices.output_per_million) /
                           1e6;
}

Status Gateway::create_upstreams() {
  // The guard scans with routing.privacy's rules even where the router's rule is off: the
  // audit then still masks what they find (the guard refuses nothing for it).
  config::PrivacyConfig privacy = config_.routing.privacy;
  privacy.enabled = true;
  auto scanner = routing::PrivacyScanner::create(routing::privacy_rules(privacy));
  if (!scanner) {
    return make_error(scanner.error().code, "routing.privacy: " + scanner.error().message);
  }
  auto guard = std::make_shared<GatewayEgressGuard>(
      config_, std::move(scanner).value(), audit_log_ ? traces_ : nullptr, stats_->registry());
  for (const auto& u : config_.upstreams) {
    auto created = upstream::Upstream::create(u, guard);
    if (!created) {
      return created.error();
    }
    upstreams_.push_back(std::move(created).value());
  }
  return {};
}

upstream::EgressSend Gateway::egress(const DecisionRecord& record, const char* purpose) {
  upstream::EgressSend send;
  send.purpose = purpose;
  send.request_id = record.request_id;
  send.client = record.client;
  send.may_leave = record.may_leave_device;
  return send;
}

bool Gateway::serves_natively(const std::string& model) const {
  return std::any_of(upstreams_.begin(), upstreams_.end(), [&](const auto& u) {
    return u->config().api == config::UpstreamApi::kResponses && u->serves(model);
  });
}

net::awaitable<std::optional<upstream::UpstreamFailure>> Gateway::cloud_in_chat(
    Run& run, upstream::Upstream& u, const std::string& model, CloudResult& result) {
  const CompletionRequest& request = run.request;
  upstream::CloudRequest cloud;
  cloud.kind = request.kind;
  cloud.public_model = model;
  cloud.body = &request.cloud_body;
  cloud.stream = request.stream;
  cloud.egress = egress(run.record, "answer");
  bool model_seen = false;
  upstream::Upstream::EventSink relay = [&](upstream::CloudEvent&& event) -> net::awaitable<bool> {
    if (event.usage) {
      result.usage = event.usage;
    }
    if (event.finish_reason) {
      result.finish_reason = *event.finish_reason;
    }
    if (!model_seen && !event.model.empty()) {
      model_seen = true;
      observe_cloud_model(u, event.model);
    }
    if (!event.has_output()) {
      co_return true;
    }
    // The first content fixes the tier and opens the response.
    run.record.cloud_upstream = u.name();
    run.record.cloud_model = u.config().models.at(model);
    if (!co_await start_answer(run, "cloud")) {
      co_return false;
    }
    Piece piece;
    piece.text = std::move(event.text);
    piece.reasoning = std::move(event.reasoning);
    piece.tool_calls = tool_call_deltas(event.tool_calls);
    if (request.logprobs) {
      piece.logprobs = cloud_logprobs(event.logprobs, request.kind);
    }
    const bool delivered = co_await run.sink.piece(piece);
    co_return delivered;
  };
  auto failure = co_await u.complete(cloud, relay, run.cancel);
  co_return failure;
}

void Gateway::observe_cloud_model(const upstream::Upstream& u, const std::string& reported) const {
  if (!reported.empty()) {
    monitors_->skew().observe_cloud(u.name(), reported, unix_ms());
  }
}

net::awaitable<std::optional<ApiError>> Gateway::run_cloud(Run& run) {
  const CompletionRequest& request = run.request;
  DecisionRecord& record = run.record;
  const std::string model = request.model == kRoutedModel ? cloud_model() : request.model;
  // A Responses request goes as it came while the client has nothing yet: after an edge draft
  // (a cascade's revision) the answer continues in the events already begun.
  const auto native = [&](const upstream::Upstream& u) {
    return !request.responses_body.is_null() && !run.started &&
           u.config().api == config::UpstreamApi::kResponses;
  };
  const CloudCannotRun cannot_run = [&](const upstream::Upstream& u) -> std::optional<CloudSkip> {
    if (native(u) || !request.needs_native) {
      return std::nullopt;
    }
    const std::string why =
        u.name() + " speaks chat completions, which cannot run " + join(request.cloud_only_fields);
    return CloudSkip{why, why};
  };
  CloudResult result;
  const CloudTry attempt = [&](upstream::Upstream& u) -> net::awaitable<CloudAttempt> {
    const bool started_before = run.started;
    result = CloudResult{};
    CloudAttempt tried;
    if (native(u)) {
      tried.failure = co_await cloud_native(run, u, model, result);
    } else {
      tried.failure = co_await cloud_in_chat(run, u, model, result);
    }
    tried.reached_client = run.started && !started_before;
    co_return tried;
  };
  const std::vector<upstream::Upstream*> candidates =
      upstreams_serving(upstreams_, model, CloudService::kChat);
  const std::string what = "'" + model + "'";
  auto answered = co_await try_cloud_upstreams(candidates, what, record, attempt, cannot_run);
  if (auto* error = std::get_if<ApiError>(&answered)) {
    co_return std::move(*error);
  }
  upstream::Upstream& u = *std::get<upstream::Upstream*>(answered);
  // The end of an empty answer opens the response too.
  record.cloud_upstream = u.name();
  record.cloud_model = u.config().models.at(model);
  if (!co_await start_answer(run, "cloud")) {
    co_return client_gone();
  }
  add_cloud_usage(record, u, model, result.usage.value_or(upstream::CloudUsage{}));
  record.latency_ms = ms_since(record.started_at);
  const Outcome outcome{result.finish_reason, *record.cloud_usage};
  if (result.native) {
    co_await run.sink.native_finish(*result.native, outcome, record);
  } else {
    co_await run.sink.finish(outcome, record);
  }
  co_return std::nullopt;
}

net::awaitable<std::variant<Gateway::CloudAnswer, ApiError>> Gateway::cloud_answer(
    ApiKind kind, json body, CancelSignal& cancel, DecisionRecord& record, const char* purpose) {
  const std::string& model = cloud_model();
  CloudAnswer answer;
  std::string reported_model;
  const CloudTry attempt = [&](upstream::Upstream& u) -> net::awaitable<CloudAttempt> {
    upstream::CloudRequest cloud;
    cloud.kind = kind;
    cloud.public_model = model;
    cloud.body = &body;
    cloud.stream = false;
    cloud.egress = egress(record, purpose);
    answer = CloudAnswer{};
    reported_model.clear();
    upstream::Upstream::EventSink collect =
        [&](upstream::CloudEvent&& event) -> net::awaitable<bool> {
      if (event.usage) {
        answer.usage = *event.usage;
      }
      if (event.finish_reason) {
        answer.finish_reason = *event.finish_reason;
      }
      if (reported_model.empty()) {
        reported_model = event.model;
      }
      Piece piece;
      piece.text = std::move(event.text);
      piece.reasoning = std::move(event.reasoning);
      piece.tool_calls = tool_call_deltas(event.tool_calls);
      piece.logprobs = cloud_logprobs(event.logprobs, kind);
      answer.add(kind, piece);
      co_return true;
    };
    CloudAttempt tried;
    tried.failure = co_await u.complete(cloud, collect, cancel);
    co_return tried;  // nothing reaches the client from here: the caller decides what does
  };
  const std::vector<upstream::Upstream*> candidates =
      upstreams_serving(upstreams_, model, CloudService::kChat);
  const std::string what = "'" + model + "'";
  const CloudCannotRun any_upstream_can;  // the body is plain chat or completions
  auto answered = co_await try_cloud_upstreams(candidates, what, record, attempt, any_upstream_can);
  if (auto* error = std::get_if<ApiError>(&answered)) {
    co_return std::move(*error);
  }
  const upstream::Upstream& u = *std::get<upstream::Upstream*>(answered);
  add_cloud_usage(record, u, model, answer.usage);
  observe_cloud_model(u, reported_model);
  co_return answer;
}

}  // namespace tandem::server
