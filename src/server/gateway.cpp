#include "server/gateway.h"

#include <algorithm>

#include "common/log.h"
#include "net/spawn.h"
#include "routing/query_cluster.h"
#include "server/gateway_shadow.h"
#include "server/gateway_traces.h"
#include "server/gateway_util.h"
#include "server/patterns.h"
#include "server/request_plan.h"
#include "server/status_api.h"
#include "store/redis_consistency_memory.h"
#include "store/redis_review_queue.h"

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
  net::awaitable<bool> native_event(const json& event) override {
    const bool delivered = co_await inner_.native_event(event);
    co_return delivered;
  }
  net::awaitable<void> native_finish(const NativeAnswer& answer, const Outcome& outcome,
                                     const DecisionRecord& record) override {
    ended_ = true;
    co_await inner_.native_finish(answer, outcome, record);
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

// One JSON log line per routed request: the decision, never the prompt unless
// operations.log_prompts asks for it (`prompt` is then the last user message).
void trace_decision(const DecisionRecord& record, const std::string& prompt) {
  const std::vector<std::string> codes =
      record.routing ? reason_codes(record.routing->decision) : std::vector<std::string>();
  LogFields fields = {{"request_id", record.request_id},
                      {"tier", record.tier.empty() ? "none" : record.tier},
                      {"tiers", join(record.tiers)},
                      {"pattern", record.pattern},
                      {"reasons", join(codes)},
                      {"data_left_device", record.data_left_device ? "true" : "false"},
                      {"cost_usd", record.cost_json().dump()},
                      {"latency_ms", std::to_string(record.latency_ms)}};
  if (record.escalation) {
    fields.emplace_back("escalation", record.escalation->reason);
  }
  if (record.review) {
    fields.emplace_back("ticket", record.review->ticket);
  }
  if (!record.client.empty()) {
    fields.emplace_back("client", record.client);
  }
  if (!prompt.empty()) {
    fields.emplace_back("prompt", prompt);
  }
  log_event(LogLevel::kInfo, "routing", "decision", fields);
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
  operations_->start(std::move(executor));
}

Status Gateway::open_shared_store() {
  operations_ = std::make_unique<Operations>(*this);
  if (Status opened = operations_->open_shared_store(); !opened) {
    return opened;
  }
  // With Redis, replicas share the review queue and the routing memory too.
  if (const auto& redis = operations_->redis()) {
    reviews_ = std::make_unique<store::RedisReviewQueue>(redis);
    memory_ = std::make_unique<store::RedisConsistencyMemory>(redis);
  }
  return {};
}

Gateway::~Gateway() = default;

void Gateway::join_workers() {
  edge_workers_->join();
  store_workers_->join();
}

void Gateway::stop() {
  if (operations_) {
    operations_->stop();
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
  // routing.traces: filled as the request goes, written at its end.
  store::TraceRecord& trace = execution.trace;
  trace.model = request.model;
  trace.request_id = context.request_id;

  Plan plan;
  auto refused = co_await plan_request(request, context, sink, plan, record, trace);
  if (refused) {
    co_await sink.fail(*refused, record);
    if (plan.traced) {
      execution.traced = true;
      write_trace(std::move(trace), record, true);
    }
    co_return;
  }
  record.may_leave_device = plan.cloud_allowed;
  const bool failed = co_await run_plan(plan, request, sink, cancel, record);
  if (record.routing) {
    trace_decision(record, plan.logged_prompt);
  }
  execution.traced = true;
  write_trace(std::move(trace), record, failed);
  const bool answered_by_one_tier = record.tier == "edge" || record.tier == "cloud";
  if (plan.remember && !failed && !plan.cluster_keys.empty() && answered_by_one_tier) {
    co_await remember_route(plan.client, plan.cluster_keys, record);
  }
}

net::awaitable<std::optional<ApiError>> Gateway::run_step(PlanStep step, Run& run) {
  // One await per statement, arguments in named variables (GCC 12's coroutine miscompiles).
  std::optional<ApiError> error;
  switch (step) {
    case PlanStep::kEdge:
      error = co_await run_edge(run);
      break;
    case PlanStep::kCloud:
      error = co_await run_cloud(run);
      break;
    case PlanStep::kCascade:
      error = co_await run_cascade(*this, run);
      break;
    case PlanStep::kSpeculative:
      error = co_await run_speculative(*this, run);
      break;
    case PlanStep::kCollaborate:
      error = co_await run_collaborate(*this, run);
      break;
    case PlanStep::kReview: {
      const std::string reasons = join(run.record.reasons);
      const std::string no_draft;
      error = co_await run_review(*this, run, reasons, no_draft, no_draft);
      break;
    }
  }
  co_return error;
}

net::awaitable<bool> Gateway::run_plan(const Plan& plan, const CompletionRequest& request,
                                       ResponseSink& sink, CancelSignal& cancel,
                                       DecisionRecord& record) {
  const std::vector<PlanStep>& steps = plan.steps;
  for (size_t i = 0; i < steps.size(); ++i) {
    Run run{request, plan.shadow ? *plan.shadow : sink, cancel, record, plan.kind, plan.complexity};
    std::optional<ApiError> error;
    std::exception_ptr failure;
    try {
      error = co_await run_step(steps[i], run);
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
      co_return false;
    }
    const bool last = i + 1 == steps.size();
    // A request the client got wrong fails the same on every tier (a prompt too long for the
    // edge's context is retryable: the cloud's may hold it).
    if (run.started || cancel.cancelled() || last || error->clients_fault() || error->cancelled()) {
      log_event(LogLevel::kInfo, "gateway", "request_error",
                {{"request_id", record.request_id},
                 {"origin", error_origin_name(error->origin)},
                 {"kind", error_kind_name(error->kind)},
                 {"code", error->code},
                 {"status", std::to_string(http_status(*error))},
                 {"retryable", error->retryable ? "true" : "false"}});
      record.latency_ms = ms_since(record.started_at);
      co_await run.sink.fail(*error, record);
      co_return true;
    }
    note_fallback(steps[i + 1] == PlanStep::kEdge, error->message, record);
  }
  co_return false;
}

void Gateway::note_fallback(bool to_edge, const std::string& why, DecisionRecord& record) const {
  record.fallbacks.push_back({to_edge ? "cloud" : "edge", to_edge ? "edge" : "cloud", why});
  record.reasons.push_back(std::string(to_edge ? "cloud" : "edge") + " failed: " + why);
  if (to_edge) {
    record.degraded = "the cloud tier is unavailable (" + why +
                      "); this answer comes from the on-device model '" + edge_name_ +
                      "', which is less capable";
  }
}

}  // namespace tandem::server
