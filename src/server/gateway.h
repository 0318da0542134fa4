#pragma once
// The gateway's request execution: which tier answers a completion request, the fallback
// between tiers, and the decision record every response carries. Transport-agnostic: the
// HTTP session supplies a ResponseSink and runs execute() on its strand.

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel.h"
#include "config/config.h"
#include "engine/engine.h"
#include "net/asio.h"
#include "server/api_error.h"
#include "server/openai_request.h"
#include "upstream/upstream.h"

namespace tandem::server {

inline constexpr const char* kRoutedModel = "tandem";

struct TierUsage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
};

// What happened to one request: returned to the client as the `tandem` object.
struct DecisionRecord {
  std::string tier;  // "edge" or "cloud": who produced the answer
  std::vector<std::string> reasons;
  std::string edge_model;  // name
  std::string edge_sha256;
  std::string cloud_upstream;
  std::string cloud_model;  // the upstream's model name
  std::optional<TierUsage> edge_usage;
  std::optional<TierUsage> cloud_usage;
  double cloud_cost_usd = 0.0;
  double ttft_ms = 0.0;
  double latency_ms = 0.0;
  struct Fallback {
    std::string from;
    std::string to;
    std::string reason;
  };
  std::vector<Fallback> fallbacks;
  std::optional<std::string> degraded;  // what is limited and why; null when nothing is
  std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();

  nlohmann::json to_json() const;
};

// One piece of generated text for the client, with its logprobs already in the request's
// API format (chat: a list for choices[].logprobs.content; completions: parallel arrays).
struct Piece {
  std::string text;
  nlohmann::json logprobs;  // null when not requested
};

struct Outcome {
  std::string finish_reason;
  TierUsage usage;
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
  virtual net::awaitable<void> finish(const Outcome& outcome, const DecisionRecord& record) = 0;
  virtual net::awaitable<void> fail(const ApiError& error, const DecisionRecord& record) = 0;
};

struct ModelInfo {
  std::string id;
  std::string owned_by;  // "tandem", "edge" or the upstream's name
};

class Gateway {
 public:
  // `engine` may be null (edge disabled or failed to load: `edge_problem` says why).
  Gateway(config::GatewayConfig config, std::unique_ptr<engine::Engine> engine,
          std::string edge_problem, std::vector<std::unique_ptr<upstream::Upstream>> upstreams);

  const config::GatewayConfig& config() const { return config_; }
  engine::Engine* engine() const { return engine_.get(); }
  const std::string& edge_name() const { return edge_name_; }
  const std::string& edge_problem() const { return edge_problem_; }
  const std::vector<std::unique_ptr<upstream::Upstream>>& upstreams() const { return upstreams_; }

  std::vector<ModelInfo> models() const;
  // Runs one request to the end, writing into `sink`. `cancel` fires when the client leaves.
  net::awaitable<void> execute(CompletionRequest request, ResponseSink& sink, CancelSignal& cancel);

  // Starts health probing of every upstream on `executor` until stop() is called.
  void start_probes(net::asio::any_io_executor executor);
  void stop();

 private:
  net::awaitable<std::optional<ApiError>> run_edge(const CompletionRequest& request,
                                                   ResponseSink& sink, CancelSignal& cancel,
                                                   DecisionRecord& record, bool& started);
  net::awaitable<std::optional<ApiError>> run_cloud(const CompletionRequest& request,
                                                    ResponseSink& sink, CancelSignal& cancel,
                                                    DecisionRecord& record, bool& started);

  config::GatewayConfig config_;
  std::unique_ptr<engine::Engine> engine_;
  std::string edge_name_;
  std::string edge_problem_;
  std::vector<std::unique_ptr<upstream::Upstream>> upstreams_;
  CancelSignal stop_probes_;
};

}  // namespace tandem::server
