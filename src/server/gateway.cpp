#include "server/gateway.h"

#include <algorithm>

#include "common/log.h"
#include "net/spawn.h"
#include "routing/query_cluster.h"
#include "server/gateway_shadow.h"
#include "server/gateway_traces.h"
#include "server/gateway_util.h"
#include "server/patterns.h"
#include "server/status_api.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using routing::Pattern;

// Forwards to the session's sink and remembers whether the response was ended (finish() or
// fail()), so that a failure escaping a request's execution answers only a client that has
// no answer yet.
class TrackedSink final : public ResponseSink {
 public:
  explicit TrackedSink(ResponseSink& inner) : inner_(inner) {}
  bool ended() const { return ended_; }

  net::awaitable<bool> begin(const DecisionRecord& record) override {
    const bool open = co_await inner_.begin(record);
    co_return open;
  }
  net::awaitable<bool> piece(const Piece& piece) override {
    const bool delivered = co_await inner_.piece(piece);
    co_return delivered;
  }
  net::awaitable<bool> revise(const Revision& revision) override {
    const bool delivered = co_await inner_.revise(revision);
    co_return delivered;
  }
  net::awaitable<void> finish(const Outcome& outcome, const DecisionRecord& record) override {
    ended_ = true;
    co_await inner_.finish(outcome, record);
  }
  net::awaitable<void> fail(const ApiError& error, const DecisionRecord& record) override {
    ended_ = true;
    co_await inner_.fail(error, record);
  }

 private:
  ResponseSink& inner_;
  bool ended_ = false;
};

// Worker threads preparing edge requests (chat template, tokens, grammar): two keep one long
// prompt from delaying the next while leaving the cores to the inference thread.
constexpr size_t kEdgeWorkerThreads = 2;
// Store calls mostly wait (a disk, a network round trip): two threads keep one slow call from
// queueing the others behind it.
constexpr size_t kStoreWorkerThreads = 2;

// The text of a message list the way the router reads it: the last user message, the system
// prompt, and everything (what would be sent out) for the scans.
struct PromptText {
  const nlohmann::json* body = nullptr;  // the client's body as the cloud receives it
  std::string all;
  std::string system;
  std::string last_user;
  size_t turns = 0;
};

PromptText prompt_text(const CompletionRequest& request) {
  PromptText text;
  text.body = &request.cloud_body;
  if (request.kind == upstream::ApiKind::kCompletion) {
    text.all = request.prompt;
    text.last_user = request.prompt;
    text.turns = 1;
    return text;
  }
  for (const auto& m : request.messages) {
    if (!text.all.empty()) {
      text.all += '\n';
    }
    text.all += m.content;
    if (m.role == "system" || m.role == "developer") {
      text.system += m.content;
    } else {
      ++text.turns;
      if (m.role == "user") {
        text.last_user = m.content;
      }
    }
  }
  return text;
}

// The error of a decision no tier may answer. The client's to fix (400) when the request needs
// a field only the cloud provides but may not leave the device, or carries content the privacy
// scan cannot read under opaque_content: refuse; else no tier is available (503).
ApiError no_tier_error(const routing::Decision& decision, const CompletionRequest& request) {
  std::vector<std::string> details;
  for (const auto& r : decision.reasons) {
    details.push_back(r.detail);
  }
  for (const auto& r : decision.reasons) {
    if (r.code == routing::kNeedsCloudCode) {
      const std::string& field = request.cloud_only_fields.front();
      return invalid_request("the request cannot be answered: " + join(details, "; "),
                             field.substr(0, field.find('=')), "private_data_needs_cloud");
    }
    if (r.code == routing::kOpaqueRefusedCode) {
      return invalid_request("the request cannot be answered: " + join(details, "; "), "",
                             "opaque_content_refused");
    }
  }
  return unavailable("no tier can answer: " + join(details, "; "),
                     decision.cloud_allowed ? "no_tier" : "edge_unavailable_for_private_data");
}

