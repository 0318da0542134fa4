#pragma once
// One OpenAI-compatible cloud endpoint (OpenAI, vLLM, SGLang, llama-server, Ollama...). An
// Upstream runs one completion with retries, circuit breaking and health probing. Streaming
// requests stream from the upstream too (with usage), so the first byte is relayed at once;
// a non-streaming request arrives as one event carrying the whole answer.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "common/cancel.h"
#include "common/json_document_writer.h"
#include "config/config.h"
#include "net/asio.h"
#include "upstream/circuit_breaker.h"
#include "upstream/cloud_event.h"
#include "upstream/cloud_reply.h"
#include "upstream/egress.h"
#include "upstream/http_client.h"

namespace tandem::upstream {

struct CloudRequest {
  ApiKind kind = ApiKind::kChat;
  std::string public_model;  // the name the client used; mapped per upstream
  // The OpenAI request body, borrowed: the caller keeps it until the call returns. Model and
  // streaming fields are written over it in each attempt's body, never set in it.
  const nlohmann::json* body = nullptr;
  // Stream from the upstream (the client streams) or take one JSON answer (it does not: one
  // parse instead of one per token, and the whole answer can still be retried elsewhere).
  bool stream = true;
  // Why and for whom: every attempt's exact body passes the egress guard with it.
  EgressSend egress;
};

// One request to an upstream's OpenAI embeddings endpoint (POST base_url/embeddings).
struct EmbeddingsCall {
  std::string public_model;  // the name the client used; mapped per upstream
  // The client's OpenAI request body, borrowed as CloudRequest's; `model` is written over it.
  const nlohmann::json* body = nullptr;
  size_t inputs = 0;  // the inputs it carries: the answer must hold a vector for each
  // Why and for whom: every attempt's exact body passes the egress guard with it.
  EgressSend egress;
};

// An upstream's embeddings answer, checked: one vector per input, in input order, all of one
// length. Values are kept as sent (float or base64 float32), so either encoding can be relayed.
struct CloudEmbeddings {
  std::vector<std::vector<double>> vectors;
  int prompt_tokens = 0;  // usage.prompt_tokens; 0 when not reported (usage_problem says why)
  // What was wrong with the usage object, when something was: the count then reads as 0.
  std::string usage_problem;
  std::string model;  // the model the upstream says answered ("" when it names none)
};

// One request to an upstream's Responses endpoint (POST base_url/responses), for an upstream
// with `api: responses`: the client's own Responses request, built-in tools and all.
struct ResponsesCall {
  std::string public_model;  // the name the client used; mapped per upstream through `models`
  // The Responses request body, borrowed as CloudRequest's; `model` and `stream` are written
  // over it.
  const nlohmann::json* body = nullptr;
  // Stream from the upstream (the client streams) or take the whole Response at once.
  bool stream = true;
  // Why and for whom: every attempt's exact body passes the egress guard with it.
  EgressSend egress;
};

// One checked part of an upstream's Responses answer: an event of its stream as sent, or the
// whole Response of a call that does not stream.
struct ResponsesEvent {
  std::string type;     // the event's `type`; "response" for a whole Response
  nlohmann::json data;  // the event (or the whole Response) as the upstream sent it
  // The answer's end: a response.completed or response.incomplete event (its `response` is the
  // final Response) or a whole Response. The final Response's `output` is a list of objects
  // that each have a `type`.
  bool final = false;
  // The final Response's usage (input_tokens, output_tokens, input_tokens_details.cached_tokens
  // as prompt, completion and cached prompt tokens); nullopt when it reports none.
  std::optional<CloudUsage> usage;
  std::string usage_problem;  // what was wrong with that usage; those counts read as 0
  // Output text: a response.output_text.delta event's delta, or all the output_text of a final
  // Response's message items (what shadow mode compares).
  std::string text;
  std::string model;  // the final Response's model ("" when it names none)

