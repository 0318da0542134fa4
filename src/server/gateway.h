#pragma once
// The gateway's request execution: which tier answers a completion request, the fallback
// between tiers, and the decision record every response carries. Transport-agnostic: the
// HTTP session supplies a ResponseSink and runs execute() on its strand.
//
// Thread-safety: one Gateway serves every I/O thread. Once create() has returned, its
// configuration, router, upstream list and stores are fixed, and execute() (with the Run
// building blocks the pattern executors compose) runs concurrently on any I/O thread: a
// request's own state (its Run, DecisionRecord and sink) lives on its strand alone. What the
// gateway hands out is thread-safe itself: each Upstream, GatewayStats and Monitors (their own
// mutexes), the stores (SQLite serialised on its connection, the Redis client), the trace
// writer (a queue), the worker pools. start_probes(), stop() and join_workers() are called
// once each, by the thread that owns the server. DecisionRecord and the other structs here are
// plain values.

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/cancel.h"
#include "common/json_writer.h"
#include "config/config.h"
#include "engine/engine.h"
#include "net/asio.h"
#include "routing/router.h"
#include "server/api_error.h"
#include "server/decision_parts.h"
#include "server/gateway_stats.h"
#include "server/monitors.h"
#include "server/openai_request.h"
#include "server/operations.h"
#include "store/consistency_memory.h"
#include "store/review_queue.h"
#include "store/shadow_log.h"
#include "store/trace_writer.h"
#include "upstream/upstream.h"

namespace tandem::server {

inline constexpr const char* kRoutedModel = "tandem";

class ShadowMode;  // server/gateway_shadow.h

struct TierUsage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_prompt_tokens = 0;  // of prompt_tokens, found in the edge's prompt cache
};

inline TierUsage edge_usage_of(const engine::CompletionSummary& summary) {
  return {summary.prompt_tokens, summary.completion_tokens, summary.cached_prompt_tokens};
}

// What happened to one request: returned to the client as the `tandem` object, and logged.
struct DecisionRecord {
  std::string tier;                // who produced the final answer: "edge", "cloud", "human"
  std::vector<std::string> tiers;  // every tier that worked on it, in order
  std::string pattern;             // "edge", "cloud", "cascade", "speculative", ...
  std::vector<std::string> reasons;
  // The router's decision, signals and thresholds: set when the router decided (model `tandem`,
  // or a cloud model that private data kept on the device).
  std::optional<RoutingPart> routing;
  std::string edge_model;  // name
  std::string edge_sha256;
  std::string cloud_upstream;
  std::string cloud_model;  // the upstream's model name
  std::optional<TierUsage> edge_usage;
  std::optional<TierUsage> cloud_usage;
  double cloud_cost_usd = 0.0;
  // The cloud model's prices, to say what sending everything to the cloud would have cost (the
  // answer's tokens at those prices); unset when no cloud model is configured.
  std::optional<config::Prices> cloud_prices;
  bool data_left_device = false;  // any part of the request went to a cloud upstream
  double ttft_ms = 0.0;
  double latency_ms = 0.0;
  struct Fallback {
    std::string from;
    std::string to;
    std::string reason;
  };
  std::vector<Fallback> fallbacks;
  std::optional<std::string> degraded;  // what is limited and why; null when nothing is
  // The parts only some requests have (decision_parts.h); unset: absent from the JSON.
  std::optional<ConfidencePart> confidence;        // the edge's running confidence at the decision
  std::optional<EscalationPart> escalation;        // P1: why and when the edge handed over
  std::optional<VerificationPart> verification;    // P3: the cloud's verdict on the edge answer
  std::optional<Revision> revision;                // a revision the client received
  std::optional<CollaborationPart> collaboration;  // token-level: hand-offs and tokens per tier
  std::optional<ReviewPart> review;                // the human tier's ticket
  std::optional<ConsistencyPart> consistency;      // the consistency memory's part
  std::optional<ShadowPart> shadow;                // shadow mode: sampled, and the agreement
  // answer_hash() of the edge's answer, for the routing trace (never sent to the client).
  std::string edge_answer_hash;
  // Who asked, for the audit of what went to the cloud (never sent to the client).
  std::string request_id;
  std::string client;
  // The routing decision lets something of this request leave the device; the egress guard
  // refuses every send of a request where it does not.
  bool may_leave_device = true;
  // A native Responses upstream answers, whose own response.created opens the stream: the sink
  // writes no opening events of its own (never sent to the client).
  bool native_answer = false;
  std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();

