// `fault_upstream`: an OpenAI-compatible HTTP upstream that misbehaves on request. The `model`
// field of each completion request picks the misbehaviour (see tests/support/README.md), so a
// gateway test can provoke any failure a real provider produces (rate limits, 5xx, hangs,
// resets, broken streams, huge bodies) by naming a model, and benchmarks get a fast,
// deterministic upstream from `fault-ok`.
//
// One io_context serves every connection with a coroutine each (no thread per connection),
// so thousands of idle keep-alive connections cost only their sockets and coroutine frames.
// Waits use timers, never sleeps, so a slow or hanging response never blocks other clients.

// GCC 12 with Boost 1.74: Asio's coroutine support needs <utility> included before it.
#include <utility>
// Keep <utility> above: clang-format sorts only includes that are not separated by a comment.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "fault_responses.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;
// Ordered, so responses read in the field order OpenAI uses (id, object, created, ...).
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

constexpr std::size_t kMaxRequestBodyBytes = std::size_t{64} * 1024 * 1024;
constexpr std::int64_t kDefaultMaxTokens = 8;
constexpr std::int64_t kMaxTopLogprobs = 20;
// Responses are built whole in memory, so a runaway max_tokens is refused like an oversized one
// at OpenAI rather than exhausting memory.
constexpr std::int64_t kMaxPieces = 1'000'000;
constexpr std::size_t kOversizedPieceBytes = std::size_t{64} * 1024;
constexpr std::size_t kOversizedTotalBytes = std::size_t{64} * 1024 * 1024;
constexpr std::size_t kOversizedPieces = kOversizedTotalBytes / kOversizedPieceBytes;
constexpr double kSampledLogprob = -0.1;
// Caps delays named in a model so a typo cannot overflow the clock; a day outlasts any test.
constexpr std::uint64_t kMaxInjectedDelayMs = 24ULL * 60 * 60 * 1000;
// How often a delayed response checks whether its client has gone, so an abandoned wait
// frees its connection promptly instead of when the delay ends.
constexpr Millis kPeerPollInterval{50};
// Bound on waiting for the peer to acknowledge a partial response before resetting.
constexpr Millis kResetDrainPollInterval{2};
constexpr int kResetDrainPolls = 500;

constexpr std::array<std::string_view, 6> kContentWords = {"Hello", "from",     "the",
                                                           "fault", "upstream", "."};

// ---------------------------------------------------------------------------------------------
// Shared state: touched by every io thread, hence atomics and a mutex.

class ServerState {
 public:
  // Returns how many completion requests have named `model` since the last reset, this one
  // included; `-xN` models fail while this is at most N.
  std::uint64_t count_request(const std::string& model) {
    const std::lock_guard lock(mutex_);
    return ++requests_by_model_[model];
  }

  void count_completion_endpoint_hit() { ++total_requests_; }

  // Keeps the body of a completion request exactly as it arrived: the newest kMaxRecorded, so
  // a benchmark's millions of requests cost bounded memory.
  void record_body(std::string_view path, const std::string& body) {
    const std::lock_guard lock(mutex_);
    if (recorded_.size() == kMaxRecorded) {
      recorded_.pop_front();
      ++recorded_dropped_;
    }
    recorded_.push_back({std::string(path), body});
  }

  Json bodies() const {
    const std::lock_guard lock(mutex_);
    Json list = Json::array();
    for (const auto& [path, body] : recorded_) {
      list.push_back({{"path", path}, {"body", body}});
    }
    return {{"bodies", std::move(list)}, {"dropped", recorded_dropped_}};
  }

  void reset_counters() {
    const std::lock_guard lock(mutex_);
    requests_by_model_.clear();
    total_requests_ = 0;
    recorded_.clear();
    recorded_dropped_ = 0;
  }

  Json stats(std::int64_t open_connections_excluded) const {
    Json requests = Json::object();
    {
      const std::lock_guard lock(mutex_);
      for (const auto& [model, count] : requests_by_model_) {
        requests[model] = count;
      }
    }
    return {{"requests", std::move(requests)},
            {"open_connections",
             std::max<std::int64_t>(0, open_connections.load() - open_connections_excluded)},
            {"active_streams", active_streams.load()},
            {"total_requests", total_requests_.load()}};
  }

  std::uint64_t next_response_number() { return ++responses_started_; }

  std::atomic<std::int64_t> open_connections{0};
  std::atomic<std::int64_t> active_streams{0};

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> requests_by_model_;  // guarded by mutex_
  static constexpr size_t kMaxRecorded = 256;
  std::deque<std::pair<std::string, std::string>> recorded_;  // path, body; guarded by mutex_
  std::uint64_t recorded_dropped_ = 0;                        // guarded by mutex_
  std::atomic<std::uint64_t> total_requests_{0};
  std::atomic<std::uint64_t> responses_started_{0};
};

// Keeps a gauge up until lower() or the end of its life, which also comes when a coroutine
// frame is destroyed because its client vanished or the server stopped.
class ScopedGauge {
 public:
  explicit ScopedGauge(std::atomic<std::int64_t>& gauge) : gauge_(gauge) { ++gauge_; }
  ~ScopedGauge() { lower(); }
  ScopedGauge(const ScopedGauge&) = delete;
  ScopedGauge& operator=(const ScopedGauge&) = delete;

  void lower() {
    if (raised_) {
      raised_ = false;
      --gauge_;
    }
  }

 private:
  std::atomic<std::int64_t>& gauge_;
  bool raised_ = true;
};

// ---------------------------------------------------------------------------------------------
// Model names: `fault-<mode>[-<parameter>][-x<N>]`.

enum class Fault {
  kOk,
  kDelay,
  kSlow,
  kRateLimit,
  kServerError,
  kUnavailable,
  kHang,
  kReset,
  kResetMidStream,
  kMalformedSse,
  kWrongContentType,
  kOversized,
  kToolCalls,
  kMalformedToolCalls,
  kMalformedUsage,
  kNoChoices,
  kMalformedChoices,
  kFailed,      // Responses: a failed response; chat and completions answer normally
  kUnfinished,  // Responses: a stream without response.completed; the others answer normally
};

struct Behaviour {
  Fault fault = Fault::kOk;
  Millis wait{0};                         // kDelay: before headers; kSlow: before each piece
  std::uint64_t retry_after_seconds = 1;  // kRateLimit
  std::optional<std::uint64_t> failing_requests;  // from `-xN`: only the first N misbehave
};

std::optional<std::uint64_t> parse_digits(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stopped_at, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stopped_at != end) {
    return std::nullopt;
  }
  return value;
}