// What the router reads; views into `text`, which must outlive it.
routing::RouteInput route_input(const CompletionRequest& request, const RequestContext& context,
                                const PromptText& text) {
  routing::RouteInput input;
  input.text = text.all;
  input.document = text.body;
  input.prompt.system = text.system;
  input.prompt.last_user = text.last_user;
  input.prompt.total_chars = text.all.size();
  input.prompt.turns = std::max<size_t>(text.turns, 1);
  input.hints = context.hints;
  input.hints.cloud_only_fields = request.cloud_only_fields;
  if (input.hints.client.empty()) {
    input.hints.client = request.user;
  }
  return input;
}

// One JSON log line per routed request: the decision, never the prompt unless
// operations.log_prompts asks for it (`prompt` is then the last user message).
void trace_decision(const DecisionRecord& record, const std::string& prompt) {
  std::vector<std::string> codes;
  if (record.routing.contains("decision")) {
    for (const auto& reason : record.routing["decision"]["reasons"]) {
      codes.push_back(reason["code"].get<std::string>());
    }
  }
  LogFields fields = {{"request_id", record.request_id},
                      {"tier", record.tier.empty() ? "none" : record.tier},
                      {"tiers", join(record.tiers)},
                      {"pattern", record.pattern},
                      {"reasons", join(codes)},
                      {"data_left_device", record.data_left_device ? "true" : "false"},
                      {"cost_usd", record.cost_json().dump()},
                      {"latency_ms", std::to_string(record.latency_ms)}};
  if (!record.escalation.is_null()) {
    fields.emplace_back("escalation", record.escalation["reason"].get<std::string>());
  }
  if (!record.review.is_null()) {
    fields.emplace_back("ticket", record.review["ticket"].get<std::string>());
  }
  if (!record.client.empty()) {
    fields.emplace_back("client", record.client);
  }
  if (!prompt.empty()) {
    fields.emplace_back("prompt", prompt);
  }
  log_event(LogLevel::kInfo, "routing", "decision", fields);
}

enum class Step { kEdge, kCloud, kCascade, kSpeculative, kCollaborate, kReview };

bool edge_first(Step step) {
  return step == Step::kEdge || step == Step::kCascade || step == Step::kSpeculative ||
         step == Step::kCollaborate;
}

}  // namespace

Result<std::shared_ptr<Gateway>> Gateway::create(config::GatewayConfig config,
                                                 std::unique_ptr<engine::Engine> engine,
                                                 std::string edge_problem) {
  auto router = routing::Router::create(config.routing);
  if (!router) {
    return router.error();
  }
  const std::string path = config.routing.database.empty() ? ":memory:" : config.routing.database;
  auto database = store::Database::open(path);
  if (!database) {
    return make_error(database.error().code, "routing.database: " + database.error().message);
  }
  std::shared_ptr<Gateway> gateway(
      new Gateway(std::move(config), std::move(engine), std::move(edge_problem)));
  gateway->router_ = std::move(router).value();
  gateway->database_ = std::move(database).value();
  gateway->reviews_ = std::make_unique<store::SqliteReviewQueue>(gateway->database_);
  gateway->memory_ = std::make_unique<store::SqliteConsistencyMemory>(
      gateway->database_, gateway->config_.routing.consistency.max_routes);
  gateway->stats_ = std::make_unique<GatewayStats>();
  gateway->monitors_ = std::make_unique<Monitors>(gateway->config_.operations);
  if (gateway->engine_) {
    const auto& model = gateway->engine_->model();
    gateway->monitors_->skew().set_edge({model.name, model.sha256, model.version}, unix_ms());
  }
  if (Status traces = gateway->start_traces(path); !traces) {
    return traces.error();
  }
  if (Status upstreams = gateway->create_upstreams(); !upstreams) {
    return upstreams.error();
  }
  if (Status shared = gateway->open_shared_store(); !shared) {
    return shared.error();
  }
  // Shadow mode's writer gets a connection of its own for a database file, as the trace writer
  // does, so that its transactions never hold the one the request path uses.
  std::shared_ptr<store::Database> shadow_db = gateway->database_;
  if (gateway->config_.routing.shadow.enabled && path != ":memory:") {
    auto own = store::Database::open(path);
    if (!own) {
      return make_error(own.error().code, "routing.database (shadow): " + own.error().message);
    }
    shadow_db = std::move(own).value();
  }
  gateway->shadow_log_ = std::make_unique<store::ShadowLog>(std::move(shadow_db));
  if (gateway->config_.routing.shadow.enabled) {
    gateway->shadow_ = std::make_unique<ShadowMode>(*gateway->shadow_log_);
  }
  register_scrape_metrics(*gateway);
  return gateway;
}