  // What the answer cost, and what sending all of it to the cloud would have (nullopt when
  // no cloud prices are known).
  struct Cost {
    double edge = 0.0;  // the device's tokens are free
    double cloud = 0.0;
    std::optional<double> all_cloud;
    std::optional<double> saved;  // all_cloud - cloud; negative: routing cost more
  };

  void add_tier(const std::string& name);
  Cost cost() const;
  nlohmann::json cost_json() const;  // {edge, cloud, all_cloud, saved}
  // The `tandem` object of a response. write_json is the one serialisation (straight into the
  // response's text on the hot path); json_text and to_json are built on it.
  void write_json(JsonWriter& out) const;
  std::string json_text() const;
  nlohmann::json to_json() const;
};

// One piece of generated text for the client, with its logprobs already in the request's
// API format (chat: a list for choices[].logprobs.content; completions: parallel arrays).
//
// A chat answer may also carry reasoning text and tool calls. Tool calls arrive as deltas, as
// OpenAI streams them: the first delta of a call has its index, id and name, later ones append
// to its arguments (any delta may carry all of them).
struct ToolCallDelta {
  size_t index = 0;       // the call's position in message.tool_calls
  std::string id;         // set on the call's first delta
  std::string name;       // set on the call's first delta
  std::string arguments;  // a piece of the JSON arguments, appended in order
};

struct Piece {
  std::string text;
  nlohmann::json logprobs;  // null when not requested
  std::string reasoning;    // a piece of message.reasoning_content (chat)
  std::vector<ToolCallDelta> tool_calls;
};

// A whole answer as the pieces of a response add up to it.
struct WholeAnswer {
  std::string text;
  nlohmann::json logprobs;  // the pieces' logprobs concatenated (append_logprobs); null if none
  std::string reasoning;
  std::vector<ToolCallDelta> tool_calls;  // whole calls in index order (append_tool_calls)

  void add(upstream::ApiKind kind, const Piece& piece);
};

struct Outcome {
  std::string finish_reason;
  TierUsage usage;
};

// The end of a native Responses upstream's answer (an upstream with `api: responses`, for a
// request that came as a Responses request: CompletionRequest::responses_body).
struct NativeAnswer {
  std::string type;         // the final event's type (response.completed, response.incomplete)
  nlohmann::json response;  // the final Response object as the upstream sent it
  std::string text;         // its output text: what shadow mode compares
};

// Implemented by the HTTP session. All calls happen on the session's strand, in order:
// begin() once, piece() any number of times, then finish() or fail(). fail() may also come
// without begin() (nothing was sent yet).
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // The answering tier is known; a streaming session sends its headers now. False: the
  // client is gone.
  virtual net::awaitable<bool> begin(const DecisionRecord& record) = 0;
  virtual net::awaitable<bool> piece(const Piece& piece) = 0;
  // The text sent so far is withdrawn; the pieces that follow replace it. A stream sends a
  // marked `tandem.revision` event; a buffered response simply starts over.
  virtual net::awaitable<bool> revise(const Revision& revision) = 0;
  virtual net::awaitable<void> finish(const Outcome& outcome, const DecisionRecord& record) = 0;
  virtual net::awaitable<void> fail(const ApiError& error, const DecisionRecord& record) = 0;

  // A native Responses upstream answers (only a request with CompletionRequest::responses_body
  // goes to one): its stream's events as the upstream sent them, after begin() as pieces come,
  // and then native_finish() in place of finish(). The Responses API's sinks relay them; the
  // defaults, for any other sink, take an output_text delta as a piece of text and finish with
  // the text so given.
  virtual net::awaitable<bool> native_event(const nlohmann::json& event);
  virtual net::awaitable<void> native_finish(const NativeAnswer& answer, const Outcome& outcome,
                                             const DecisionRecord& record);
};

struct ModelInfo {
  std::string id;
  std::string owned_by;  // "tandem", "edge" or the upstream's name
};

// What the HTTP layer knows of a request besides its body.
struct RequestContext {
  routing::RequestHints hints;  // headers and the API key's policy
  std::string request_id;       // the response's id (chatcmpl-...): keys shadow sampling
};

enum class PlanStep;  // one step of a request's plan (request_plan.h)

class Gateway {
 public:
  // `engine` may be null (edge disabled or failed to load: `edge_problem` says why). Creates
  // one Upstream per configured upstream, every one behind the gateway's egress guard. Fails
  // when the routing configuration cannot be built (a bad pattern, weights, the database) or
  // an upstream cannot (its base URL, its TLS trust).
  static Result<std::shared_ptr<Gateway>> create(config::GatewayConfig config,
                                                 std::unique_ptr<engine::Engine> engine,
                                                 std::string edge_problem);