// Returns nothing for a `fault-*` name that names no mode, which the caller reports as an
// unknown model, so a typo in a test fails loudly instead of silently behaving as fault-ok.
std::optional<Behaviour> parse_model_name(std::string_view model) {
  Behaviour behaviour;
  if (!model.starts_with("fault-")) {
    return behaviour;
  }
  if (const auto suffix = model.rfind("-x"); suffix != std::string_view::npos) {
    if (const auto count = parse_digits(model.substr(suffix + 2))) {
      behaviour.failing_requests = count;
      model = model.substr(0, suffix);
    }
  }

  struct FixedName {
    std::string_view name;
    Fault fault;
  };
  constexpr std::array<FixedName, 17> kFixedNames = {{
      {"fault-ok", Fault::kOk},
      {"fault-429", Fault::kRateLimit},
      {"fault-500", Fault::kServerError},
      {"fault-503", Fault::kUnavailable},
      {"fault-hang", Fault::kHang},
      {"fault-reset", Fault::kReset},
      {"fault-reset-mid-stream", Fault::kResetMidStream},
      {"fault-malformed-sse", Fault::kMalformedSse},
      {"fault-wrong-content-type", Fault::kWrongContentType},
      {"fault-oversized", Fault::kOversized},
      {"fault-tool-calls", Fault::kToolCalls},
      {"fault-malformed-tool-calls", Fault::kMalformedToolCalls},
      {"fault-malformed-usage", Fault::kMalformedUsage},
      {"fault-no-choices", Fault::kNoChoices},
      {"fault-malformed-choices", Fault::kMalformedChoices},
      {"fault-failed", Fault::kFailed},
      {"fault-no-completed", Fault::kUnfinished},
  }};
  for (const auto& fixed : kFixedNames) {
    if (model == fixed.name) {
      behaviour.fault = fixed.fault;
      return behaviour;
    }
  }

  struct ParameterisedName {
    std::string_view prefix;
    Fault fault;
  };
  constexpr std::array<ParameterisedName, 3> kParameterisedNames = {{
      {"fault-delay-", Fault::kDelay},
      {"fault-slow-", Fault::kSlow},
      {"fault-429-retry-after-", Fault::kRateLimit},
  }};
  for (const auto& parameterised : kParameterisedNames) {
    if (!model.starts_with(parameterised.prefix)) {
      continue;
    }
    const auto parameter = parse_digits(model.substr(parameterised.prefix.size()));
    if (!parameter) {
      return std::nullopt;
    }
    behaviour.fault = parameterised.fault;
    if (parameterised.fault == Fault::kRateLimit) {
      behaviour.retry_after_seconds = *parameter;
    } else {
      behaviour.wait = Millis(std::min(*parameter, kMaxInjectedDelayMs));
    }
    return behaviour;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Requests.

enum class Endpoint { kChat, kCompletions };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::string model;
  bool stream = false;
  bool include_usage = false;
  std::int64_t max_pieces = kDefaultMaxTokens;
  bool logprobs = false;
  std::int64_t top_logprobs = 0;
  std::int64_t prompt_tokens = 0;
};

// A request the client must fix; becomes a 400 in OpenAI's error shape.
class BadRequest : public std::runtime_error {
 public:
  BadRequest(const std::string& message, std::optional<std::string> param)
      : std::runtime_error(message), param_(std::move(param)) {}
  const std::optional<std::string>& param() const { return param_; }

 private:
  std::optional<std::string> param_;
};

// OpenAI treats an explicit null like an absent field.
const Json* find_field(const Json& object, const char* name) {
  const auto found = object.find(name);
  if (found == object.end() || found->is_null()) {
    return nullptr;
  }
  return &*found;
}

bool bool_field(const Json& object, const char* name, const std::string& param) {
  const Json* value = find_field(object, name);
  if (value == nullptr) {
    return false;
  }
  if (!value->is_boolean()) {
    throw BadRequest(param + " must be a boolean", param);
  }
  return value->get<bool>();
}

std::optional<std::int64_t> count_field(const Json& object, const char* name) {
  const Json* value = find_field(object, name);
  if (value == nullptr) {
    return std::nullopt;
  }
  if (!value->is_number_integer() || value->get<std::int64_t>() < 0) {
    throw BadRequest(std::string(name) + " must be a non-negative integer", name);
  }
  return value->get<std::int64_t>();
}

std::int64_t count_words(std::string_view text) {
  std::int64_t words = 0;
  bool in_word = false;
  for (const char c : text) {
    const bool is_space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!is_space && !in_word) {
      ++words;
    }
    in_word = !is_space;
  }
  return words;
}

// Message content and prompts come as a string, an array of strings or text parts, or token
// ids; each token id counts as one word.
std::int64_t count_prompt_words(const Json& content) {
  if (content.is_string()) {
    return count_words(content.get_ref<const std::string&>());
  }
  if (content.is_number()) {
    return 1;
  }
  std::int64_t words = 0;
  if (content.is_array()) {
    for (const Json& part : content) {
      words += count_prompt_words(part);
    }
  } else if (content.is_object()) {
    if (const Json* text = find_field(content, "text"); text != nullptr && text->is_string()) {
      words += count_words(text->get_ref<const std::string&>());
    }
  }
  return words;
}

CompletionRequest parse_completion_request(const Json& body, Endpoint endpoint, std::string model) {
  CompletionRequest request;
  request.endpoint = endpoint;
  request.model = std::move(model);
  request.stream = bool_field(body, "stream", "stream");
  if (const Json* options = find_field(body, "stream_options")) {
    if (!options->is_object()) {
      throw BadRequest("stream_options must be an object", "stream_options");
    }
    request.include_usage = bool_field(*options, "include_usage", "stream_options.include_usage");
  }

  const auto max_completion_tokens = count_field(body, "max_completion_tokens");
  const auto max_tokens = count_field(body, "max_tokens");
  request.max_pieces = max_completion_tokens.value_or(max_tokens.value_or(kDefaultMaxTokens));
  if (request.max_pieces > kMaxPieces) {
    throw BadRequest("max_tokens is too large: " + std::to_string(request.max_pieces) +
                         ". This model supports at most " + std::to_string(kMaxPieces) +
                         " completion tokens.",
                     max_completion_tokens ? "max_completion_tokens" : "max_tokens");
  }

  if (const Json* logprobs = find_field(body, "logprobs")) {
    if (logprobs->is_boolean()) {
      request.logprobs = logprobs->get<bool>();
    } else if (endpoint == Endpoint::kCompletions && logprobs->is_number_integer() &&
               logprobs->get<std::int64_t>() >= 0) {
      // The legacy completions API takes the number of alternatives here.
      request.logprobs = true;
      request.top_logprobs = logprobs->get<std::int64_t>();
    } else {
      throw BadRequest("logprobs must be a boolean", "logprobs");
    }
  }
  if (const auto top_logprobs = count_field(body, "top_logprobs")) {
    request.top_logprobs = *top_logprobs;
  }
  if (request.top_logprobs > kMaxTopLogprobs) {
    throw BadRequest("top_logprobs must be at most 20", "top_logprobs");
  }

  if (endpoint == Endpoint::kChat) {
    const Json* messages = find_field(body, "messages");
    if (messages == nullptr || !messages->is_array()) {
      throw BadRequest("messages must be an array of messages", "messages");
    }
    for (const Json& message : *messages) {
      if (!message.is_object()) {
        throw BadRequest("each message must be an object", "messages");
      }
      if (const Json* content = find_field(message, "content")) {
        request.prompt_tokens += count_prompt_words(*content);
      }
    }
  } else if (const Json* prompt = find_field(body, "prompt")) {
    request.prompt_tokens = count_prompt_words(*prompt);
  }
  return request;
}

// An embeddings request: how many inputs it carries, how long each vector is, how to encode it.
struct EmbeddingsRequest {
  std::string model;
  std::vector<std::string> inputs;  // each input's text; token ids as their decimal words
  std::int64_t dimensions = 8;
  bool base64 = false;
  std::int64_t prompt_tokens = 0;
};

constexpr std::int64_t kMaxEmbeddingDimensions = 4096;

// One input as text: a string, or an array of token ids (its ids, space-separated).
std::optional<std::string> embedding_input(const Json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (!value.is_array() || value.empty()) {
    return std::nullopt;
  }
  std::string words;
  for (const Json& id : value) {
    if (!id.is_number_integer()) {
      return std::nullopt;
    }
    words += (words.empty() ? "" : " ") + std::to_string(id.get<std::int64_t>());
  }
  return words;
}

EmbeddingsRequest parse_embeddings_request(const Json& body, std::string model) {
  EmbeddingsRequest request;
  request.model = std::move(model);
  const Json* input = find_field(body, "input");
  if (input == nullptr) {
    throw BadRequest("input is required", "input");
  }
  if (auto one = embedding_input(*input)) {
    request.inputs.push_back(std::move(*one));  // a string, or one input as token ids
  } else if (input->is_array() && !input->empty()) {
    for (const Json& item : *input) {
      auto text = embedding_input(item);
      if (!text) {
        throw BadRequest("input items must be strings or arrays of token ids", "input");
      }
      request.inputs.push_back(std::move(*text));
    }
  } else {
    throw BadRequest("input must be a string or a non-empty array", "input");
  }
  if (const auto dimensions = count_field(body, "dimensions")) {
    if (*dimensions < 1 || *dimensions > kMaxEmbeddingDimensions) {
      throw BadRequest("dimensions must be between 1 and 4096", "dimensions");
    }
    request.dimensions = *dimensions;
  }
  if (const Json* format = find_field(body, "encoding_format")) {
    if (!format->is_string() || (*format != "float" && *format != "base64")) {
      throw BadRequest("encoding_format must be float or base64", "encoding_format");
    }
    request.base64 = *format == "base64";
  }
  for (const std::string& text : request.inputs) {
    request.prompt_tokens += count_words(text);
  }
  return request;
}