Gateway::Gateway(config::GatewayConfig config, std::unique_ptr<engine::Engine> engine,
                 std::string edge_problem)
    : config_(std::move(config)),
      engine_(std::move(engine)),
      edge_workers_(std::make_unique<net::asio::thread_pool>(kEdgeWorkerThreads)),
      edge_problem_(std::move(edge_problem)),
      started_unix_ms_(unix_ms()),
      store_workers_(std::make_unique<net::asio::thread_pool>(kStoreWorkerThreads)) {
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
  auto add = [&out](const std::string& name, const std::string& owner) {
    const bool seen =
        std::any_of(out.begin(), out.end(), [&](const ModelInfo& m) { return m.id == name; });
    if (!seen) {
      out.push_back({name, owner});
    }
  };
  for (const auto& u : upstreams_) {
    for (const auto& [name, _] : u->config().models) {
      add(name, u->name());
    }
    for (const auto& [name, _] : u->config().embeddings_models) {
      add(name, u->name());  // answered on /v1/embeddings only
    }
  }
  return out;
}

void Gateway::start_probes(net::asio::any_io_executor executor) {
  for (const auto& u : upstreams_) {
    // A strand of its own: net::sleep_for cancels its timer through a post to the coroutine's
    // executor, which on the bare io_context could run beside the coroutine (a data race).
    net::asio::co_spawn(net::asio::make_strand(executor), u->probe_forever(stop_probes_),
                        net::log_failure("upstream", "health_probe"));
  }
  start_monitors(executor);
}

Gateway::~Gateway() = default;

void Gateway::join_workers() {
  edge_workers_->join();
  store_workers_->join();
}

void Gateway::stop() {
  stop_probes_.cancel();
  if (memory_sweeper_) {
    memory_sweeper_->stop();
  }
  if (shadow_) {
    shadow_->stop();  // shadow edge generations end now, not with the engine
  }
}

routing::HealthSnapshot Gateway::health() const {
  routing::HealthSnapshot h;
  h.edge_available = engine_ != nullptr;
  h.edge_problem = edge_problem_;
  if (engine_) {
    // operations.version: an edge model the policy refuses is as good as none.
    const auto check = monitors_->skew().check_edge();
    if (!check.allowed) {
      h.edge_available = false;
      h.edge_problem = check.problem;
    }
    std::string why;
    h.edge_throttled = monitors_->edge_throttled(&why);
    h.throttle_reason = why;
  }
  h.cloud_configured = false;
  h.cloud_online = false;
  std::vector<std::string> problems;
  for (const auto& u : upstreams_) {
    if (!u->serves(cloud_model())) {
      continue;
    }
    h.cloud_configured = true;
    if (u->online()) {
      h.cloud_online = true;
    } else {
      problems.push_back(u->name() + ": " + u->status().last_error);
    }
  }
  h.cloud_problem = join(problems);
  monitors_->observe_cloud(h.cloud_configured, h.cloud_online, h.cloud_problem, unix_ms());
  return h;
}