  const config::GatewayConfig& config() const { return config_; }
  engine::Engine* engine() const { return engine_.get(); }
  const std::string& edge_name() const { return edge_name_; }
  const std::string& edge_problem() const { return edge_problem_; }
  const std::vector<std::unique_ptr<upstream::Upstream>>& upstreams() const { return upstreams_; }
  const routing::Router& router() const { return *router_; }
  store::ReviewQueue& reviews() const { return *reviews_; }
  store::ConsistencyMemory& memory() const { return *memory_; }
  store::ShadowLog& shadow_log() const { return *shadow_log_; }
  // The routing database (in memory when routing.database is empty): what the gateway keeps
  // per request lives there, each table bounded (docs/OPERATIONS.md, "What memory holds").
  store::Database& database() const { return *database_; }
  // Shadow mode's machinery (server/gateway_shadow.h); null when routing.shadow is off.
  ShadowMode* shadow() const { return shadow_.get(); }
  // Metrics and the status page's windows (server/gateway_stats.h).
  GatewayStats& stats() const { return *stats_; }
  // The failure-mode monitors (server/monitors.h).
  Monitors& monitors() const { return *monitors_; }
  // The operations owner (server/operations.h): what replicas share (circuits, counters), the
  // probes, monitors' loops, canaries and the shared store's sync.
  Operations& operations() const { return *operations_; }
  int64_t started_unix_ms() const { return started_unix_ms_; }
  // The routing database's audit of what went to the cloud; null when operations.audit is off.
  store::AuditLog* audit_log() const { return audit_log_.get(); }
  // Where calls into the stores run (net::run_on): SQLite and Redis never hold up an I/O
  // thread, and a hung Redis costs the requests that need it, not the connections that don't.
  net::asio::thread_pool& store_workers() { return *store_workers_; }
  // Waits for the edge and store workers to finish what they hold. The HTTP server calls it
  // once its I/O threads have stopped and before its io_context goes: a worker's answer is
  // handed to that io_context, which must still exist to receive (and discard) it.
  void join_workers();
  ~Gateway();

  // Routing traces (routing.traces), kept only in a database file: a reviewer's answer labels
  // the trace of its ticket (applied after every trace queued before it); flush_traces()
  // returns once every trace and audit row queued so far is written. The destructor writes
  // what is still queued.
  void label_review(const std::string& ticket, const std::string& answer);
  void flush_traces();

  std::vector<ModelInfo> models() const;
  // Tier health as the router sees it now (edge loaded and allowed, throttled, cloud online);
  // also feeds the offline monitor.
  routing::HealthSnapshot health() const;
  // Runs one request to the end, writing into `sink`. `cancel` fires when the client leaves.
  // An exception inside is logged and fails its tier like any failure (the plan's next step
  // may answer); otherwise the response ends with a 500 `internal_error`, and the request's
  // trace is written either way.
  net::awaitable<void> execute(CompletionRequest request, RequestContext context,
                               ResponseSink& sink, CancelSignal& cancel);
  // The routing decision for a request and every signal behind it, without generating.
  nlohmann::json explain_route(const CompletionRequest& request, const RequestContext& context,
                               bool detailed) const;

  // Starts the operations owner's loops on `executor` (Operations::start) until stop(), which
  // also ends shadow mode's edge generations.
  void start_probes(net::asio::any_io_executor executor);
  void stop();

  // Runs a tier on its own; the pattern executors compose these. Public for the pattern
  // executors in pattern_*.cpp, not for the HTTP layer.
  struct Run {
    const CompletionRequest& request;
    ResponseSink& sink;
    CancelSignal& cancel;
    DecisionRecord& record;
    routing::QueryKind kind = routing::QueryKind::kOpen;  // selects per-kind calibration
    double complexity = 0.5;  // the classifier's score, an input of the cascade's confidence
    bool started = false;     // the client has received the response's start
  };
  // The edge answers, streaming into the sink, and finishes the response.
  net::awaitable<std::optional<ApiError>> run_edge(Run& run);
  // The cloud answers (ordered fallback across upstreams) and finishes the response. A
  // Responses request goes to an upstream with `api: responses` as it came (when nothing was
  // sent to the client yet), to the others translated into chat.
  net::awaitable<std::optional<ApiError>> run_cloud(Run& run);
  // Whether an upstream that speaks the Responses API (`api: responses`) serves `model`.
  bool serves_natively(const std::string& model) const;
  // Opens the response for `tier` unless it is open already. False: the client is gone.
  net::awaitable<bool> start_answer(Run& run, const std::string& tier);