// Component j of an input's vector: a multiple of 1/1024 in [-1, 1] (exact in float32, so a
// float and a base64 answer carry the same numbers), fixed by the input's text.
float embedding_component(const std::string& text, std::int64_t j) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (const char c : text) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  h = (h ^ static_cast<std::uint64_t>(j)) * 1099511628211ULL;
  return static_cast<float>(static_cast<std::int64_t>(h % 2049) - 1024) / 1024.0F;
}

std::string base64_of(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t group = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) {
      group |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    }
    if (i + 2 < bytes.size()) {
      group |= static_cast<unsigned char>(bytes[i + 2]);
    }
    out += kAlphabet[(group >> 18) & 63];
    out += kAlphabet[(group >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(group >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[group & 63] : '=';
  }
  return out;
}

// OpenAI's embeddings answer, or one broken as the model name asked (README): usage counts of
// the wrong type, no `data`, or vectors of strings.
Json embeddings_body(const EmbeddingsRequest& request, bool malformed_usage, bool no_data,
                     bool malformed_data) {
  Json data = Json::array();
  for (std::size_t i = 0; i < request.inputs.size(); ++i) {
    std::vector<float> vector;
    for (std::int64_t j = 0; j < request.dimensions; ++j) {
      vector.push_back(embedding_component(request.inputs[i], j));
    }
    Json embedding;
    if (malformed_data) {
      embedding = Json::array({"not", "a", "number"});
    } else if (request.base64) {
      embedding = base64_of(std::string_view(reinterpret_cast<const char*>(vector.data()),
                                             vector.size() * sizeof(float)));
    } else {
      embedding = vector;
    }
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", std::move(embedding)}});
  }
  Json usage = {{"prompt_tokens", request.prompt_tokens}, {"total_tokens", request.prompt_tokens}};
  if (malformed_usage) {
    usage = {{"prompt_tokens", nullptr}, {"total_tokens", "8"}};
  }
  Json body = {{"object", "list"}};
  if (!no_data) {
    body["data"] = std::move(data);
  }
  body["model"] = request.model;
  body["usage"] = std::move(usage);
  return body;
}

// ---------------------------------------------------------------------------------------------
// Response bodies.

std::vector<std::string> make_pieces(std::int64_t count) {
  std::vector<std::string> pieces;
  pieces.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    const std::string_view word = kContentWords[static_cast<std::size_t>(i) % kContentWords.size()];
    pieces.push_back(i == 0 ? std::string(word) : " " + std::string(word));
  }
  return pieces;
}

Json error_body(std::string_view message, std::string_view type, Json param = nullptr,
                Json code = nullptr) {
  return {{"error",
           {{"message", message},
            {"type", type},
            {"param", std::move(param)},
            {"code", std::move(code)}}}};
}

Json token_bytes(std::string_view token) {
  Json bytes = Json::array();
  for (const char c : token) {
    bytes.push_back(static_cast<unsigned char>(c));
  }
  return bytes;
}

// The fake alternatives: rank 0 is the sampled token itself, then " alt1", " alt2", ...
std::string alternative_token(std::string_view sampled, std::int64_t rank) {
  return rank == 0 ? std::string(sampled) : " alt" + std::to_string(rank);
}

double alternative_logprob(std::int64_t rank) {
  return kSampledLogprob - static_cast<double>(rank);
}

Json chat_token_logprob(std::string_view token, std::int64_t top) {
  Json alternatives = Json::array();
  for (std::int64_t rank = 0; rank < top; ++rank) {
    const std::string alternative = alternative_token(token, rank);
    alternatives.push_back({{"token", alternative},
                            {"logprob", alternative_logprob(rank)},
                            {"bytes", token_bytes(alternative)}});
  }
  return {{"token", token},
          {"logprob", kSampledLogprob},
          {"bytes", token_bytes(token)},
          {"top_logprobs", std::move(alternatives)}};
}

Json chat_logprobs(std::span<const std::string> tokens, std::int64_t top) {
  Json content = Json::array();
  for (const std::string& token : tokens) {
    content.push_back(chat_token_logprob(token, top));
  }
  return {{"content", std::move(content)}};
}

Json completion_logprobs(std::span<const std::string> tokens, std::int64_t first_text_offset,
                         std::int64_t top) {
  Json texts = Json::array();
  Json logprobs = Json::array();
  Json alternatives = Json::array();
  Json offsets = Json::array();
  std::int64_t offset = first_text_offset;
  for (const std::string& token : tokens) {
    texts.push_back(token);
    logprobs.push_back(kSampledLogprob);
    Json by_token = Json::object();
    for (std::int64_t rank = 0; rank < top; ++rank) {
      by_token[alternative_token(token, rank)] = alternative_logprob(rank);
    }
    alternatives.push_back(std::move(by_token));
    offsets.push_back(offset);
    offset += static_cast<std::int64_t>(token.size());
  }
  return {{"tokens", std::move(texts)},
          {"token_logprobs", std::move(logprobs)},
          {"top_logprobs", std::move(alternatives)},
          {"text_offset", std::move(offsets)}};
}

// How a normal completion is distorted on its way out.
enum class Distortion {
  kNone,
  kResetAfterTwoPieces,
  kMalformedAfterFirstPiece,
  kMalformedUsage,    // usage counts null, text, a fraction and negative
  kNoChoices,         // no `choices` anywhere (a stream's usage chunk keeps its empty list)
  kMalformedChoices,  // whole: `choices` is text; stream: a chunk whose choices[0] is a number
};

// Builds the JSON of one response: the whole object, or the chunks of its stream.
class ResponseBuilder {
 public:
  ResponseBuilder(const CompletionRequest& request, std::uint64_t number,
                  Distortion distortion = Distortion::kNone)
      : request_(request),
        distortion_(distortion),
        id_((is_chat() ? "chatcmpl-fault-" : "cmpl-fault-") + std::to_string(number)),
        created_(static_cast<std::int64_t>(std::time(nullptr))) {}

  Json whole(std::string_view text, std::int64_t completion_tokens,
             std::span<const std::string> tokens) const {
    Json choice = {{"index", 0}};
    if (is_chat()) {
      choice["message"] = {{"role", "assistant"}, {"content", text}};
      choice["logprobs"] =
          request_.logprobs ? chat_logprobs(tokens, request_.top_logprobs) : nullptr;
    } else {
      choice["text"] = text;
      choice["logprobs"] =
          request_.logprobs ? completion_logprobs(tokens, 0, request_.top_logprobs) : nullptr;
    }
    choice["finish_reason"] = "length";
    Json built = {{"id", id_},
                  {"object", is_chat() ? "chat.completion" : "text_completion"},
                  {"created", created_},
                  {"model", request_.model},
                  {"choices", Json::array({std::move(choice)})},
                  {"usage", usage(completion_tokens)}};
    if (distortion_ == Distortion::kNoChoices) {
      built.erase("choices");
    } else if (distortion_ == Distortion::kMalformedChoices) {
      built["choices"] = "none";
    }
    return built;
  }

  // A chunk whose choices[0] is not an object (kMalformedChoices).
  Json malformed_choice_chunk() const { return chunk(Json::array({42})); }