json Gateway::explain_route(const CompletionRequest& request, const RequestContext& context,
                            bool detailed) const {
  const PromptText text = prompt_text(request);
  const routing::RouteInput input = route_input(request, context, text);
  routing::RouteSignals signals = router_->signals(input);
  if (auto* gaming = monitors_->gaming(); gaming != nullptr && !input.hints.client.empty()) {
    signals.escalation_capped = gaming->escalation_capped(
        gaming_identity(input.hints.client, !config_.server.api_keys.empty()), unix_ms());
  }
  if (config_.routing.consistency.enabled && !input.hints.client.empty()) {
    signals.remembered =
        remembered_tier(input.hints.client, routing::query_cluster_keys(text.last_user));
  }
  const routing::HealthSnapshot h = health();
  routing::Decision decision = router_->decide(signals, h);
  if (shadow_applies(config_.routing.shadow, signals, decision)) {
    decision = shadow_decision(decision);
  }
  return router_->explain(input, signals, decision, h, detailed);
}

// What execute() keeps of a request for its last line of defence: the record and trace the
// request filled so far, and whether it already answered the client and wrote its trace.
struct Gateway::Execution {
  DecisionRecord record;
  store::TraceRecord trace;
  bool traced = false;
};

net::awaitable<void> Gateway::execute(CompletionRequest request, RequestContext context,
                                      ResponseSink& sink, CancelSignal& cancel) {
  Execution execution;
  TrackedSink tracked(sink);
  std::exception_ptr failure;
  try {
    co_await execute_request(std::move(request), std::move(context), tracked, cancel, execution);
  } catch (...) {
    failure = std::current_exception();
  }
  if (!failure) {
    co_return;
  }
  // A fault of ours outside every tier (the routing, the bookkeeping): the client still gets
  // an answer when it has none yet, and the request still leaves its trace.
  DecisionRecord& record = execution.record;
  const ApiError error = internal_error(record.request_id);
  log_event(LogLevel::kError, "gateway", "request_failed",
            {{"request_id", record.request_id}, {"message", net::exception_text(failure)}});
  if (!tracked.ended()) {
    record.latency_ms = ms_since(record.started_at);
    co_await tracked.fail(error, record);
  }
  if (!execution.traced) {
    write_trace(std::move(execution.trace), record, true);
  }
}

