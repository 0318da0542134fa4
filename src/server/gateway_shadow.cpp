// Shadow mode: the cloud answers, the edge answers beside it on a sampled share, and the two are
// compared off the request path (see gateway_shadow.h).

#include "server/gateway_shadow.h"

#include <chrono>

#include "common/answer_match.h"
#include "common/log.h"
#include "net/spawn.h"
#include "routing/confidence.h"
#include "routing/shadow_report.h"
#include "server/gateway_util.h"

namespace tandem::server {
namespace {

// Samples reach the database in batches: the writer waits this long after the first queued
// item, so a busy gateway commits a few times a second rather than once per request.
constexpr auto kBatchDelay = std::chrono::milliseconds(100);

int64_t hour_of(int64_t unix_ms) {
  return unix_ms - unix_ms % store::kShadowHourMs;
}

}  // namespace

bool shadow_applies(const config::ShadowConfig& config, const routing::RouteSignals& signals,
                    const routing::Decision& decision) {
  if (!config.enabled || !decision.cloud_allowed || decision.reasons.empty() ||
      !signals.hints.pattern.empty()) {
    return false;
  }
  return routing::is_preference(decision.reasons.front().code);
}

routing::Decision shadow_decision(const routing::Decision& original) {
  routing::Decision d;
  d.tier = routing::Tier::kCloud;
  d.pattern = routing::Pattern::kCloud;
  d.cloud_allowed = true;
  const std::string without = original.reasons.empty()
                                  ? std::string(routing::pattern_name(original.pattern))
                                  : original.reasons.front().detail;
  d.reasons.push_back({routing::ReasonCode::kShadowCloud,
                       std::string("shadow mode: the cloud answers while the edge is measured "
                                   "beside it; without shadow mode: ") +
                           routing::pattern_name(original.pattern) + " (" + without + ")"});
  return d;
}

// ---- ShadowMode: the writer and the registry ----------------------------------------------

ShadowMode::ShadowMode(store::ShadowLog& log) : log_(log), writer_([this] { run(); }) {}

ShadowMode::~ShadowMode() {
  stop();
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_all();
  writer_.join();
}

void ShadowMode::count(const std::string& kind, bool shadowed, int64_t unix_ms) {
  {
    std::lock_guard lock(mutex_);
    const int64_t hour = hour_of(unix_ms);
    store::ShadowTraffic& t = traffic_[{kind, hour}];
    t.kind = kind;
    t.hour_ms = hour;
    ++t.requests;
    t.shadowed += shadowed ? 1 : 0;
    ++queued_items_;
  }
  wake_.notify_one();
}

void ShadowMode::record(store::ShadowSample sample) {
  uint64_t dropped = 0;
  {
    std::lock_guard lock(mutex_);
    if (samples_.size() >= kMaxPending) {
      dropped = ++dropped_;
    } else {
      samples_.push_back(std::move(sample));
      ++queued_items_;
    }
  }
  if (dropped == 1 || (dropped > 0 && dropped % 1000 == 0)) {
    log_event(LogLevel::kWarn, "shadow", "samples_dropped",
              {{"dropped", std::to_string(dropped)},
               {"message", "the shadow log's database cannot keep up"}});
  }
  wake_.notify_one();
}

void ShadowMode::flush() {
  std::unique_lock lock(mutex_);
  const uint64_t target = queued_items_;
  urgent_ = true;
  wake_.notify_one();
  written_.wait(lock, [&] { return written_items_ >= target || closing_; });
}

bool ShadowMode::enlist(const std::shared_ptr<CancelSignal>& cancel) {
  std::lock_guard lock(mutex_);
  if (stopped_) {
    return false;
  }
  running_.insert(cancel);
  return true;
}

void ShadowMode::discharge(const std::shared_ptr<CancelSignal>& cancel) {
  std::lock_guard lock(mutex_);
  running_.erase(cancel);
}

void ShadowMode::stop() {
  std::set<std::shared_ptr<CancelSignal>> running;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    running.swap(running_);
  }
  for (const auto& cancel : running) {
    cancel->cancel();
  }
}

void ShadowMode::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return closing_ || !samples_.empty() || !traffic_.empty(); });
    if (samples_.empty() && traffic_.empty()) {
      return;  // closing, and nothing left to write
    }
    wake_.wait_for(lock, kBatchDelay, [&] { return closing_ || urgent_; });
    urgent_ = false;
    std::vector<store::ShadowSample> samples = std::move(samples_);
    samples_.clear();
    std::vector<store::ShadowTraffic> traffic;
    traffic.reserve(traffic_.size());
    for (auto& [key, counts] : traffic_) {
      traffic.push_back(std::move(counts));
    }
    traffic_.clear();
    const uint64_t upto = queued_items_;
    lock.unlock();
    const Status status = log_.append(samples, traffic);
    if (!status) {
      // Shadow mode measures; it never fails a request. The loss is logged and the next
      // batch tries again.
      log_event(LogLevel::kWarn, "shadow", "log_write_failed",
                {{"samples", std::to_string(samples.size())}, {"message", status.error().message}});
    }
    lock.lock();
    written_items_ = upto;
    written_.notify_all();
  }
}

