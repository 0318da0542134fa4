#include "server/embeddings_tiers.h"

#include <algorithm>

#include "common/log.h"
#include "net/async_queue.h"
#include "net/offload.h"
#include "server/cloud_fallback.h"
#include "server/gateway_traces.h"
#include "server/gateway_util.h"
#include "server/responses.h"

namespace tandem::server {
namespace {

using nlohmann::json;

EmbeddingsAnswer error_answer(const ApiError& error) {
  EmbeddingsAnswer answer;
  answer.status = http_status(error);
  answer.body = error_body(error);
  answer.retry_after_seconds = error.retry_after_seconds;
  return answer;
}

// A cloud request's error, with its decision record as `tandem` (as chat's errors carry it).
EmbeddingsAnswer error_answer(const ApiError& error, const DecisionRecord& record) {
  EmbeddingsAnswer answer = error_answer(error);
  answer.body["tandem"] = record.to_json();
  return answer;
}

// Counts a finished request in the gateway's metrics and cost (GatewayStats::observe_embeddings).
void count(Gateway& gateway, store::TraceRecord trace, const DecisionRecord& record, bool failed) {
  trace_outcome(trace, record, failed);
  gateway.stats().observe_embeddings(trace);
}

net::awaitable<EmbeddingsAnswer> edge_embeddings(Gateway& gateway, EmbeddingsRequest request) {
  engine::Engine* engine = gateway.engine();
  if (engine == nullptr) {
    co_return error_answer(unavailable(
        "embeddings come from the edge model, which is not available: " + gateway.edge_problem(),
        "edge_unavailable", ErrorOrigin::kEdge));
  }
  if (request.dimensions && *request.dimensions != engine->embedding_dimensions()) {
    co_return error_answer(invalid_request("dimensions: the edge model's embeddings have " +
                                               std::to_string(engine->embedding_dimensions()) +
                                               " dimensions and cannot be shortened to " +
                                               std::to_string(*request.dimensions),
                                           "dimensions"));
  }
  DecisionRecord record;
  record.tier = "edge";
  record.add_tier("edge");
  record.edge_model = gateway.edge_name();
  record.edge_sha256 = engine->model().sha256;
  store::TraceRecord trace;
  trace.model = request.model;
  trace.reason_codes = explicit_model_reasons(false, std::nullopt);
  auto executor = co_await net::asio::this_coro::executor;
  auto answers = std::make_shared<net::AsyncQueue<Result<engine::EmbeddingResult>>>(executor);
  // The inputs are tokenized by embed(): on the edge's workers, not this I/O thread.
  const auto queue_inputs = [engine, &request, answers] {
    return engine->embed(std::move(request.inputs), [answers](Result<engine::EmbeddingResult> r) {
      answers->push(std::move(r));
    });
  };
  const Status queued = co_await net::run_on(gateway.edge_workers(), queue_inputs);
  if (!queued) {
    ApiError error = api_error_from(queued.error());
    if (error.origin == ErrorOrigin::kClient) {
      error.param = "input";  // the engine's checks are of the inputs: ids, lengths
    }
    count(gateway, std::move(trace), record, true);
    co_return error_answer(error);
  }
  auto answer = co_await answers->pop();
  if (!answer || !*answer) {
    count(gateway, std::move(trace), record, true);
    if (!answer) {
      co_return error_answer(
          unavailable("the edge engine stopped answering", "edge_unavailable", ErrorOrigin::kEdge));
    }
    co_return error_answer(api_error_from(answer->error()));
  }
  TierUsage usage;
  usage.prompt_tokens = answer->value().prompt_tokens;
  record.edge_usage = usage;
  record.latency_ms = ms_since(record.started_at);
  count(gateway, std::move(trace), record, false);
  EmbeddingsAnswer out;
  out.body = embeddings_response(answer->value(), request.model, request.base64);
  out.tier = "edge";
  co_return out;
}

// Why a request may not leave the device: the privacy rule's reasons, without the ones that say
// what the edge would do instead (it does not stand in for a cloud embeddings model).
std::vector<std::string> pin_details(const routing::Decision& pinned) {
  std::vector<std::string> details;
  for (const auto& r : pinned.reasons) {
    if (r.code != routing::ReasonCode::kPrivacyEdgeOnly &&
        r.code != routing::ReasonCode::kEdgeUnavailable) {
      details.push_back(r.detail);
    }
  }
  return details;
}

std::string pin_reasons(const routing::Decision& pinned) {
  return join(pin_details(pinned), "; ");
}

// The refusal of a request for a cloud embeddings model whose input may not leave the device.
ApiError privacy_refusal(const routing::Decision& pinned, const std::string& model,
                         const std::string& edge_name) {
  const bool opaque_refused =
      std::any_of(pinned.reasons.begin(), pinned.reasons.end(), [](const routing::Reason& r) {
        return r.code == routing::ReasonCode::kPrivacyOpaqueRefused;
      });
  if (opaque_refused) {
    return invalid_request("the request cannot be answered: " + pin_reasons(pinned), "input",
                           "opaque_content_refused");
  }
  std::string edge = "'" + std::string(kRoutedModel) + "'";
  if (!edge_name.empty()) {
    edge += " or '" + edge_name + "'";
  }
  return invalid_request(
      "the request cannot be answered: " + pin_reasons(pinned) + ", which may not leave the " +
          "device, and the embeddings of '" + model +
          "' come only from its cloud upstream. The edge model's embeddings (model " + edge +
          ") are another model's vectors and cannot be mixed with that model's",
      "model", "private_data_needs_cloud");
}

void add_embeddings_usage(DecisionRecord& record, const upstream::Upstream& u,
                          const std::string& model, int prompt_tokens) {
  record.cloud_upstream = u.name();
  record.cloud_model = u.config().embeddings_models.at(model);
  TierUsage total = record.cloud_usage.value_or(TierUsage{});
  total.prompt_tokens = add_tokens(total.prompt_tokens, prompt_tokens);
  record.cloud_usage = total;
  record.cloud_cost_usd += prompt_tokens * u.config().prices.embeddings_per_million / 1e6;
}

// The decision record of a request for a cloud embeddings model, before any upstream is asked.
DecisionRecord cloud_embeddings_record(const Gateway& gateway, const EmbeddingsRequest& request,
                                       const std::string& client) {
  DecisionRecord record;
  record.request_id = new_request_id("embd-");
  record.pattern = "cloud";
  record.reasons.push_back("model '" + request.model + "' is a cloud embeddings model");
  if (gateway.engine() != nullptr) {
    record.edge_model = gateway.edge_name();
    record.edge_sha256 = gateway.engine()->model().sha256;
  }
  record.client = client;
  return record;
}

// Data that must not leave the device does not, whichever model the client named: the scan
// reads every field of the body, as the egress guard does. The refusal when the input may not
// leave, with its reasons in `record`; the scan's signals go into `trace` either way.
std::optional<ApiError> refuse_private_input(Gateway& gateway, const EmbeddingsRequest& request,
                                             const routing::RequestHints& hints,
                                             DecisionRecord& record, store::TraceRecord& trace) {
  routing::RouteInput input;
  input.document = &request.cloud_body;
  input.hints = hints;
  const routing::RouteSignals signals = gateway.router().signals(input);
  const routing::HealthSnapshot health;  // the edge does not stand in: its state is moot
  const auto pinned = routing::privacy_decision(gateway.router().config(), signals, health);
  trace_signals(trace, signals, explicit_model_reasons(true, pinned));
  if (!pinned) {
    return std::nullopt;
  }
  record.pattern = "none";
  record.may_leave_device = false;
  record.routing = gateway.router().explanation(input, signals, *pinned, health, false);
  for (std::string& detail : pin_details(*pinned)) {
    record.reasons.push_back(std::move(detail));
  }
  return privacy_refusal(*pinned, request.model, gateway.edge_name());
}

// The embeddings upstream `u` answered: counted, and sent with the decision record.
EmbeddingsAnswer cloud_answer(Gateway& gateway, const EmbeddingsRequest& request,
                              const upstream::Upstream& u, const upstream::CloudEmbeddings& answer,
                              DecisionRecord& record, store::TraceRecord trace) {
  record.data_left_device = true;
  record.tier = "cloud";
  record.add_tier("cloud");
  add_embeddings_usage(record, u, request.model, answer.prompt_tokens);
  record.latency_ms = ms_since(record.started_at);
  count(gateway, std::move(trace), record, false);
  EmbeddingsAnswer out;
  out.body = cloud_embeddings_response(answer, request.model, request.base64, record.to_json());
  out.tier = "cloud";
  return out;
}

// Asks the upstreams that serve the model, in order, until one answers or a failure ends the
// request (the cloud tier's one fallback policy, cloud_fallback.h); the answer or the error is
// counted.
net::awaitable<EmbeddingsAnswer> ask_cloud_upstreams(Gateway& gateway,
                                                     const EmbeddingsRequest& request,
                                                     DecisionRecord& record,
                                                     store::TraceRecord& trace,
                                                     CancelSignal& cancel) {
  const std::vector<upstream::Upstream*> candidates =
      upstreams_serving(gateway.upstreams(), request.model, CloudService::kEmbeddings);
  const std::string what = "embeddings of '" + request.model + "'";
  std::optional<upstream::CloudEmbeddings> embeddings;
  const CloudTry attempt = [&](upstream::Upstream& u) -> net::awaitable<CloudAttempt> {
    upstream::EmbeddingsCall call;
    call.public_model = request.model;
    call.body = &request.cloud_body;
    call.inputs = request.inputs.size();
    call.egress = Gateway::egress(record, "embeddings");
    auto result = co_await u.embed(call, cancel);
    CloudAttempt tried;
    if (auto* answer = std::get_if<upstream::CloudEmbeddings>(&result)) {
      embeddings = std::move(*answer);
    } else {
      tried.failure = std::move(std::get<upstream::UpstreamFailure>(result));
    }
    co_return tried;
  };
  const CloudCannotRun any_upstream_can;
  auto answered = co_await try_cloud_upstreams(candidates, what, record, attempt, any_upstream_can);
  if (auto* u = std::get_if<upstream::Upstream*>(&answered)) {
    co_return cloud_answer(gateway, request, **u, *embeddings, record, std::move(trace));
  }
  record.latency_ms = ms_since(record.started_at);
  count(gateway, std::move(trace), record, true);
  co_return error_answer(std::get<ApiError>(answered), record);
}

net::awaitable<EmbeddingsAnswer> cloud_embeddings(Gateway& gateway,
                                                  const EmbeddingsRequest& request,
                                                  routing::RequestHints hints,
                                                  CancelSignal& cancel) {
  if (hints.client.empty()) {
    hints.client = request.user;
  }
  DecisionRecord record = cloud_embeddings_record(gateway, request, hints.client);
  store::TraceRecord trace;
  trace.request_id = record.request_id;
  trace.model = request.model;
  const std::optional<ApiError> refusal =
      refuse_private_input(gateway, request, hints, record, trace);
  if (refusal) {
    record.latency_ms = ms_since(record.started_at);
    count(gateway, std::move(trace), record, true);
    co_return error_answer(*refusal, record);
  }
  auto answer = co_await ask_cloud_upstreams(gateway, request, record, trace, cancel);
  co_return answer;
}

}  // namespace

bool is_cloud_embeddings_model(const Gateway& gateway, const std::string& model) {
  return std::any_of(gateway.upstreams().begin(), gateway.upstreams().end(),
                     [&](const auto& u) { return u->serves_embeddings(model); });
}

net::awaitable<EmbeddingsAnswer> answer_embeddings(Gateway& gateway, EmbeddingsRequest request,
                                                   routing::RequestHints hints,
                                                   CancelSignal& cancel) {
  const bool edge_model = request.model == kRoutedModel ||
                          (!gateway.edge_name().empty() && request.model == gateway.edge_name());
  if (edge_model) {
    auto answer = co_await edge_embeddings(gateway, std::move(request));
    co_return answer;
  }
  if (is_cloud_embeddings_model(gateway, request.model)) {
    auto answer = co_await cloud_embeddings(gateway, request, std::move(hints), cancel);
    co_return answer;
  }
  std::vector<std::string> names = {kRoutedModel};
  if (!gateway.edge_name().empty()) {
    names.push_back(gateway.edge_name());
  }
  for (const auto& u : gateway.upstreams()) {
    for (const auto& [name, _] : u->config().embeddings_models) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
      }
    }
  }
  co_return error_answer(invalid_request(
      "model '" + request.model + "' gives no embeddings here; the models that do: " + join(names),
      "model"));
}

}  // namespace tandem::server