  // Carries something of the answer. response.created and response.in_progress do not: a
  // caller may hold them back, so that a retry after them is still safe.
  bool has_output() const { return type != "response.created" && type != "response.in_progress"; }
};

struct UpstreamFailure {
  HttpFailure http;
  std::string upstream;    // which upstream
  bool delivered = false;  // some events reached the caller: no retry or fallback is safe
  int attempts = 0;
  bool client_error = false;             // the upstream rejected the request itself (4xx other than
                                         // 401/403/404/408/409/429): another upstream would too
  std::optional<EgressRefusal> refused;  // with HttpFailure::Kind::kRefused
};

struct UpstreamStatus {
  std::string name;
  bool online = true;
  CircuitState circuit = CircuitState::kClosed;
  int consecutive_failures = 0;
  int64_t cooldown_remaining_ms = 0;
  std::string last_error;
};

class Upstream {
 public:
  // Receives each event; returns false when its consumer is gone (the call then stops).
  using EventSink = std::function<net::awaitable<bool>(CloudEvent&&)>;

  // Fails when the base URL or the TLS settings (ca_file) are unusable, or without a guard.
  // Every body this upstream sends, probes included, passes `guard` first.
  static Result<std::unique_ptr<Upstream>> create(
      config::UpstreamConfig config, std::shared_ptr<EgressGuard> guard,
      CircuitBreaker::Now now = std::chrono::steady_clock::now);

  const config::UpstreamConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  bool serves(const std::string& public_model) const {
    return config_.models.count(public_model) > 0;
  }
  // Maps `public_model` in embeddings_models.
  bool serves_embeddings(const std::string& public_model) const {
    return config_.embeddings_models.count(public_model) > 0;
  }

  // Streams one completion into `sink` (awaited on the calling coroutine's executor). Retries
  // connect errors, timeouts, 429 and 5xx with jittered exponential backoff (Retry-After
  // honoured) while nothing has been delivered. Returns nullopt on success. A body the egress
  // guard refuses fails at once (kRefused), with nothing sent and no retry.
  net::awaitable<std::optional<UpstreamFailure>> complete(const CloudRequest& request,
                                                          const EventSink& sink,
                                                          CancelSignal& cancel);

  // One embeddings request for a model this upstream serves_embeddings(), with complete()'s
  // retries, circuit breaking and egress guard. The answer is read whole and checked
  // (parse_cloud_embeddings): a malformed one is a protocol failure of this upstream, retried
  // and counted like any other.
  net::awaitable<std::variant<CloudEmbeddings, UpstreamFailure>> embed(const EmbeddingsCall& call,
                                                                       CancelSignal& cancel);

  // One Responses request for a model this upstream serves(), to POST base_url/responses, with
  // complete()'s retries, circuit breaking and egress guard. A stream's events reach `sink` as
  // they arrive; the stream must end with response.completed or response.incomplete. A whole
  // Response arrives as one final event. What parse_responses_event and parse_responses_answer
  // refuse is a protocol failure of this upstream, retried (while nothing with output reached the
  // sink) and counted like any other.
  using ResponsesSink = std::function<net::awaitable<bool>(ResponsesEvent&&)>;
  net::awaitable<std::optional<UpstreamFailure>> respond(const ResponsesCall& call,
                                                         const ResponsesSink& sink,
                                                         CancelSignal& cancel);

  // Probes `health.path` every `health.interval_ms` until `stop` is cancelled.
  net::awaitable<void> probe_forever(CancelSignal& stop);

  UpstreamStatus status() const;
  bool online() const { return online_.load(); }
  // Shared circuit state (several replicas): see CircuitBreaker::hold_open / held_by_peer.
  void hold_circuit_open(std::chrono::milliseconds remaining) { breaker_.hold_open(remaining); }
  bool circuit_held_by_peer() const { return breaker_.held_by_peer(); }