// ---- ShadowRequest: one request, the edge beside it ---------------------------------------

struct ShadowRequest::State {
  enum class Edge { kIdle, kRunning, kDone, kOver };
  enum class Cloud { kRunning, kDone, kFailed };

  State(ShadowMode& m, std::string k, bool s, std::string w)
      : mode(m), kind(std::move(k)), sampled(s), would_have_been(std::move(w)) {}

  ShadowMode& mode;
  const std::string kind;
  const bool sampled;
  const std::string would_have_been;
  std::shared_ptr<CancelSignal> cancel = std::make_shared<CancelSignal>();

  Edge edge = Edge::kIdle;
  std::string edge_status;  // why the edge is over without an answer: edge_busy, edge_failed
  std::string edge_text;
  routing::ConfidenceSnapshot confidence;
  int edge_tokens = 0;
  double edge_ms = 0.0;

  Cloud cloud = Cloud::kRunning;
  std::string cloud_text;
  double cloud_ms = 0.0;

  std::optional<store::ShadowSample> compared;  // once both answered

  store::ShadowSample sample(store::ShadowOutcome outcome) const {
    store::ShadowSample s;
    s.unix_ms = unix_ms();
    s.kind = kind;
    s.outcome = outcome;
    return s;
  }

  // The edge could not take part: the sample is counted as such, whatever the cloud does.
  void edge_over(store::ShadowOutcome outcome) {
    edge = Edge::kOver;
    edge_status = store::shadow_outcome_name(outcome);
    mode.record(sample(outcome));
  }

  // Compares once both tiers have answered; a no-op before, and after.
  void settle() {
    if (compared || edge != Edge::kDone || cloud != Cloud::kDone) {
      return;
    }
    store::ShadowSample s = sample(store::ShadowOutcome::kCompared);
    s.agreed = normalised_answer(edge_text) == normalised_answer(cloud_text);
    s.f1 = routing::token_f1(edge_text, cloud_text);
    s.edge_tokens = edge_tokens;
    s.edge_confidence = confidence.combined;
    s.mean_logprob = confidence.mean_logprob;
    s.min_logprob = confidence.min_logprob;
    s.mean_entropy = confidence.mean_entropy;
    s.mean_margin = confidence.mean_margin;
    s.edge_ms = edge_ms;
    s.cloud_ms = cloud_ms;
    compared = s;
    mode.record(std::move(s));
  }

  // The decision record's `shadow` part as it stands when the response ends.
  ShadowPart part() const {
    ShadowPart out;
    out.sampled = sampled;
    out.would_have_been = would_have_been;
    if (!sampled) {
      return out;
    }
    if (compared) {
      out.status = "compared";
      out.comparison = ShadowPart::Comparison{compared->agreed, compared->f1};
    } else if (edge == Edge::kOver) {
      out.status = edge_status.empty() ? "cancelled" : edge_status;
    } else if (cloud == Cloud::kFailed) {
      out.status = "cloud_failed";  // nothing to compare the edge with
    } else {
      out.status = "pending";  // the edge is still answering; recorded when it is done
    }
    return out;
  }
};

namespace {

// The edge's side of a sample. Holds the state, not the request: it may finish after the
// response, and then the comparison happens here.
net::awaitable<void> shadow_edge(Gateway& gateway, std::shared_ptr<ShadowRequest::State> state,
                                 CompletionRequest request, config::ConfidenceWeights weights,
                                 double complexity) {
  struct Discharge {
    ShadowRequest::State& state;
    ~Discharge() { state.mode.discharge(state.cancel); }
  } discharge{*state};
  auto prepared = co_await gateway.prepare_edge(request);  // off the I/O thread
  if (std::holds_alternative<ApiError>(prepared)) {
    state->edge_over(store::ShadowOutcome::kEdgeFailed);
    co_return;
  }
  auto& generation = std::get<engine::GenerationRequest>(prepared);
  routing::ConfidenceTracker tracker(weights, complexity);
  const Gateway::TokenHandler on_token =
      [&tracker](const engine::TokenEvent& event) -> net::awaitable<bool> {
    if (!event.is_flush()) {
      tracker.add(event.signals.logprob, event.signals.entropy, event.signals.margin);
    }
    co_return true;
  };
  auto result = co_await gateway.edge_generate(std::move(generation), on_token, *state->cancel);
  if (const auto* error = std::get_if<ApiError>(&result)) {
    if (error->code == "engine_busy") {
      state->edge_over(store::ShadowOutcome::kEdgeBusy);
    } else if (state->cancel->cancelled()) {
      state->edge = ShadowRequest::State::Edge::kOver;
    } else {
      log_event(LogLevel::kDebug, "shadow", "edge_failed", {{"message", error->message}});
      state->edge_over(store::ShadowOutcome::kEdgeFailed);
    }
    co_return;
  }
  const auto& summary = std::get<engine::CompletionSummary>(result);
  if (summary.finish_reason == engine::FinishReason::kCancelled) {
    state->edge = ShadowRequest::State::Edge::kOver;  // the cloud failed, or the gateway stops
    co_return;
  }
  state->edge = ShadowRequest::State::Edge::kDone;
  state->edge_text = summary.text;
  state->confidence = tracker.snapshot();
  state->edge_tokens = summary.completion_tokens;
  state->edge_ms = summary.total_ms;
  state->settle();
}

}  // namespace