  Json piece_chunk(const std::string& piece, bool first, std::int64_t text_offset) const {
    Json choice = {{"index", 0}};
    const std::span<const std::string> tokens(&piece, 1);
    if (is_chat()) {
      Json delta = Json::object();
      if (first) {
        delta["role"] = "assistant";
      }
      delta["content"] = piece;
      choice["delta"] = std::move(delta);
      choice["logprobs"] =
          request_.logprobs ? chat_logprobs(tokens, request_.top_logprobs) : nullptr;
    } else {
      choice["text"] = piece;
      choice["logprobs"] = request_.logprobs
                               ? completion_logprobs(tokens, text_offset, request_.top_logprobs)
                               : nullptr;
    }
    choice["finish_reason"] = nullptr;
    return chunk(Json::array({std::move(choice)}));
  }

  // A chat chunk with this delta.
  Json delta_chunk(Json delta) const {
    Json choice = {{"index", 0}, {"delta", std::move(delta)}};
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = nullptr;
    return chunk(Json::array({std::move(choice)}));
  }

  // A whole chat completion with this message.
  Json whole_message(Json message, std::string_view finish_reason,
                     std::int64_t completion_tokens) const {
    Json choice = {{"index", 0}, {"message", std::move(message)}};
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = finish_reason;
    return {{"id", id_},
            {"object", "chat.completion"},
            {"created", created_},
            {"model", request_.model},
            {"choices", Json::array({std::move(choice)})},
            {"usage", usage(completion_tokens)}};
  }

  // `announce_role` when no piece came before, so a chat stream still says who is speaking.
  Json finish_chunk(bool announce_role, std::string_view finish_reason = "length") const {
    Json choice = {{"index", 0}};
    if (is_chat()) {
      choice["delta"] =
          announce_role ? Json{{"role", "assistant"}, {"content", ""}} : Json::object();
    } else {
      choice["text"] = "";
    }
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = finish_reason;
    return chunk(Json::array({std::move(choice)}));
  }

  bool includes_usage() const { return request_.include_usage; }

  Json usage_chunk(std::int64_t completion_tokens) const {
    Json usage_only = chunk(Json::array());
    usage_only["choices"] = Json::array();
    usage_only["usage"] = usage(completion_tokens);
    return usage_only;
  }

 private:
  bool is_chat() const { return request_.endpoint == Endpoint::kChat; }

  Json chunk(Json choices) const {
    Json built = {{"id", id_},
                  {"object", is_chat() ? "chat.completion.chunk" : "text_completion"},
                  {"created", created_},
                  {"model", request_.model},
                  {"choices", std::move(choices)}};
    if (distortion_ == Distortion::kNoChoices) {
      built.erase("choices");
    }
    if (request_.include_usage) {
      built["usage"] = nullptr;  // as OpenAI does on every chunk but the last
    }
    return built;
  }

  Json usage(std::int64_t completion_tokens) const {
    if (distortion_ == Distortion::kMalformedUsage) {
      return {{"prompt_tokens", nullptr},
              {"completion_tokens", std::to_string(completion_tokens)},
              {"total_tokens", 1.5},
              {"prompt_tokens_details", {{"cached_tokens", -3}}}};
    }
    return {{"prompt_tokens", request_.prompt_tokens},
            {"completion_tokens", completion_tokens},
            {"total_tokens", request_.prompt_tokens + completion_tokens}};
  }

  const CompletionRequest& request_;
  Distortion distortion_;
  std::string id_;
  std::int64_t created_;
};

std::string sse_event(const Json& chunk) {
  return "data: " + chunk.dump() + "\n\n";
}

// ---------------------------------------------------------------------------------------------
// Tool calls: a reasoning model calling two functions (fault-tool-calls), or tool call items of
// every wrong shape around one good call (fault-malformed-tool-calls).

Json tool_call_delta(std::int64_t index, Json function, std::string_view id = "") {
  Json call = {{"index", index}};
  if (!id.empty()) {
    call["id"] = id;
    call["type"] = "function";
  }
  call["function"] = std::move(function);
  return {{"tool_calls", Json::array({std::move(call)})}};
}

// The stream's deltas, in order, as OpenAI streams a call: id, type and name first, then the
// arguments in pieces.
std::vector<Json> tool_call_stream(bool malformed) {
  if (malformed) {
    Json bad_items = Json::array();
    bad_items.push_back(17);
    bad_items.push_back(nullptr);
    bad_items.push_back({{"index", "0"}, {"id", "call_string_index"}});
    bad_items.push_back({{"index", -1}, {"id", "call_negative_index"}});
    bad_items.push_back({{"index", 99999999}, {"id", "call_far_index"}});
    bad_items.push_back({{"index", 1.5}, {"id", "call_fractional_index"}});
    bad_items.push_back({{"index", 0}, {"type", "custom"}, {"id", "call_custom"}});
    bad_items.push_back({{"index", 0}, {"function", "get_weather"}});
    return {
        {{"role", "assistant"},
         {"content", nullptr},
         {"reasoning_content", 42},
         {"tool_calls", "not a list"}},
        {{"tool_calls", std::move(bad_items)}},
        tool_call_delta(0, {{"name", "ok"}, {"arguments", {{"valid", true}}}}, "call_fault_ok")};
  }
  return {{{"role", "assistant"},
           {"content", nullptr},
           {"reasoning_content", "The user wants the weather."}},
          {{"reasoning_content", " Two calls."}},
          tool_call_delta(0, {{"name", "get_weather"}, {"arguments", ""}}, "call_fault_0"),
          tool_call_delta(0, {{"arguments", "{\"city\":"}}),
          tool_call_delta(0, {{"arguments", " \"Paris\"}"}}),
          tool_call_delta(1, {{"name", "get_time"}, {"arguments", ""}}, "call_fault_1"),
          tool_call_delta(1, {{"arguments", "{\"zone\":\"CET\"}"}})};
}

// The same answer whole: choices[0].message.
Json tool_call_message(bool malformed) {
  auto call = [](std::string_view id, std::string_view name, Json arguments) {
    return Json{{"id", id},
                {"type", "function"},
                {"function", {{"name", name}, {"arguments", std::move(arguments)}}}};
  };
  Json calls = Json::array();
  if (malformed) {
    calls.push_back(17);
    calls.push_back(nullptr);
    calls.push_back("call_as_text");
    calls.push_back({{"type", "custom"}, {"id", "call_custom"}, {"custom", {{"name", "x"}}}});
    calls.push_back({{"function", "get_weather"}});
    calls.push_back(call("call_fault_ok", "ok", {{"valid", true}}));
    return {{"role", "assistant"},
            {"content", nullptr},
            {"reasoning_content", 42},
            {"tool_calls", std::move(calls)}};
  }
  calls.push_back(call("call_fault_0", "get_weather", "{\"city\": \"Paris\"}"));
  calls.push_back(call("call_fault_1", "get_time", "{\"zone\":\"CET\"}"));
  return {{"role", "assistant"},
          {"content", nullptr},
          {"reasoning_content", "The user wants the weather. Two calls."},
          {"tool_calls", std::move(calls)}};
}

// How a model name's fault shapes a Responses answer; the transport's faults are not here.
fault_responses::Shape responses_shape(Fault fault) {
  using Shape = fault_responses::Shape;
  switch (fault) {
    case Fault::kToolCalls:
    case Fault::kMalformedToolCalls:
      return Shape::kToolCall;
    case Fault::kMalformedUsage:
      return Shape::kMalformedUsage;
    case Fault::kNoChoices:
      return Shape::kNoOutput;
    case Fault::kMalformedChoices:
      return Shape::kMalformedOutput;
    case Fault::kFailed:
      return Shape::kFailed;
    case Fault::kUnfinished:
      return Shape::kUnfinished;
    case Fault::kMalformedSse:
      return Shape::kMalformedEvent;
    default:
      return Shape::kNormal;
  }
}

// ---------------------------------------------------------------------------------------------
// Connections.

// What the connection does once a response is over.
enum class Outcome { kKeepAlive, kClose, kAlreadyClosed };

struct ResponseHead {
  http::status status = http::status::ok;
  std::string_view content_type = "application/json";
  std::optional<std::size_t> content_length;  // none: chunked (close-delimited for HTTP/1.0)
  std::optional<std::uint64_t> retry_after_seconds;

