#pragma once
// Shadow mode ("start in the cloud, move to the edge", seed 000): with routing.shadow.enabled,
// the cloud answers every `model: tandem` request that may leave the device and that no rule
// pins elsewhere, and on a sampled share the edge answers the same request beside it. The
// edge's answer never reaches the client and never delays it: it runs concurrently on the
// request's strand and may finish after the response. Each sample's agreement (normalised
// final answers), token-overlap F1 and the edge's confidence and speed go to the shadow log
// (store/shadow_log.h) from a background thread; `GET /v1/tandem/shadow` and `tandem shadow
// report` turn them into a per-kind verdict (routing/shadow_report.h).
//
// Internal to the server component: gateway.cpp drives it.

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "routing/policy.h"
#include "routing/shadow_report.h"
#include "server/gateway.h"
#include "store/shadow_log.h"

namespace tandem::server {

// Whether shadow mode answers this decision from the cloud: shadow mode is on, the query may
// leave the device, and what decided was a preference (the pattern, the classifier, the
// consistency memory), not a rule (privacy, review, capability, health, latency budget) nor a
// pattern the client asked for with X-Tandem-Pattern.
bool shadow_applies(const config::ShadowConfig& config, const routing::RouteSignals& signals,
                    const routing::Decision& decision);

// The cloud decision shadow mode puts in place of `original`; its reason names what the
// router would have done without shadow mode.
routing::Decision shadow_decision(const routing::Decision& original);

// The gateway's shadow machinery: a background writer for the log, so that SQLite never runs
// on an I/O thread, and the registry of edge generations in flight, so that stop() ends them.
// Thread-safety: every method may be called from any thread.
class ShadowMode {
 public:
  explicit ShadowMode(store::ShadowLog& log);
  // Writes what is still queued, then joins the writer.
  ~ShadowMode();
  ShadowMode(const ShadowMode&) = delete;
  ShadowMode& operator=(const ShadowMode&) = delete;

  // Counts one routed request of `kind` (`shadowed`: the cloud answers it because of shadow
  // mode). Never blocks on the database.
  void count(const std::string& kind, bool shadowed, int64_t unix_ms);
  // Queues one sample for the log. Never blocks on the database; beyond kMaxPending queued
  // samples, new ones are dropped and logged (the database cannot keep up).
  void record(store::ShadowSample sample);
  // Returns once everything queued before the call is written (or failed to be).
  void flush();

  // Registers an edge generation to be cancelled by stop(); false after stop() (start none).
  bool enlist(const std::shared_ptr<CancelSignal>& cancel);
  void discharge(const std::shared_ptr<CancelSignal>& cancel);
  // Cancels every shadow generation in flight and refuses new ones (gateway shutdown).
  void stop();

  static constexpr size_t kMaxPending = 10000;

 private:
  void run();

  store::ShadowLog& log_;
  std::mutex mutex_;
  std::condition_variable wake_;              // the writer: work queued, or stopping
  std::condition_variable written_;           // flush(): a batch was written
  std::vector<store::ShadowSample> samples_;  // guarded by mutex_
  std::map<std::pair<std::string, int64_t>, store::ShadowTraffic> traffic_;  // guarded by mutex_
  uint64_t queued_items_ = 0;   // guarded by mutex_: counts and samples queued
  uint64_t written_items_ = 0;  // guarded by mutex_: of which written (or failed)
  uint64_t dropped_ = 0;        // guarded by mutex_
  bool urgent_ = false;         // guarded by mutex_: flush() waits, write without delay
  bool closing_ = false;        // guarded by mutex_: the destructor runs
  bool stopped_ = false;        // guarded by mutex_: stop() ran
  std::set<std::shared_ptr<CancelSignal>> running_;  // guarded by mutex_
  std::thread writer_;
};

// One request under shadow mode. Wraps the client's sink: everything passes through
// unchanged; it keeps the cloud's text for the comparison and adds the `shadow` object to the
// decision record. When the request is sampled it also runs the edge beside it. Lives on the
// request's strand, like the request.
class ShadowRequest final : public ResponseSink {
 public:
  // Starts the edge on `executor` (the request's strand) when `sampled`; `record` is the
  // request's decision record, which must outlive this object.
  ShadowRequest(Gateway& gateway, ShadowMode& mode, const CompletionRequest& request,
                routing::QueryKind kind, double complexity, DecisionRecord& record,
                ResponseSink& client, bool sampled, const std::string& would_have_been,
                net::asio::any_io_executor executor);
  ~ShadowRequest() override;
  ShadowRequest(const ShadowRequest&) = delete;
  ShadowRequest& operator=(const ShadowRequest&) = delete;

  net::awaitable<bool> begin(const DecisionRecord& record) override;
  net::awaitable<bool> piece(const Piece& piece) override;
  net::awaitable<bool> revise(const Revision& revision) override;
  net::awaitable<void> finish(const Outcome& outcome, const DecisionRecord& record) override;
  net::awaitable<void> fail(const ApiError& error, const DecisionRecord& record) override;
  net::awaitable<bool> native_event(const nlohmann::json& event) override;
  net::awaitable<void> native_finish(const NativeAnswer& answer, const Outcome& outcome,
                                     const DecisionRecord& record) override;

  struct State;  // shared with the edge's coroutine, which may outlive the request

 private:
  // The request's answer is complete: the sample settles when the cloud answered.
  void settle_cloud();

  ResponseSink& client_;
  DecisionRecord& record_;
  std::shared_ptr<State> state_;
};

}  // namespace tandem::server