  // The edge generation for a request: its prompt through the chat template, its sampling.
  std::variant<engine::GenerationRequest, ApiError> edge_generation(
      const CompletionRequest& request) const;
  // edge_generation() on the edge's worker threads: rendering a template or building a
  // grammar never holds up the I/O thread's other connections.
  net::awaitable<std::variant<engine::GenerationRequest, ApiError>> prepare_edge(
      const CompletionRequest& request);
  // Where edge work that tokenizes runs (net::run_on): never an I/O thread.
  net::asio::thread_pool& edge_workers() { return *edge_workers_; }
  // Runs one edge generation, handing each token to `on_token`; returning false from it stops
  // the generation (the summary then says kCancelled).
  using TokenHandler = std::function<net::awaitable<bool>(const engine::TokenEvent&)>;
  net::awaitable<std::variant<engine::CompletionSummary, ApiError>> edge_generate(
      engine::GenerationRequest generation, const TokenHandler& on_token, CancelSignal& cancel);
  // One edge token as a piece for the client (nullopt: nothing to show yet).
  std::optional<Piece> edge_piece(const engine::TokenEvent& event, const CompletionRequest& request,
                                  size_t& text_offset) const;

  // A whole cloud answer (logprobs in the request kind's shape), how it ended and what it used.
  struct CloudAnswer : WholeAnswer {
    std::string finish_reason = "stop";
    upstream::CloudUsage usage;
  };
  // A whole cloud answer (not streamed to the client), with fallback across upstreams; usage
  // and cost are added to `record`. `purpose` names it in the audit: "answer", "verify",
  // "continue", "shadow" or "canary".
  net::awaitable<std::variant<CloudAnswer, ApiError>> cloud_answer(upstream::ApiKind kind,
                                                                   nlohmann::json body,
                                                                   CancelSignal& cancel,
                                                                   DecisionRecord& record,
                                                                   const char* purpose = "answer");
  // The cloud model `tandem` uses, and its prices per million tokens (0 when unknown).
  const std::string& cloud_model() const { return config_.routing.cloud_model; }
  void add_cloud_usage(DecisionRecord& record, const upstream::Upstream& u,
                       const std::string& model, const upstream::CloudUsage& usage) const;
  // Why and for whom a cloud request of `record`'s request leaves: what the egress guard
  // (server/egress_guard.h) judges and the audit records.
  static upstream::EgressSend egress(const DecisionRecord& record, const char* purpose);
  // The model name an upstream's answer reported, for the skew monitor.
  void observe_cloud_model(const upstream::Upstream& u, const std::string& reported) const;

 private:
  Gateway(config::GatewayConfig config, std::unique_ptr<engine::Engine> engine,
          std::string edge_problem);
  // The egress guard and, behind it, one Upstream per configured upstream.
  Status create_upstreams();