  static ResponseHead of_type(std::string_view type) {
    ResponseHead head;
    head.content_type = type;
    return head;
  }
  static ResponseHead of_length(std::size_t length) {
    ResponseHead head;
    head.content_length = length;
    return head;
  }
};

struct Pacing {
  Millis before_headers{0};
  Millis before_each_piece{0};  // non-streaming: between the headers and the body
  Distortion distortion = Distortion::kNone;

  static Pacing delayed(Millis wait) {
    Pacing pacing;
    pacing.before_headers = wait;
    return pacing;
  }
  static Pacing slowed(Millis wait) {
    Pacing pacing;
    pacing.before_each_piece = wait;
    return pacing;
  }
  static Pacing distorted(Distortion distortion) {
    Pacing pacing;
    pacing.distortion = distortion;
    return pacing;
  }
};

class Session {
 public:
  Session(tcp::socket socket, ServerState& state) : socket_(std::move(socket)), state_(state) {
    boost::system::error_code ignored;
    // Stream pieces are small writes that must leave at once, not wait for Nagle.
    socket_.set_option(tcp::no_delay(true), ignored);
  }

  awaitable<void> run() {
    const ScopedGauge open(state_.open_connections);
    try {
      Outcome outcome = Outcome::kKeepAlive;
      while (outcome == Outcome::kKeepAlive) {
        outcome = co_await serve_one_request();
      }
    } catch (const boost::system::system_error&) {
      // The client left (or sent something that is not HTTP): this connection is over.
    } catch (const std::exception& error) {
      std::cerr << "fault_upstream: connection failed: " << error.what() << '\n';
    }
    close();
  }