 private:
  Upstream(config::UpstreamConfig config, Endpoint endpoint, std::unique_ptr<net::ssl::context> tls,
           std::shared_ptr<EgressGuard> guard, CircuitBreaker::Now now);
  net::awaitable<std::optional<UpstreamFailure>> attempt(const CloudRequest& request,
                                                         const EventSink& sink,
                                                         CancelSignal& cancel, bool& delivered);
  net::awaitable<std::optional<UpstreamFailure>> attempt_embeddings(const EmbeddingsCall& call,
                                                                    CancelSignal& cancel,
                                                                    CloudEmbeddings& answer);
  net::awaitable<std::optional<UpstreamFailure>> attempt_responses(const ResponsesCall& call,
                                                                   const ResponsesSink& sink,
                                                                   CancelSignal& cancel,
                                                                   bool& delivered);
  // A chat or completions answer read whole into `sink`.
  net::awaitable<std::optional<UpstreamFailure>> relay_whole(HttpExchange& exchange,
                                                             const CloudRequest& request,
                                                             const EventSink& sink,
                                                             CancelSignal& cancel, bool& delivered);
  // A chat or completions stream, chunk by chunk, into `sink`.
  net::awaitable<std::optional<UpstreamFailure>> relay_stream(HttpExchange& exchange,
                                                              const CloudRequest& request,
                                                              const EventSink& sink,
                                                              CancelSignal& cancel,
                                                              bool& delivered);
  // The rest of a Responses stream, event by event, into `sink` (cloud_responses.cpp).
  net::awaitable<std::optional<UpstreamFailure>> relay_responses_stream(HttpExchange& exchange,
                                                                        const ResponsesSink& sink,
                                                                        CancelSignal& cancel,
                                                                        bool& delivered);
  // POSTs `body`, with `members` and `model` written over it (json_document_writer.h), to
  // `path` through the egress guard and opens the answer: a refusal, a failure to connect or
  // a non-2xx status (its body read for the message) is the failure. The caller registers
  // cancellation on the exchange it gets.
  using Opened = std::variant<std::unique_ptr<HttpExchange>, UpstreamFailure>;
  net::awaitable<Opened> post(const std::string& path, const nlohmann::json& body,
                              std::vector<JsonMember> members, const std::string& model,
                              EgressSend send, const char* accept, CancelSignal& cancel);
  // A non-streamed answer's whole JSON text, or the failure (another Content-Type, a read error).
  using Body = std::variant<std::string, UpstreamFailure>;
  net::awaitable<Body> read_json(HttpExchange& exchange);
  // Runs attempts until one succeeds, fails for good, or the retries are spent: the circuit
  // breaker admits each, its outcome is recorded, retryable failures back off. `delivered`
  // (set by an attempt) ends the retries: something reached the caller.
  using Attempt = std::function<net::awaitable<std::optional<UpstreamFailure>>(bool& delivered)>;
  net::awaitable<std::optional<UpstreamFailure>> with_retries(const Attempt& attempt,
                                                              CancelSignal& cancel);
  std::chrono::milliseconds backoff(int attempt, const HttpFailure& failure);
  void set_last_error(const std::string& message);
  // Logs what was wrong with an event's (or any answer's) usage object, if anything.
  void note_usage_problem(const CloudEvent& event) const;
  void note_usage_problem(const std::string& problem) const;
  // Change state, logging transitions.
  void set_online(bool online, const std::string& why);
  void note_circuit(CircuitState before, const std::string& why);

  config::UpstreamConfig config_;
  Endpoint endpoint_;
  std::unique_ptr<net::ssl::context> tls_;
  std::shared_ptr<EgressGuard> guard_;
  ConnectionPool pool_;
  CircuitBreaker breaker_;
  std::atomic<bool> online_{true};
  mutable std::mutex mutex_;
  std::string last_error_;  // guarded by mutex_
  std::mt19937 jitter_;     // guarded by mutex_
};

// Parses an upstream's answer to an embeddings request of `inputs` inputs. Fails (a malformed
// reply) on JSON errors, an {"error": ...} object, `data` that is absent or not a list of
// `inputs` objects, an item whose `index` is not a distinct integer in [0, inputs) (absent: its
// position), whose `embedding` is neither a non-empty list of numbers within float range nor
// base64 of little-endian float32 values, or vectors of different lengths. A usage that is
// absent or null reads as 0; a usage.prompt_tokens that is not an integer in [0, INT32_MAX]
// reads as 0 and is named in usage_problem. Never throws.
Result<CloudEmbeddings> parse_cloud_embeddings(const std::string& body, size_t inputs);

// Parses one event of an upstream's Responses stream (a `data:` payload). Fails (a malformed
// reply) on JSON errors, an event that is not an object or has no string `type`, an `error`
// event or a response.failed one (their message named), and a response.completed or
// response.incomplete whose `response` is not a Response as parse_responses_answer checks it.
// Never throws.
Result<ResponsesEvent> parse_responses_event(const std::string& data);

// Parses a whole Response (a call that does not stream). Fails (a malformed reply) on JSON
// errors, a body that is not an object, an `error` that is not null, a `status` of "failed",
// and an `output` that is absent or not a list of objects that each have a string `type`.
// Usage counts that are not integers in [0, INT32_MAX] read as 0 and are named in
// usage_problem. Never throws.
Result<ResponsesEvent> parse_responses_answer(const std::string& body);

}  // namespace tandem::upstream
