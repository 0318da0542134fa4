#include "server/gateway.h"

#include <algorithm>

#include "engine/text_stream.h"
#include "net/async_queue.h"

namespace tandem::server {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using upstream::ApiKind;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

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

// A cloud chunk's logprobs in the same shape as edge_logprobs (chat: the content list).
json cloud_logprobs(const json& logprobs, ApiKind kind) {
  if (logprobs.is_null()) {
    return nullptr;
  }
  if (kind == ApiKind::kChat) {
    if (logprobs.is_object() && logprobs.contains("content") && logprobs["content"].is_array()) {
      return logprobs["content"];
    }
    return nullptr;
  }
  return logprobs;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

ApiError unavailable(std::string message, std::string code) {
  ApiError e;
  e.status = 503;
  e.type = "server_error";
  e.code = std::move(code);
  e.message = std::move(message);
  return e;
}

using EdgeItem = std::variant<engine::TokenEvent, engine::CompletionSummary, Error>;

}  // namespace

json DecisionRecord::to_json() const {
  auto usage = [](const std::optional<TierUsage>& u) -> json {
    if (!u) {
      return nullptr;
    }
    return {{"prompt_tokens", u->prompt_tokens}, {"completion_tokens", u->completion_tokens}};
  };
  json fallback_list = json::array();
  for (const auto& f : fallbacks) {
    fallback_list.push_back({{"from", f.from}, {"to", f.to}, {"reason", f.reason}});
  }
  return {
      {"tier", tier.empty() ? json(nullptr) : json(tier)},  // null: no tier ran
      {"reasons", reasons},
      {"models",
       {{"edge",
         edge_model.empty() ? json(nullptr) : json{{"name", edge_model}, {"sha256", edge_sha256}}},
        {"cloud", cloud_upstream.empty()
                      ? json(nullptr)
                      : json{{"upstream", cloud_upstream}, {"model", cloud_model}}}}},
      {"usage", {{"edge", usage(edge_usage)}, {"cloud", usage(cloud_usage)}}},
      {"cost_usd", {{"cloud", cloud_cost_usd}}},
      {"ttft_ms", ttft_ms},
      {"latency_ms", latency_ms},
      {"fallbacks", std::move(fallback_list)},
      {"degraded", degraded ? json{{"reason", *degraded}} : json(nullptr)},
  };
}

Gateway::Gateway(config::GatewayConfig config, std::unique_ptr<engine::Engine> engine,
                 std::string edge_problem,
                 std::vector<std::unique_ptr<upstream::Upstream>> upstreams)
    : config_(std::move(config)),
      engine_(std::move(engine)),
      edge_problem_(std::move(edge_problem)),
      upstreams_(std::move(upstreams)) {
  if (!config_.edge.name.empty()) {
    edge_name_ = config_.edge.name;
  } else if (engine_) {
    edge_name_ = engine_->model().name;
  }
}

std::vector<ModelInfo> Gateway::models() const {
  std::vector<ModelInfo> out;
  out.push_back({kRoutedModel, "tandem"});
  if (engine_) {
    out.push_back({edge_name_, "edge"});
  }
  for (const auto& u : upstreams_) {
    for (const auto& [name, _] : u->config().models) {
      const bool seen =
          std::any_of(out.begin(), out.end(), [&](const ModelInfo& m) { return m.id == name; });
      if (!seen) {
        out.push_back({name, u->name()});
      }
    }
  }
  return out;
}

void Gateway::start_probes(net::asio::any_io_executor executor) {
  for (const auto& u : upstreams_) {
    net::asio::co_spawn(executor, u->probe_forever(stop_probes_), net::asio::detached);
  }
}

void Gateway::stop() {
  stop_probes_.cancel();
}

net::awaitable<std::optional<ApiError>> Gateway::run_edge(const CompletionRequest& request,
                                                          ResponseSink& sink, CancelSignal& cancel,
                                                          DecisionRecord& record, bool& started) {
  if (!engine_) {
    co_return unavailable("the edge model is not available: " + edge_problem_, "edge_unavailable");
  }
  if (!request.cloud_only_fields.empty()) {
    co_return invalid_request("the edge model cannot honour " + join(request.cloud_only_fields),
                              request.cloud_only_fields.front());
  }
  engine::GenerationRequest generation;
  generation.sampling = request.sampling;
  if (request.kind == ApiKind::kChat) {
    auto rendered = engine_->chat_template().render(request.messages);
    if (!rendered) {
      co_return api_error_from(rendered.error());
    }
    generation.prompt = std::move(rendered).value();
    generation.parse_special = engine_->chat_template().needs_special_parsing();
  } else {
    generation.prompt = request.prompt;
  }

  auto executor = co_await net::asio::this_coro::executor;
  auto queue = std::make_shared<net::AsyncQueue<EdgeItem>>(executor);
  engine::GenerationCallbacks callbacks;
  callbacks.on_token = [queue](const engine::TokenEvent& e) { queue->push(e); };
  callbacks.on_complete = [queue](const engine::CompletionSummary& s) { queue->push(s); };
  callbacks.on_error = [queue](const Error& e) { queue->push(e); };
  auto handle = engine_->submit(std::move(generation), std::move(callbacks));
  if (!handle) {
    co_return api_error_from(handle.error());
  }
  auto request_handle = handle.value();
  const size_t registration = cancel.on_cancel([request_handle] { request_handle->cancel(); });
  struct Unregister {
    CancelSignal& signal;
    size_t id;
    ~Unregister() { signal.remove(id); }
  } unregister{cancel, registration};

  auto start_answer = [&]() -> net::awaitable<bool> {
    if (started) {
      co_return true;
    }
    started = true;
    record.tier = "edge";
    record.ttft_ms = ms_since(record.started_at);
    co_return co_await sink.begin(record);
  };

  size_t text_offset = 0;
  while (true) {
    auto item = co_await queue->pop();
    if (!item) {
      request_handle->cancel();
      co_return unavailable("the edge engine stopped answering", "edge_unavailable");
    }
    if (auto* event = std::get_if<engine::TokenEvent>(&*item)) {
      const bool with_logprobs = request.logprobs && !event->is_flush();
      if (event->text.empty() && !with_logprobs) {
        continue;  // held back (half a character, or a possible stop string)
      }
      Piece piece;
      piece.text = event->text;
      if (with_logprobs) {
        piece.logprobs = edge_logprobs(*event, request.kind, text_offset);
      }
      text_offset += event->text.size();
      // GCC 12 mis-handles co_await inside && / || and temporaries in co_await
      // expressions: one await per statement, arguments named.
      bool delivered = co_await start_answer();
      if (delivered) {
        delivered = co_await sink.piece(piece);
      }
      if (!delivered) {
        request_handle->cancel();
        co_return api_error_from(make_error(ErrorCode::kCancelled, "the client went away"));
      }
    } else if (auto* summary = std::get_if<engine::CompletionSummary>(&*item)) {
      if (!co_await start_answer()) {
        co_return api_error_from(make_error(ErrorCode::kCancelled, "the client went away"));
      }
      record.edge_usage = TierUsage{summary->prompt_tokens, summary->completion_tokens};
      record.latency_ms = ms_since(record.started_at);
      Outcome outcome;
      outcome.finish_reason =
          summary->finish_reason == engine::FinishReason::kLength ? "length" : "stop";
      outcome.usage = *record.edge_usage;
      co_await sink.finish(outcome, record);
      co_return std::nullopt;
    } else {
      co_return api_error_from(std::get<Error>(*item));
    }
  }
}

net::awaitable<std::optional<ApiError>> Gateway::run_cloud(const CompletionRequest& request,
                                                           ResponseSink& sink, CancelSignal& cancel,
                                                           DecisionRecord& record, bool& started) {
  const std::string model =
      request.model == kRoutedModel ? config_.routing.cloud_model : request.model;
  std::vector<upstream::Upstream*> candidates;
  for (const auto& u : upstreams_) {
    if (u->serves(model)) {
      candidates.push_back(u.get());
    }
  }
  if (candidates.empty()) {
    co_return unavailable("no cloud upstream is configured", "cloud_unavailable");
  }
  std::vector<std::string> problems;
  for (size_t i = 0; i < candidates.size(); ++i) {
    upstream::Upstream& u = *candidates[i];
    if (!u.online()) {
      problems.push_back(u.name() + " is offline (" + u.status().last_error + ")");
      record.reasons.push_back("skipped " + u.name() + ": offline");
      continue;
    }
    upstream::CloudRequest cloud;
    cloud.kind = request.kind;
    cloud.public_model = model;
    cloud.body = request.cloud_body;
    cloud.stream = request.stream;
    std::optional<upstream::CloudUsage> usage;
    std::string finish_reason = "stop";
    // The first content (or the end of an empty answer) fixes the tier and opens the response.
    auto start_answer = [&]() -> net::awaitable<bool> {
      if (started) {
        co_return true;
      }
      started = true;
      record.tier = "cloud";
      record.cloud_upstream = u.name();
      record.cloud_model = u.config().models.at(model);
      record.ttft_ms = ms_since(record.started_at);
      const bool open = co_await sink.begin(record);
      co_return open;
    };
    upstream::Upstream::EventSink relay =
        [&](upstream::CloudEvent&& event) -> net::awaitable<bool> {
      if (event.usage) {
        usage = event.usage;
      }
      if (event.finish_reason) {
        finish_reason = *event.finish_reason;
      }
      if (event.text.empty() && event.logprobs.is_null()) {
        co_return true;
      }
      if (!co_await start_answer()) {
        co_return false;
      }
      Piece piece;
      piece.text = std::move(event.text);
      if (request.logprobs) {
        piece.logprobs = cloud_logprobs(event.logprobs, request.kind);
      }
      const bool delivered = co_await sink.piece(piece);
      co_return delivered;
    };
    auto failure = co_await u.complete(cloud, relay, cancel);
    if (!failure) {
      if (!co_await start_answer()) {
        co_return api_error_from(make_error(ErrorCode::kCancelled, "the client went away"));
      }
      const upstream::CloudUsage used = usage.value_or(upstream::CloudUsage{});
      record.cloud_usage = TierUsage{used.prompt_tokens, used.completion_tokens};
      record.cloud_cost_usd = (used.prompt_tokens * u.config().prices.input_per_million +
                               used.completion_tokens * u.config().prices.output_per_million) /
                              1e6;
      record.latency_ms = ms_since(record.started_at);
      const Outcome outcome{finish_reason, *record.cloud_usage};
      co_await sink.finish(outcome, record);
      co_return std::nullopt;
    }
    const auto& http = failure->http;
    if (failure->delivered || started || http.kind == upstream::HttpFailure::Kind::kCancelled) {
      ApiError e = unavailable(http.message, "upstream_error");
      e.status = 502;
      co_return e;
    }
    if (failure->client_error) {
      ApiError e = invalid_request(http.message);
      e.status = http.status;
      co_return e;
    }
    problems.push_back(http.message);
    if (i + 1 < candidates.size()) {
      record.fallbacks.push_back(
          {"cloud:" + u.name(), "cloud:" + candidates[i + 1]->name(), http.message});
    }
  }
  ApiError e = unavailable("every cloud upstream for '" + model + "' failed: " + join(problems),
                           "cloud_unavailable");
  e.status = 502;
  co_return e;
}

net::awaitable<void> Gateway::execute(CompletionRequest request, ResponseSink& sink,
                                      CancelSignal& cancel) {
  DecisionRecord record;
  if (engine_) {
    record.edge_model = edge_name_;
    record.edge_sha256 = engine_->model().sha256;
  }
  enum class Tier { kEdge, kCloud };
  std::vector<Tier> plan;
  const bool has_cloud = !config_.routing.cloud_model.empty();
  const bool served_by_cloud = std::any_of(upstreams_.begin(), upstreams_.end(),
                                           [&](const auto& u) { return u->serves(request.model); });

  if (request.model == kRoutedModel) {
    if (!request.cloud_only_fields.empty() && has_cloud) {
      record.reasons.push_back("the request uses " + join(request.cloud_only_fields) +
                               ", which only the cloud model provides");
      plan = {Tier::kCloud};
    } else if (engine_) {
      record.reasons.push_back("model 'tandem': edge first, cloud on failure");
      plan = {Tier::kEdge};
      if (config_.routing.edge_to_cloud && has_cloud) {
        plan.push_back(Tier::kCloud);
      }
    } else if (has_cloud) {
      record.reasons.push_back("the edge model is unavailable (" + edge_problem_ + ")");
      plan = {Tier::kCloud};
    } else {
      const ApiError error =
          unavailable("no tier can answer: the edge model is unavailable (" + edge_problem_ +
                          ") and no cloud upstream is configured",
                      "no_tier");
      co_await sink.fail(error, record);
      co_return;
    }
  } else if (!edge_name_.empty() && request.model == edge_name_) {
    record.reasons.push_back("model '" + request.model + "' is the edge model");
    plan = {Tier::kEdge};
  } else if (served_by_cloud) {
    record.reasons.push_back("model '" + request.model + "' is a cloud model");
    plan = {Tier::kCloud};
    if (config_.routing.cloud_to_edge && engine_ && request.cloud_only_fields.empty()) {
      plan.push_back(Tier::kEdge);
    }
  } else {
    std::vector<std::string> names;
    for (const auto& m : models()) {
      names.push_back(m.id);
    }
    const ApiError error = api_error_from(
        make_error(ErrorCode::kNotFound,
                   "model '" + request.model + "' does not exist; available: " + join(names)));
    co_await sink.fail(error, record);
    co_return;
  }

  for (size_t i = 0; i < plan.size(); ++i) {
    bool started = false;
    std::optional<ApiError> error;
    if (plan[i] == Tier::kEdge) {
      error = co_await run_edge(request, sink, cancel, record, started);
    } else {
      error = co_await run_cloud(request, sink, cancel, record, started);
    }
    if (!error) {
      co_return;
    }
    const bool last = i + 1 == plan.size();
    // A request the client got wrong fails the same on every tier; a prompt too long for the
    // edge's context is the exception.
    const bool clients_fault = error->status == 400 && error->code != "context_length_exceeded";
    if (started || cancel.cancelled() || last || clients_fault || error->status == 499) {
      record.latency_ms = ms_since(record.started_at);
      co_await sink.fail(*error, record);
      co_return;
    }
    const bool to_edge = plan[i + 1] == Tier::kEdge;
    record.fallbacks.push_back(
        {to_edge ? "cloud" : "edge", to_edge ? "edge" : "cloud", error->message});
    record.reasons.push_back(std::string(to_edge ? "cloud" : "edge") +
                             " failed: " + error->message);
    if (to_edge) {
      record.degraded = "the cloud tier is unavailable (" + error->message +
                        "); this answer comes from the on-device model '" + edge_name_ +
                        "', which is less capable";
    }
  }
}

}  // namespace tandem::server