 private:
  awaitable<Outcome> serve_one_request() {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxRequestBodyBytes);
    co_await http::async_read_header(socket_, buffer_, parser, use_awaitable);
    if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
      // Otherwise curl and others pause a second before sending a large body.
      co_await write_all("HTTP/1.1 100 Continue\r\n\r\n");
    }
    co_await http::async_read(socket_, buffer_, parser, use_awaitable);
    co_return co_await handle(parser.get());
  }

  awaitable<Outcome> handle(const http::request<http::string_body>& request) {
    http_version_ = request.version();
    keep_alive_ = request.keep_alive();
    const std::string_view target(request.target().data(), request.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    const http::verb method = request.method();

    if (path == "/v1/chat/completions" && method == http::verb::post) {
      state_.record_body(path, request.body());
      co_return co_await handle_completion(request.body(), Endpoint::kChat);
    }
    if (path == "/v1/completions" && method == http::verb::post) {
      state_.record_body(path, request.body());
      co_return co_await handle_completion(request.body(), Endpoint::kCompletions);
    }
    if (path == "/v1/embeddings" && method == http::verb::post) {
      state_.record_body(path, request.body());
      co_return co_await handle_embeddings(request.body());
    }
    if (path == "/v1/responses" && method == http::verb::post) {
      state_.record_body(path, request.body());
      co_return co_await handle_responses(request.body());
    }
    if (path == "/v1/models" && method == http::verb::get) {
      const Json models = {
          {"object", "list"},
          {"data", {{{"id", "fault-ok"}, {"object", "model"}, {"owned_by", "fault"}}}}};
      co_return co_await send_json(http::status::ok, models);
    }
    if (path == "/health" && method == http::verb::get) {
      const Json healthy = {{"status", "ok"}};
      co_return co_await send_json(http::status::ok, healthy);
    }
    if (path == "/control/stats" && method == http::verb::get) {
      co_return co_await send_json(http::status::ok, state_.stats(/*open_connections_excluded=*/1));
    }
    if (path == "/control/bodies" && method == http::verb::get) {
      co_return co_await send_json(http::status::ok, state_.bodies());
    }
    if (path == "/control/reset" && method == http::verb::post) {
      state_.reset_counters();
      co_return co_await send_json(http::status::ok, Json::object());
    }
    const bool known_path = path == "/v1/chat/completions" || path == "/v1/completions" ||
                            path == "/v1/embeddings" || path == "/v1/responses" ||
                            path == "/v1/models" || path == "/health" || path == "/control/stats" ||
                            path == "/control/bodies" || path == "/control/reset";
    if (known_path) {
      co_return co_await send_json(
          http::status::method_not_allowed,
          error_body("Method not allowed for " + std::string(path), "invalid_request_error"));
    }
    co_return co_await send_json(http::status::not_found,
                                 error_body("Unknown request URL: " + std::string(path),
                                            "invalid_request_error", nullptr, "unknown_url"));
  }

  // The model a request names and how it misbehaves (counted as a request to that model), or
  // the error the mock answers instead: no model parameter, or a name it does not know.
  struct ModelChoice {
    std::string model;
    std::optional<Behaviour> behaviour;  // nullopt: answer with the refusal
    http::status refusal_status = http::status::bad_request;
    Json refusal;
  };
  ModelChoice choose_model(const Json& parsed) {
    ModelChoice choice;
    const Json* field = parsed.is_object() ? find_field(parsed, "model") : nullptr;
    if (field == nullptr || !field->is_string()) {
      choice.refusal =
          error_body("you must provide a model parameter", "invalid_request_error", "model");
      return choice;
    }
    choice.model = field->get<std::string>();
    const std::uint64_t sequence = state_.count_request(choice.model);
    choice.behaviour = parse_model_name(choice.model);
    if (!choice.behaviour) {
      choice.refusal_status = http::status::not_found;
      choice.refusal = error_body(
          "The model `" + choice.model + "` does not exist or you do not have access to it.",
          "invalid_request_error", nullptr, "model_not_found");
      return choice;
    }
    if (choice.behaviour->failing_requests && sequence > *choice.behaviour->failing_requests) {
      choice.behaviour = Behaviour{};  // failed its share: behaves from now on
    }
    return choice;
  }

  // Faults of the connection rather than of the answer: every endpoint misbehaves alike.
  static bool is_transport_fault(Fault fault) {
    return fault == Fault::kRateLimit || fault == Fault::kServerError ||
           fault == Fault::kUnavailable || fault == Fault::kHang || fault == Fault::kReset ||
           fault == Fault::kWrongContentType;
  }

  awaitable<Outcome> handle_completion(const std::string& body, Endpoint endpoint) {
    state_.count_completion_endpoint_hit();
    const Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      co_return co_await send_json(
          http::status::bad_request,
          error_body("We could not parse the JSON body of your request. (HINT: This likely "
                     "means you aren't using your HTTP library correctly.)",
                     "invalid_request_error"));
    }
    ModelChoice choice = choose_model(parsed);
    if (!choice.behaviour) {
      co_return co_await send_json(choice.refusal_status, choice.refusal);
    }
    const std::string& model = choice.model;
    std::optional<Behaviour>& behaviour = choice.behaviour;

    std::optional<CompletionRequest> request;
    std::optional<BadRequest> bad_request;
    try {
      request = parse_completion_request(parsed, endpoint, model);
    } catch (const BadRequest& error) {
      bad_request = error;
    }
    if (bad_request) {
      const Json param = bad_request->param() ? Json(*bad_request->param()) : Json(nullptr);
      co_return co_await send_json(http::status::bad_request,
                                   error_body(bad_request->what(), "invalid_request_error", param));
    }
    co_return co_await misbehave(*request, *behaviour);
  }

  // POST /v1/embeddings: vectors fixed by each input's text, misbehaving as the model says.
  awaitable<Outcome> handle_embeddings(const std::string& body) {
    state_.count_completion_endpoint_hit();
    const Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
    ModelChoice choice = choose_model(parsed);
    if (!choice.behaviour) {
      co_return co_await send_json(choice.refusal_status, choice.refusal);
    }
    const std::string& model = choice.model;
    std::optional<Behaviour>& behaviour = choice.behaviour;
    std::optional<EmbeddingsRequest> request;
    std::optional<BadRequest> bad_request;
    try {
      request = parse_embeddings_request(parsed, model);
    } catch (const BadRequest& error) {
      bad_request = error;
    }
    if (bad_request) {
      const Json param = bad_request->param() ? Json(*bad_request->param()) : Json(nullptr);
      co_return co_await send_json(http::status::bad_request,
                                   error_body(bad_request->what(), "invalid_request_error", param));
    }
    const Fault fault = behaviour->fault;
    if (is_transport_fault(fault)) {
      // The transport's misbehaviours are the same whatever the endpoint.
      CompletionRequest as_completion;
      as_completion.model = model;
      co_return co_await misbehave(as_completion, *behaviour);
    }
    if (fault == Fault::kDelay || fault == Fault::kSlow) {
      const bool stayed = co_await wait_while_peer_stays(behaviour->wait);
      if (!stayed) {
        co_return Outcome::kClose;
      }
    }
    // Named, not temporaries in the co_await's arguments: GCC 12 mishandles those.
    const ResponseHead json_head;
    std::string answer = "{not json";
    if (fault != Fault::kMalformedSse) {
      answer = embeddings_body(*request, fault == Fault::kMalformedUsage,
                               fault == Fault::kNoChoices, fault == Fault::kMalformedChoices)
                   .dump();
    }
    if (fault == Fault::kResetMidStream) {
      const ResponseHead promised = ResponseHead::of_length(answer.size());
      const std::string_view half = std::string_view(answer).substr(0, answer.size() / 2);
      co_await write_head(promised);
      co_await write_all(half);
      co_await reset_after_delivery();
      co_return Outcome::kAlreadyClosed;
    }
    co_return co_await send(json_head, std::move(answer));
  }

  // POST /v1/responses: OpenAI's Response objects and event streams (fault_responses.h),
  // misbehaving as the model says.
  awaitable<Outcome> handle_responses(const std::string& body) {
    state_.count_completion_endpoint_hit();
    const Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
    ModelChoice choice = choose_model(parsed);
    if (!choice.behaviour) {
      co_return co_await send_json(choice.refusal_status, choice.refusal);
    }
    const std::string& model = choice.model;
    std::optional<Behaviour>& behaviour = choice.behaviour;
    fault_responses::Request request;
    request.model = model;
    if (const auto bad = fault_responses::parse_request(parsed, request)) {
      co_return co_await send_json(http::status::bad_request,
                                   error_body(bad->message, "invalid_request_error", bad->param));
    }
    const Fault fault = behaviour->fault;
    if (is_transport_fault(fault)) {
      // The transport's misbehaviours are the same whatever the endpoint.
      CompletionRequest as_completion;
      as_completion.model = model;
      co_return co_await misbehave(as_completion, *behaviour);
    }
    // One await per statement: GCC 12 mishandles co_await inside &&.
    if (fault == Fault::kDelay) {
      const bool stayed = co_await wait_while_peer_stays(behaviour->wait);
      if (!stayed) {
        co_return Outcome::kClose;
      }
    }
    const std::string id = "fault" + std::to_string(state_.next_response_number());
    const fault_responses::Shape shape = responses_shape(fault);
    if (!request.stream) {
      std::string answer = fault_responses::whole(request, id, shape);
      if (fault == Fault::kResetMidStream) {
        const ResponseHead promised = ResponseHead::of_length(answer.size());
        co_await write_head(promised);
        const std::string_view half = std::string_view(answer).substr(0, answer.size() / 2);
        co_await write_all(half);
        co_await reset_after_delivery();
        co_return Outcome::kAlreadyClosed;
      }
      const ResponseHead json_head;
      co_return co_await send(json_head, std::move(answer));
    }
    const std::vector<std::string> events = fault_responses::stream(request, id, shape);
    ScopedGauge streaming(state_.active_streams);
    co_await write_head(ResponseHead::of_type("text/event-stream"));
    for (size_t i = 0; i < events.size(); ++i) {
      if (fault == Fault::kSlow) {
        const bool stayed = co_await wait_while_peer_stays(behaviour->wait);
        if (!stayed) {
          co_return Outcome::kClose;
        }
      }
      co_await write_stream_data(events[i]);
      if (fault == Fault::kResetMidStream && i == 3) {  // past the first output event
        streaming.lower();
        co_await reset_after_delivery();
        co_return Outcome::kAlreadyClosed;
      }
    }
    streaming.lower();
    co_await finish_stream_body();
    co_return after_response();
  }

  awaitable<Outcome> misbehave(const CompletionRequest& request, const Behaviour& behaviour) {
    switch (behaviour.fault) {
      case Fault::kOk:
        co_return co_await respond(request, Pacing{});
      case Fault::kDelay:
        co_return co_await respond(request, Pacing::delayed(behaviour.wait));
      case Fault::kSlow:
        co_return co_await respond(request, Pacing::slowed(behaviour.wait));
      case Fault::kRateLimit:
        co_return co_await send_json(
            http::status::too_many_requests,
            error_body("Rate limit reached for " + request.model + " (injected by fault_upstream).",
                       "rate_limit_error", nullptr, "rate_limit_exceeded"),
            behaviour.retry_after_seconds);
      case Fault::kServerError:
        co_return co_await send_json(
            http::status::internal_server_error,
            error_body("The server had an error while processing your request (injected by "
                       "fault_upstream).",
                       "server_error"));
      case Fault::kUnavailable:
        co_return co_await send_json(
            http::status::service_unavailable,
            error_body("The engine is currently overloaded, please try again later (injected by "
                       "fault_upstream).",
                       "server_error"));
      case Fault::kHang:
        co_return co_await hang();
      case Fault::kReset:
        reset();
        co_return Outcome::kAlreadyClosed;
      case Fault::kResetMidStream:
        co_return co_await respond(request, Pacing::distorted(Distortion::kResetAfterTwoPieces));
      case Fault::kMalformedSse:
        co_return co_await respond(request,
                                   Pacing::distorted(Distortion::kMalformedAfterFirstPiece));
      case Fault::kWrongContentType:
        co_return co_await send(ResponseHead::of_type("text/html"), "<html>oops</html>");
      case Fault::kOversized:
        // Two co_awaits, not one of a conditional: GCC 12 destroys `c ? a() : b()` twice.
        if (request.stream) {
          co_return co_await stream_oversized(request);
        }
        co_return co_await send_oversized(request);
      case Fault::kMalformedUsage:
        co_return co_await respond(request, Pacing::distorted(Distortion::kMalformedUsage));
      case Fault::kNoChoices:
        co_return co_await respond(request, Pacing::distorted(Distortion::kNoChoices));
      case Fault::kMalformedChoices:
        co_return co_await respond(request, Pacing::distorted(Distortion::kMalformedChoices));
      case Fault::kFailed:
      case Fault::kUnfinished:
        co_return co_await respond(request, Pacing{});  // only the Responses API's answers break
      case Fault::kToolCalls:
      case Fault::kMalformedToolCalls:
        if (request.endpoint != Endpoint::kChat) {
          co_return co_await respond(request, Pacing{});  // tool calls are chat's
        }
        co_return co_await respond_tool_calls(request,
                                              behaviour.fault == Fault::kMalformedToolCalls);
    }
    co_return Outcome::kClose;
  }

  // A normal completion, possibly delayed, slowed down, cut short or corrupted.
  awaitable<Outcome> respond(const CompletionRequest& request, const Pacing& pacing) {
    if (pacing.before_headers > Millis{0} &&
        !co_await wait_while_peer_stays(pacing.before_headers)) {
      co_return Outcome::kClose;
    }
    const ResponseBuilder builder(request, state_.next_response_number(), pacing.distortion);
    const std::vector<std::string> pieces = make_pieces(request.max_pieces);
    if (request.stream) {
      co_return co_await stream_completion(builder, pieces, pacing);
    }

    std::string body;
    if (pacing.distortion == Distortion::kMalformedAfterFirstPiece) {
      body = "{not json";
    } else {
      std::string text;
      for (const std::string& piece : pieces) {
        text += piece;
      }
      body = builder.whole(text, request.max_pieces, pieces).dump();
    }
    const ResponseHead head = ResponseHead::of_length(body.size());
    if (pacing.distortion == Distortion::kResetAfterTwoPieces) {
      // The head promises the whole body; only half of it arrives.
      co_await write_head(head);
      co_await write_all(std::string_view(body).substr(0, body.size() / 2));
      co_await reset_after_delivery();
      co_return Outcome::kAlreadyClosed;
    }
    if (pacing.before_each_piece > Millis{0}) {
      co_await write_head(head);
      if (!co_await wait_while_peer_stays(pacing.before_each_piece)) {
        co_return Outcome::kClose;
      }
      co_await write_all(body);
      co_return after_response();
    }
    co_return co_await send(head, std::move(body));
  }

  awaitable<Outcome> stream_completion(const ResponseBuilder& builder,
                                       const std::vector<std::string>& pieces,
                                       const Pacing& pacing) {
    // Lowered before the last event goes out, so a client that has read the whole stream
    // never sees it still counted in /control/stats.
    ScopedGauge streaming(state_.active_streams);
    co_await write_head(ResponseHead::of_type("text/event-stream"));
    std::int64_t text_offset = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (pacing.before_each_piece > Millis{0} &&
          !co_await wait_while_peer_stays(pacing.before_each_piece)) {
        co_return Outcome::kClose;
      }
      co_await write_stream_data(sse_event(builder.piece_chunk(pieces[i], i == 0, text_offset)));
      text_offset += static_cast<std::int64_t>(pieces[i].size());
      if (pacing.distortion == Distortion::kMalformedAfterFirstPiece) {
        break;
      }
      if (pacing.distortion == Distortion::kMalformedChoices && i == 0) {
        const std::string malformed = sse_event(builder.malformed_choice_chunk());
        co_await write_stream_data(malformed);
      }
      if (pacing.distortion == Distortion::kResetAfterTwoPieces && i + 1 == 2) {
        break;
      }
    }
    if (pacing.distortion == Distortion::kResetAfterTwoPieces) {
      streaming.lower();
      co_await reset_after_delivery();
      co_return Outcome::kAlreadyClosed;
    }
    if (pacing.distortion == Distortion::kMalformedAfterFirstPiece) {
      // The body itself ends properly; only the event inside it is broken.
      streaming.lower();
      co_await write_stream_data("data: {not json\n\n");
      co_await finish_stream_body();
      co_return after_response();
    }
    co_await write_stream_data(sse_event(builder.finish_chunk(pieces.empty())));
    if (builder.includes_usage()) {
      co_await write_stream_data(
          sse_event(builder.usage_chunk(static_cast<std::int64_t>(pieces.size()))));
    }
    streaming.lower();
    co_await write_stream_data("data: [DONE]\n\n");
    co_await finish_stream_body();
    co_return after_response();
  }

  // A chat answer that calls tools instead of writing text (finish_reason "tool_calls").
  awaitable<Outcome> respond_tool_calls(const CompletionRequest& request, bool malformed) {
    const ResponseBuilder builder(request, state_.next_response_number());
    const std::vector<Json> deltas = tool_call_stream(malformed);
    const auto pieces = static_cast<std::int64_t>(deltas.size());
    // Named, not temporaries in the co_await's arguments: GCC 12 mishandles those.
    if (!request.stream) {
      const Json whole = builder.whole_message(tool_call_message(malformed), "tool_calls", pieces);
      co_return co_await send_json(http::status::ok, whole);
    }
    ScopedGauge streaming(state_.active_streams);
    co_await write_head(ResponseHead::of_type("text/event-stream"));
    for (const Json& delta : deltas) {
      const std::string event = sse_event(builder.delta_chunk(delta));
      co_await write_stream_data(event);
    }
    const std::string finish =
        sse_event(builder.finish_chunk(/*announce_role=*/false, "tool_calls"));
    co_await write_stream_data(finish);
    if (builder.includes_usage()) {
      const std::string usage = sse_event(builder.usage_chunk(pieces));
      co_await write_stream_data(usage);
    }
    streaming.lower();
    co_await write_stream_data("data: [DONE]\n\n");
    co_await finish_stream_body();
    co_return after_response();
  }

  // 64 MiB of content streamed in 64 KiB pieces, each piece's event built once and reused.
  awaitable<Outcome> stream_oversized(CompletionRequest request) {
    request.logprobs = false;  // a logprob entry per 64 KiB piece would mean nothing
    ScopedGauge streaming(state_.active_streams);
    const ResponseBuilder builder(request, state_.next_response_number());
    const std::string filler(kOversizedPieceBytes, 'x');
    const std::string first_event = sse_event(builder.piece_chunk(filler, true, 0));
    const std::string later_event = sse_event(builder.piece_chunk(filler, false, 0));
    co_await write_head(ResponseHead::of_type("text/event-stream"));
    for (std::size_t i = 0; i < kOversizedPieces; ++i) {
      co_await write_stream_data(i == 0 ? first_event : later_event);
    }
    co_await write_stream_data(sse_event(builder.finish_chunk(/*announce_role=*/false)));
    if (request.include_usage) {
      co_await write_stream_data(
          sse_event(builder.usage_chunk(static_cast<std::int64_t>(kOversizedPieces))));
    }
    streaming.lower();
    co_await write_stream_data("data: [DONE]\n\n");
    co_await finish_stream_body();
    co_return after_response();
  }

  // A valid completion whose content is 64 MiB of 'x', written from one 64 KiB block.
  awaitable<Outcome> send_oversized(CompletionRequest request) {
    request.logprobs = false;
    constexpr std::string_view kMarker = "@@fault-upstream-oversized-content@@";
    const ResponseBuilder builder(request, state_.next_response_number());
    const std::string skeleton =
        builder.whole(kMarker, static_cast<std::int64_t>(kOversizedPieces), {}).dump();
    const std::size_t marker_at = skeleton.find(kMarker);
    const std::string_view before = std::string_view(skeleton).substr(0, marker_at);
    const std::string_view after = std::string_view(skeleton).substr(marker_at + kMarker.size());
    const std::string filler(kOversizedPieceBytes, 'x');
    co_await write_head(
        ResponseHead::of_length(before.size() + kOversizedTotalBytes + after.size()));
    co_await write_all(before);
    for (std::size_t i = 0; i < kOversizedPieces; ++i) {
      co_await write_all(filler);
    }
    co_await write_all(after);
    co_return after_response();
  }

  // Reads and discards until the client closes, which ends the connection.
  awaitable<Outcome> hang() {
    std::array<char, 4096> discarded{};
    boost::system::error_code error;
    while (!error) {
      co_await socket_.async_read_some(asio::buffer(discarded),
                                       asio::redirect_error(use_awaitable, error));
    }
    co_return Outcome::kClose;
  }

  // Waits `duration`; returns false early if the client has closed the connection meanwhile.
  awaitable<bool> wait_while_peer_stays(Millis duration) {
    const Clock::time_point deadline = Clock::now() + duration;
    asio::steady_timer timer(socket_.get_executor());
    for (;;) {
      const Clock::time_point now = Clock::now();
      if (now >= deadline) {
        co_return true;
      }
      timer.expires_after(std::min<Clock::duration>(deadline - now, kPeerPollInterval));
      co_await timer.async_wait(use_awaitable);
      if (peer_has_gone()) {
        co_return false;
      }
    }
  }

  bool peer_has_gone() {
    char byte = 0;
    const ssize_t received = ::recv(socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (received >= 0) {
      return received == 0;  // 0: orderly close; data: a pipelined request, still there
    }
    return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  }

  // A close with a zero linger time discards unsent data, so first wait (briefly) until the
  // peer has acknowledged everything written: the partial response must really arrive.
  awaitable<void> reset_after_delivery() {
    asio::steady_timer timer(socket_.get_executor());
    for (int poll = 0; poll < kResetDrainPolls; ++poll) {
      int unacknowledged = 0;
      if (::ioctl(socket_.native_handle(), SIOCOUTQ, &unacknowledged) != 0 || unacknowledged == 0) {
        break;
      }
      timer.expires_after(kResetDrainPollInterval);
      co_await timer.async_wait(use_awaitable);
    }
    reset();
  }

  // Closes with a TCP RST instead of a FIN.
  void reset() {
    boost::system::error_code ignored;
    socket_.set_option(tcp::socket::linger(true, 0), ignored);
    socket_.close(ignored);
  }

  void close() {
    if (!socket_.is_open()) {
      return;
    }
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    socket_.close(ignored);
  }

  Outcome after_response() const { return keep_alive_ ? Outcome::kKeepAlive : Outcome::kClose; }

  std::string serialize_head(const ResponseHead& head) {
    chunked_body_ = !head.content_length && http_version_ >= 11;
    if (!head.content_length && !chunked_body_) {
      keep_alive_ = false;  // HTTP/1.0 has no chunks: the body ends when the connection does
    }
    const beast::string_view reason = http::obsolete_reason(head.status);
    std::string text = "HTTP/1.1 " + std::to_string(static_cast<unsigned>(head.status)) + " " +
                       std::string(reason.data(), reason.size()) + "\r\n";
    text += "Server: fault_upstream\r\n";
    text += "Content-Type: " + std::string(head.content_type) + "\r\n";
    if (head.content_length) {
      text += "Content-Length: " + std::to_string(*head.content_length) + "\r\n";
    } else if (chunked_body_) {
      text += "Transfer-Encoding: chunked\r\n";
    }
    if (head.content_type == "text/event-stream") {
      text += "Cache-Control: no-cache\r\n";
    }
    if (head.retry_after_seconds) {
      text += "Retry-After: " + std::to_string(*head.retry_after_seconds) + "\r\n";
    }
    text += keep_alive_ ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
    text += "\r\n";
    return text;
  }

  awaitable<Outcome> send(ResponseHead head, std::string body) {
    head.content_length = body.size();
    const std::string head_text = serialize_head(head);
    const std::array<asio::const_buffer, 2> buffers = {asio::buffer(head_text), asio::buffer(body)};
    co_await asio::async_write(socket_, buffers, use_awaitable);
    co_return after_response();
  }

  awaitable<Outcome> send_json(http::status status, const Json& body,
                               std::optional<std::uint64_t> retry_after_seconds = std::nullopt) {
    ResponseHead head;
    head.status = status;
    head.retry_after_seconds = retry_after_seconds;
    co_return co_await send(head, body.dump());
  }

  awaitable<void> write_head(const ResponseHead& head) { co_await write_all(serialize_head(head)); }

  awaitable<void> write_all(std::string_view data) {
    co_await asio::async_write(socket_, asio::buffer(data.data(), data.size()), use_awaitable);
  }

  awaitable<void> write_stream_data(std::string_view data) {
    if (!chunked_body_) {
      co_await write_all(data);
      co_return;
    }
    if (data.empty()) {
      co_return;  // an empty chunk would end the body
    }
    std::array<char, 24> size_line{};
    char* size_end = std::to_chars(size_line.data(), size_line.data() + 16, data.size(), 16).ptr;
    *size_end++ = '\r';
    *size_end++ = '\n';
    const std::array<asio::const_buffer, 3> buffers = {
        asio::buffer(size_line.data(), static_cast<std::size_t>(size_end - size_line.data())),
        asio::buffer(data.data(), data.size()), asio::buffer("\r\n", 2)};
    co_await asio::async_write(socket_, buffers, use_awaitable);
  }

  awaitable<void> finish_stream_body() {
    if (chunked_body_) {
      co_await write_all("0\r\n\r\n");
    }
  }

  tcp::socket socket_;
  ServerState& state_;
  beast::flat_buffer buffer_;
  unsigned http_version_ = 11;
  bool keep_alive_ = true;
  bool chunked_body_ = false;
};