  // execute() without its last line of defence: execute() answers and traces what an
  // exception out of this leaves unanswered (gateway.cpp).
  struct Execution;
  net::awaitable<void> execute_request(CompletionRequest request, RequestContext context,
                                       ResponseSink& sink, CancelSignal& cancel,
                                       Execution& execution);
  // The request planner (gateway_planner.cpp): the steps that answer a request and what its
  // end must record, or the error that answers it (no tier may, an unknown model).
  struct Plan;
  net::awaitable<std::optional<ApiError>> plan_request(CompletionRequest& request,
                                                       const RequestContext& context,
                                                       ResponseSink& sink, Plan& plan,
                                                       DecisionRecord& record,
                                                       store::TraceRecord& trace);
  // model "tandem": the router decides, with the consistency memory and shadow mode.
  net::awaitable<std::optional<ApiError>> plan_routed(CompletionRequest& request,
                                                      const RequestContext& context,
                                                      ResponseSink& sink, Plan& plan,
                                                      DecisionRecord& record,
                                                      store::TraceRecord& trace);
  void record_decision(const routing::RouteInput& input, const routing::RouteSignals& signals,
                       const routing::Decision& decision, const routing::HealthSnapshot& h,
                       DecisionRecord& record, store::TraceRecord& trace) const;
  // The steps of a routed decision, with the fallback tier the configuration allows.
  std::vector<PlanStep> routed_steps(const routing::Decision& decision,
                                     const CompletionRequest& request, bool cloud_allowed,
                                     DecisionRecord& record) const;
  // What one upstream's answer to run_cloud() left to finish the response with.
  struct CloudResult {
    std::optional<upstream::CloudUsage> usage;
    std::string finish_reason = "stop";
    std::optional<NativeAnswer> native;  // a native Responses upstream answered
  };
  // One upstream answers in chat (or completions), relaying its pieces into the sink.
  net::awaitable<std::optional<upstream::UpstreamFailure>> cloud_in_chat(Run& run,
                                                                         upstream::Upstream& u,
                                                                         const std::string& model,
                                                                         CloudResult& result);
  // One upstream with `api: responses` answers a Responses request natively
  // (gateway_native.cpp), relaying its events into the sink.
  net::awaitable<std::optional<upstream::UpstreamFailure>> cloud_native(Run& run,
                                                                        upstream::Upstream& u,
                                                                        const std::string& model,
                                                                        CloudResult& result);
  // The edge model by name: the edge answers.
  void plan_edge_model(const CompletionRequest& request, const RequestContext& context, Plan& plan,
                       DecisionRecord& record, store::TraceRecord& trace) const;
  // A cloud model by name: the cloud answers unless the data must stay on the device (then the
  // edge answers, and `request` is renamed to the routed model).
  std::optional<ApiError> plan_cloud_model(CompletionRequest& request,
                                           const RequestContext& context, Plan& plan,
                                           DecisionRecord& record, store::TraceRecord& trace) const;
  // The plan's executor (gateway.cpp): tries the steps in order; true when the client got an
  // error.
  net::awaitable<bool> run_plan(const Plan& plan, const CompletionRequest& request,
                                ResponseSink& sink, CancelSignal& cancel, DecisionRecord& record);
  net::awaitable<std::optional<ApiError>> run_step(PlanStep step, Run& run);
  // Records that the step failed before anything reached the client and the next one answers.
  void note_fallback(bool to_edge, const std::string& why, DecisionRecord& record) const;
  // Starts the trace writer for the traces (routing.traces, with a database file) and the
  // cloud audit (operations.audit) (gateway_traces.cpp).
  Status start_traces(const std::string& database_path);
  // Completes `trace` from the record, counts the request (stats, gaming monitor) and queues
  // the trace for the trace writer (gateway_traces.cpp).
  void write_trace(store::TraceRecord trace, const DecisionRecord& record, bool failed);
  // Opens the shared state (store.redis) and, with it, the Redis review queue and memory.
  Status open_shared_store();
  // The consistency memory's tier for this client's similar queries, if any; the store call
  // runs on store_workers() (gateway_stores.cpp).
  std::optional<routing::RememberedTier> remembered_tier(const std::string& client,
                                                         const std::vector<uint64_t>& keys) const;
  net::awaitable<std::optional<routing::RememberedTier>> recall(const std::string& client,
                                                                const std::vector<uint64_t>& keys);
  // Stores the tier that answered under the query's cluster keys, on store_workers().
  net::awaitable<void> remember_route(const std::string& client, const std::vector<uint64_t>& keys,
                                      const DecisionRecord& record);

  config::GatewayConfig config_;
  std::unique_ptr<engine::Engine> engine_;
  // Chat rendering, tokenization and grammars for the edge, off the I/O threads. Declared
  // after engine_: its threads are joined before the engine goes.
  std::unique_ptr<net::asio::thread_pool> edge_workers_;
  std::string edge_name_;
  std::string edge_problem_;
  std::vector<std::unique_ptr<upstream::Upstream>> upstreams_;
  std::shared_ptr<const routing::Router> router_;
  std::shared_ptr<store::Database> database_;
  std::unique_ptr<store::ReviewQueue> reviews_;
  std::unique_ptr<store::ConsistencyMemory> memory_;
  std::shared_ptr<store::TraceWriter> traces_;  // null when traces and the audit are off
  bool keep_traces_ = false;  // routing.traces is on and routing.database is a file
  std::shared_ptr<store::AuditLog> audit_log_;  // null when operations.audit is off
  int64_t started_unix_ms_ = 0;
  std::unique_ptr<GatewayStats> stats_;
  std::unique_ptr<Monitors> monitors_;
  std::unique_ptr<store::ShadowLog> shadow_log_;
  std::unique_ptr<ShadowMode> shadow_;  // after shadow_log_: it writes there until destroyed
  // After everything its loops read (upstreams, stats, monitors, memory_): its loops and the
  // memory's sweeper stop before those go.
  std::unique_ptr<Operations> operations_;
  // Last: its threads are joined before anything they use (the stores, the stats) goes.
  std::unique_ptr<net::asio::thread_pool> store_workers_;
};

}  // namespace tandem::server