net::awaitable<void> Gateway::execute_request(CompletionRequest request, RequestContext context,
                                              ResponseSink& sink, CancelSignal& cancel,
                                              Execution& execution) {
  DecisionRecord& record = execution.record;
  record.request_id = context.request_id;
  if (engine_) {
    record.edge_model = edge_name_;
    record.edge_sha256 = engine_->model().sha256;
  }
  for (const auto& u : upstreams_) {
    if (u->serves(cloud_model())) {
      record.cloud_prices = u->config().prices;
      break;
    }
  }
  std::vector<Step> plan;
  std::unique_ptr<ShadowRequest> shadow;  // shadow mode's view of this request, when it applies
  const bool has_cloud = !cloud_model().empty();
  const bool served_by_cloud = std::any_of(upstreams_.begin(), upstreams_.end(),
                                           [&](const auto& u) { return u->serves(request.model); });
  bool cloud_allowed = true;
  std::vector<uint64_t> cluster_keys;
  std::string client;
  bool remember = false;
  routing::QueryKind kind = routing::QueryKind::kOpen;
  double complexity = 0.5;
  bool failed = false;        // the client got an error
  std::string logged_prompt;  // operations.log_prompts: the last user message
  // routing.traces: filled as the request goes, written at its end.
  store::TraceRecord& trace = execution.trace;
  trace.model = request.model;
  const auto finish_trace = [&](bool request_failed) {
    execution.traced = true;
    write_trace(std::move(trace), record, request_failed);
  };
  trace.request_id = context.request_id;

  if (request.model == kRoutedModel) {
    const PromptText text = prompt_text(request);
    const routing::RouteInput input = route_input(request, context, text);
    routing::RouteSignals signals = router_->signals(input);
    client = input.hints.client;
    record.client = client;
    if (config_.operations.log_prompts) {
      logged_prompt = text.last_user;
    }
    if (auto* gaming = monitors_->gaming(); gaming != nullptr && !client.empty()) {
      signals.escalation_capped = gaming->escalation_capped(
          gaming_identity(client, !config_.server.api_keys.empty()), unix_ms());
    }
    kind = signals.kind;
    complexity = signals.complexity;
    const routing::HealthSnapshot h = health();
    const bool use_memory = config_.routing.consistency.enabled && !client.empty();
    std::optional<routing::Decision> without_memory;
    if (use_memory) {
      cluster_keys = routing::query_cluster_keys(text.last_user);
      auto remembered = co_await recall(client, cluster_keys);
      signals.remembered = std::move(remembered);
      if (signals.remembered) {
        auto plain = signals;
        plain.remembered.reset();
        without_memory = router_->decide(plain, h);
      }
    }
    routing::Decision decision = router_->decide(signals, h);
    // Shadow mode: the cloud answers what a preference would have sent anywhere.
    const bool shadowed = shadow_ && shadow_applies(config_.routing.shadow, signals, decision);
    const std::string would_have_been = routing::pattern_name(decision.pattern);
    if (shadowed) {
      decision = shadow_decision(decision);
    }
    if (shadow_) {
      shadow_->count(std::string(routing::query_kind_name(kind)), shadowed, unix_ms());
    }
    record.routing = router_->explain(input, signals, decision, h, false);
    if (traces_) {
      trace_signals(trace, signals, reason_codes(decision));
    }
    record.pattern = routing::pattern_name(decision.pattern);
    for (const auto& r : decision.reasons) {
      record.reasons.push_back(r.detail);
    }
    if (decision.notice) {
      record.degraded = *decision.notice;
    }
    cloud_allowed = decision.cloud_allowed;
    if (use_memory) {
      json consistency = {{"client", client}, {"used", decision.from_memory}};
      if (decision.from_memory && without_memory) {
        consistency["overrode"] =
            without_memory->pattern != decision.pattern || without_memory->tier != decision.tier;
        consistency["would_have_been"] = routing::pattern_name(without_memory->pattern);
      }
      record.consistency = std::move(consistency);
      // Rules (privacy, health, latency, capability) are not preferences to remember.
      const std::string& code = decision.reasons.front().code;
      remember = code.rfind("pattern.", 0) == 0 || code.rfind("ingress.", 0) == 0 ||
                 code == "consistency.memory";
    }
    switch (decision.pattern) {
      case Pattern::kNone: {
        const ApiError error = no_tier_error(decision, request);
        co_await sink.fail(error, record);
        finish_trace(true);
        co_return;
      }
      case Pattern::kEdge:
        plan = {Step::kEdge};
        break;
      case Pattern::kCloud:
        plan = {Step::kCloud};
        break;
      case Pattern::kCascade:
        plan = {Step::kCascade};
        break;
      case Pattern::kSpeculative:
        plan = {Step::kSpeculative};
        break;
      case Pattern::kCollaborate:
        plan = {Step::kCollaborate};
        break;
      case Pattern::kReview:
        plan = {Step::kReview};
        break;
    }
    if (request.structured() && edge_first(plan.front()) && plan.front() != Step::kEdge) {
      // Tool calls and schema-bound answers are parsed from one tier's answer: the patterns
      // that judge or merge text across tiers do not apply, the edge answers on its own.
      record.reasons.push_back(
          std::string("tools or response_format: the edge answers alone, not ") +
          routing::pattern_name(decision.pattern));
      plan = {Step::kEdge};
    }
    if (edge_first(plan.front()) && cloud_allowed && config_.routing.edge_to_cloud && has_cloud) {
      plan.push_back(Step::kCloud);
    } else if (plan.front() == Step::kCloud && config_.routing.cloud_to_edge && engine_ &&
               request.cloud_only_fields.empty()) {
      plan.push_back(Step::kEdge);
    }
    if (shadowed) {
      const bool sampled =
          routing::shadow_sampled(context.request_id, config_.routing.shadow.sample);
      auto executor = co_await net::asio::this_coro::executor;
      shadow = std::make_unique<ShadowRequest>(*this, *shadow_, request, kind, complexity, record,
                                               sink, sampled, would_have_been, executor);
    }
  } else if (!edge_name_.empty() && request.model == edge_name_) {
    record.pattern = "edge";
    record.reasons.push_back("model '" + request.model + "' is the edge model");
    plan = {Step::kEdge};
    if (traces_) {  // what the router would have read, for calibration and replay
      const PromptText text = prompt_text(request);
      const routing::RouteSignals signals = router_->signals(route_input(request, context, text));
      trace_signals(trace, signals, explicit_model_reasons(false));
    }
  } else if (served_by_cloud) {
    record.pattern = "cloud";
    record.reasons.push_back("model '" + request.model + "' is a cloud model");
    // Data that must not leave the device does not, whichever model the client named.
    const PromptText text = prompt_text(request);
    const routing::RouteInput input = route_input(request, context, text);
    const routing::RouteSignals signals = router_->signals(input);
    const routing::HealthSnapshot h = health();
    const auto pinned = routing::privacy_decision(router_->config(), signals, h);
    if (traces_) {
      trace_signals(trace, signals, explicit_model_reasons(true, pinned));
    }
    if (pinned) {
      cloud_allowed = false;
      record.routing = router_->explain(input, signals, *pinned, h, false);
      for (const auto& r : pinned->reasons) {
        record.reasons.push_back(r.detail);
      }
    }
    if (pinned && pinned->pattern == Pattern::kNone) {
      record.pattern = "none";
      const ApiError error = no_tier_error(*pinned, request);
      co_await sink.fail(error, record);
      finish_trace(true);
      co_return;
    }
    if (pinned) {
      record.pattern = "edge";
      record.degraded =
          "the request carries data that must not leave the device; the "
          "on-device model '" +
          edge_name_ + "' answered instead of '" + request.model + "'";
      request.model = kRoutedModel;  // the cloud model's name means nothing to the edge
      plan = {Step::kEdge};
    } else {
      plan = {Step::kCloud};
      if (config_.routing.cloud_to_edge && engine_ && request.cloud_only_fields.empty()) {
        plan.push_back(Step::kEdge);
      }
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

  record.may_leave_device = cloud_allowed;
  for (size_t i = 0; i < plan.size(); ++i) {
    Run run{request, shadow ? *shadow : sink, cancel, record, kind, complexity};
    std::optional<ApiError> error;
    std::exception_ptr failure;
    try {
      switch (plan[i]) {
        case Step::kEdge:
          error = co_await run_edge(run);
          break;
        case Step::kCloud:
          error = co_await run_cloud(run);
          break;
        case Step::kCascade:
          error = co_await run_cascade(*this, run);
          break;
        case Step::kSpeculative:
          error = co_await run_speculative(*this, run);
          break;
        case Step::kCollaborate:
          error = co_await run_collaborate(*this, run);
          break;
        case Step::kReview:
          error = co_await run_review(*this, run, join(record.reasons), "", "");
          break;
      }
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      // A fault of ours inside a tier fails that tier like any other failure: the next step
      // of the plan answers when nothing was sent yet, else the response ends with a 500.
      log_event(LogLevel::kError, "gateway", "tier_failed",
                {{"request_id", record.request_id}, {"message", net::exception_text(failure)}});
      error = internal_error(record.request_id);
    }
    if (!error) {
      break;
    }
    const bool last = i + 1 == plan.size();
    // A request the client got wrong fails the same on every tier; a prompt too long for the
    // edge's context is the exception.
    const bool clients_fault = error->status == 400 && error->code != "context_length_exceeded";
    if (run.started || cancel.cancelled() || last || clients_fault || error->status == 499) {
      record.latency_ms = ms_since(record.started_at);
      co_await run.sink.fail(*error, record);
      remember = false;
      failed = true;
      break;
    }
    const bool to_edge = plan[i + 1] == Step::kEdge;
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

  if (!record.routing.is_null()) {
    trace_decision(record, logged_prompt);
  }
  finish_trace(failed);
  if (remember && !cluster_keys.empty() && (record.tier == "edge" || record.tier == "cloud")) {
    co_await remember_route(client, cluster_keys, record);
  }
}

}  // namespace tandem::server