awaitable<void> serve_connection(tcp::socket socket, ServerState& state) {
  Session session(std::move(socket), state);
  co_await session.run();
}

awaitable<void> accept_connections(tcp::acceptor acceptor, ServerState& state) {
  asio::steady_timer backoff(acceptor.get_executor());
  for (;;) {
    boost::system::error_code error;
    // A strand per connection keeps each session's handlers serial under --threads > 1.
    auto socket = co_await acceptor.async_accept(asio::make_strand(acceptor.get_executor()),
                                                 asio::redirect_error(use_awaitable, error));
    if (error == asio::error::operation_aborted) {
      co_return;
    }
    if (error) {
      // Out of descriptors, or a connection that died in the backlog: keep serving the rest.
      std::cerr << "fault_upstream: accept failed: " << error.message() << '\n';
      backoff.expires_after(Millis(10));
      co_await backoff.async_wait(use_awaitable);
      continue;
    }
    const auto executor = socket.get_executor();
    asio::co_spawn(executor, serve_connection(std::move(socket), state), asio::detached);
  }
}

// Thousands of concurrent connections need more descriptors than the usual soft limit.
void raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      std::cerr << "fault_upstream: could not raise the open file limit\n";
    }
  }
}

// Written to a temporary name and renamed, so a reader never sees a partial file.
bool write_port_file(const std::string& path, std::uint16_t port) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << port << '\n';
    out.close();
    if (!out) {
      std::cerr << "fault_upstream: cannot write " << temporary << '\n';
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::cerr << "fault_upstream: cannot rename " << temporary << " to " << path << '\n';
    return false;
  }
  return true;
}