ShadowRequest::ShadowRequest(Gateway& gateway, ShadowMode& mode, const CompletionRequest& request,
                             routing::QueryKind kind, double complexity, DecisionRecord& record,
                             ResponseSink& client, bool sampled, const std::string& would_have_been,
                             net::asio::any_io_executor executor)
    : client_(client),
      record_(record),
      state_(std::make_shared<State>(mode, std::string(routing::query_kind_name(kind)), sampled,
                                     would_have_been)) {
  record_.shadow = state_->part();
  if (!sampled) {
    return;
  }
  // A sample never waits behind other work: when the requests already running or waiting
  // (about to take a slot) fill every sequence slot, it is skipped.
  const engine::Engine* engine = gateway.engine();
  const engine::EngineStats stats = engine->stats();
  if (stats.queued + stats.active >= gateway.config().edge.parallel) {
    state_->edge_over(store::ShadowOutcome::kEdgeBusy);
    return;
  }
  if (!mode.enlist(state_->cancel)) {
    state_->edge = State::Edge::kOver;  // the gateway is stopping
    return;
  }
  state_->edge = State::Edge::kRunning;
  const config::KindCascade cascade =
      routing::cascade_settings(gateway.config().routing.cascade, kind);
  // A sample whose edge side throws is over without an answer, never left running.
  auto failed = net::on_failure("shadow", "shadow_edge", [state = state_](std::exception_ptr) {
    state->edge_over(store::ShadowOutcome::kEdgeFailed);
  });
  net::asio::co_spawn(executor, shadow_edge(gateway, state_, request, cascade.weights, complexity),
                      std::move(failed));
}

ShadowRequest::~ShadowRequest() {
  if (state_->cloud == State::Cloud::kRunning) {
    state_->cloud = State::Cloud::kFailed;  // the request ended without an answer
    state_->cancel->cancel();
  }
}

net::awaitable<bool> ShadowRequest::begin(const DecisionRecord& record) {
  const bool open = co_await client_.begin(record);
  co_return open;
}

net::awaitable<bool> ShadowRequest::piece(const Piece& piece) {
  state_->cloud_text += piece.text;
  const bool delivered = co_await client_.piece(piece);
  co_return delivered;
}

net::awaitable<bool> ShadowRequest::revise(const Revision& revision) {
  state_->cloud_text.clear();  // what follows replaces everything so far
  const bool delivered = co_await client_.revise(revision);
  co_return delivered;
}

net::awaitable<bool> ShadowRequest::native_event(const nlohmann::json& event) {
  const bool delivered = co_await client_.native_event(event);
  co_return delivered;
}

net::awaitable<void> ShadowRequest::native_finish(const NativeAnswer& answer,
                                                  const Outcome& outcome,
                                                  const DecisionRecord& record) {
  (void)record;                      // the same object as record_
  state_->cloud_text = answer.text;  // the whole answer's text: the events' deltas were not kept
  settle_cloud();
  co_await client_.native_finish(answer, outcome, record_);
}

void ShadowRequest::settle_cloud() {
  if (record_.tier == "cloud") {
    state_->cloud = State::Cloud::kDone;
    state_->cloud_ms = ms_since(record_.started_at);
    state_->settle();
  } else {
    // The cloud failed and the edge answered the client: there is no cloud answer to compare.
    state_->cloud = State::Cloud::kFailed;
    state_->cancel->cancel();
  }
  record_.shadow = state_->part();
}

net::awaitable<void> ShadowRequest::finish(const Outcome& outcome, const DecisionRecord& record) {
  (void)record;  // the same object as record_, which this sink may annotate
  settle_cloud();
  co_await client_.finish(outcome, record_);
}

net::awaitable<void> ShadowRequest::fail(const ApiError& error, const DecisionRecord& record) {
  (void)record;
  state_->cloud = State::Cloud::kFailed;
  state_->cancel->cancel();
  record_.shadow = state_->part();
  co_await client_.fail(error, record_);
}

}  // namespace tandem::server