int run_server(int argc, char** argv) {
  CLI::App app{
      "fault_upstream: an OpenAI-compatible upstream whose misbehaviour is chosen by the "
      "requested model name (fault-ok, fault-delay-MS, fault-429, fault-reset, ...).",
      "fault_upstream"};
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string port_file;
  int threads = 1;
  app.add_option("--host", host, "Address to listen on")->capture_default_str();
  app.add_option("--port", port, "Port to listen on; 0 picks a free one")->capture_default_str();
  app.add_option("--port-file", port_file, "Write the bound port and a newline here");
  app.add_option("--threads", threads, "Threads running the event loop")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // Prints the help, or the error; a usage error exits 2 like `tandem`.
    app.exit(error);
    return error.get_exit_code() == 0 ? 0 : 2;
  }

  raise_open_file_limit();
  // Declared before the io_context: sessions still in flight when it is destroyed release
  // their gauges into this.
  ServerState state;
  asio::io_context io_context(threads);

  tcp::acceptor acceptor(io_context);
  try {
    const tcp::endpoint endpoint(asio::ip::make_address(host), port);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(endpoint);
    acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const boost::system::system_error& error) {
    std::cerr << "fault_upstream: cannot listen on " << host << ":" << port << ": "
              << error.code().message() << '\n';
    return 1;
  }
  const tcp::endpoint bound = acceptor.local_endpoint();
  if (!port_file.empty() && !write_port_file(port_file, bound.port())) {
    return 1;
  }
  const std::string address = bound.address().to_string();
  std::cout << "listening on " << (bound.address().is_v6() ? "[" + address + "]" : address) << ":"
            << bound.port() << std::endl;

  asio::signal_set stop_signals(io_context, SIGINT, SIGTERM);
  // Stopping the loop abandons every session; their frames (and sockets) are destroyed with
  // the io_context, which closes every connection.
  stop_signals.async_wait(
      [&io_context](const boost::system::error_code&, int) { io_context.stop(); });
  asio::co_spawn(io_context, accept_connections(std::move(acceptor), state), asio::detached);

  std::vector<std::thread> extra_threads;
  for (int i = 1; i < threads; ++i) {
    extra_threads.emplace_back([&io_context] { io_context.run(); });
  }
  io_context.run();
  for (std::thread& thread : extra_threads) {
    thread.join();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_server(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "fault_upstream: internal error: " << error.what() << '\n';
  } catch (...) {
    std::cerr << "fault_upstream: internal error\n";
  }
  return 1;
}
