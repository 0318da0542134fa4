// What a cloud upstream sends back: the event stream through SseParser, however the network
// cuts it, each event's JSON through parse_cloud_chunk() as Upstream::attempt() does and through
// parse_responses_event() as a Responses stream's, and the whole body as a non-streaming answer
// of either API. Also the Retry-After header parser.

#include <chrono>
#include <string>
#include <vector>

#include "common/json_depth.h"
#include "fuzz/chunks.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/property_check.h"
#include "net/sse.h"
#include "upstream/http_client.h"
#include "upstream/upstream.h"

namespace tandem::fuzz {
namespace {

using upstream::ApiKind;

std::vector<std::string> events_of(const std::vector<std::string_view>& pieces) {
  net::SseParser parser;  // the 4 MiB default: far above any input, so it never trips here
  std::vector<std::string> events;
  for (const std::string_view piece : pieces) {
    const Status status = parser.feed(piece, events);
    FUZZ_CHECK_MSG(status.ok(), status.error().message);
  }
  return events;
}

// Whether an object has the structure of an answer (a chunk with `whole` false): `choices`
// absent or null (a chunk only), else a list whose first item, if any (a whole answer needs
// one), is an object; for chat its message (whole: required) or delta an object when there.
bool has_answer_structure(const nlohmann::json& json, ApiKind kind, bool whole) {
  const auto choices = json.find("choices");
  if (choices == json.end() || choices->is_null()) {
    return !whole;
  }
  if (!choices->is_array()) {
    return false;
  }
  if (choices->empty()) {
    return !whole;
  }
  const auto& choice = (*choices)[0];
  if (!choice.is_object()) {
    return false;
  }
  if (kind != ApiKind::kChat) {
    return true;
  }
  const auto message = choice.find(whole ? "message" : "delta");
  if (message == choice.end() || message->is_null()) {
    return !whole;
  }
  return message->is_object();
}

// Whether every integer in `text` (valid JSON) fits in 64 bits, signed or unsigned: the reply
// reader (simdjson) refuses a document with a larger one, which nlohmann reads as a fraction.
bool integers_fit_64_bits(const std::string& text) {
  struct Sax : nlohmann::json_sax<nlohmann::json> {
    bool fits = true;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t& raw) override {
      fits = fits && raw.find_first_of(".eE") != string_t::npos;
      return true;
    }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
      return false;
    }
  } sax;
  nlohmann::json::sax_parse(text, &sax, nlohmann::json::input_format_t::json, false);
  return sax.fits;
}

// parse_cloud_chunk's contract: malformed JSON (an integer beyond 64 bits too), anything but
// an object, an {"error": ...} object, JSON nested too deeply to copy safely, and an object
// without an answer's structure fail; every other object is an event, whatever type its fields have
// (it never throws), with token counts in [0, INT32_MAX].
void check_chunk(const std::string& data, ApiKind kind, bool whole) {
  const auto event = upstream::parse_cloud_chunk(data, kind, whole);
  const auto json = nlohmann::json::parse(data, nullptr, false);
  // nlohmann::json takes a NUL byte for the end of its input and so accepts `{}` followed by a
  // NUL and anything; JSON allows no raw NUL anywhere, and the reply reader refuses one.
  const bool valid = !json.is_discarded() && data.find('\0') == std::string::npos;
  const bool usable = json_nesting_depth(data) <= kMaxJsonDepth && valid &&
                      integers_fit_64_bits(data) && json.is_object() && !json.contains("error") &&
                      has_answer_structure(json, kind, whole);
  FUZZ_CHECK(event.ok() == usable);
  if (!event.ok()) {
    FUZZ_CHECK(!event.error().message.empty());
    return;
  }
  if (event->usage) {
    FUZZ_CHECK(event->usage->prompt_tokens >= 0 && event->usage->completion_tokens >= 0 &&
               event->usage->cached_prompt_tokens >= 0);
  }
  FUZZ_CHECK(!whole || event->has_choice);
  // Tool calls and reasoning are chat's; every call kept is within bounds and carries something.
  if (kind == ApiKind::kCompletion) {
    FUZZ_CHECK(event->tool_calls.empty() && event->reasoning.empty());
  }
  for (size_t i = 0; i < event->tool_calls.size(); ++i) {
    const auto& call = event->tool_calls[i];
    FUZZ_CHECK(call.index < upstream::kMaxToolCalls);
    FUZZ_CHECK(!call.id.empty() || !call.name.empty() || !call.arguments.empty());
    if (whole) {
      FUZZ_CHECK(call.index == i);  // a message's calls are numbered without gaps
    }
  }
}

// A Responses output list the gateway relays: a list of objects that each have a string type.
bool has_typed_output(const nlohmann::json& response) {
  const auto output = response.find("output");
  if (output == response.end() || !output->is_array()) {
    return false;
  }
  for (const auto& item : *output) {
    const auto type = item.is_object() ? item.find("type") : item.end();
    if (!item.is_object() || type == item.end() || !type->is_string()) {
      return false;
    }
  }
  return true;
}

// parse_responses_event's and parse_responses_answer's contracts: never a throw; what passes is
// an object with a string type (a final Response: no error, not failed, typed output items),
// never an error or response.failed event, and its usage counts are in [0, INT32_MAX].
void check_responses(const std::string& data, bool whole) {
  const auto event =
      whole ? upstream::parse_responses_answer(data) : upstream::parse_responses_event(data);
  if (!event.ok()) {
    FUZZ_CHECK(!event.error().message.empty());
    return;
  }
  const auto json = nlohmann::json::parse(data, nullptr, false);
  FUZZ_CHECK(json.is_object() && json_nesting_depth(data) <= kMaxJsonDepth);
  FUZZ_CHECK(event->type != "error" && event->type != "response.failed");
  // A whole answer is named "response"; in a stream only completed and incomplete end it (a
  // stream event that calls itself "response" does not end the stream).
  const bool final_type =
      whole ? event->type == "response"
            : event->type == "response.completed" || event->type == "response.incomplete";
  FUZZ_CHECK(event->final == final_type);
  if (event->final) {
    const nlohmann::json& response = whole ? json : json["response"];
    FUZZ_CHECK(response.is_object() && has_typed_output(response));
    FUZZ_CHECK(!response.contains("error") || response["error"].is_null());
  }
  if (event->usage) {
    FUZZ_CHECK(event->usage->prompt_tokens >= 0 && event->usage->completion_tokens >= 0 &&
               event->usage->cached_prompt_tokens >= 0);
  }
}

void check_retry_after(const std::string& value) {
  const auto delay = upstream::parse_retry_after(value);
  if (delay) {
    FUZZ_CHECK(delay->count() >= 0);
  }
}

// A small limit: an event that outgrows it fails with a message naming the limit.
void check_limit(const std::vector<std::string_view>& pieces) {
  net::SseParser parser(64);
  std::vector<std::string> events;
  for (const std::string_view piece : pieces) {
    if (const Status status = parser.feed(piece, events); !status) {
      FUZZ_CHECK(status.error().code == ErrorCode::kInternal);
      FUZZ_CHECK(status.error().message.find("64 bytes") != std::string::npos);
      return;
    }
  }
}

}  // namespace

void fuzz_upstream_sse(const uint8_t* data, size_t size) {
  const std::string_view bytes = as_text(data, size);
  const std::vector<std::string> events = events_of({bytes});
  // The same events however the bytes arrive: in one read, in reads of derived sizes, and byte
  // by byte (the first 1 KiB: bytewise feeding of more only costs time).
  const std::vector<std::string_view> pieces = derived_pieces(bytes, 64);
  FUZZ_CHECK(events_of(pieces) == events);
  const std::string_view head = bytes.substr(0, 1024);
  FUZZ_CHECK(events_of(derived_pieces(head, 1)) ==
             (head.size() == bytes.size() ? events : events_of({head})));
  check_limit(pieces);

  for (const std::string& event : events) {
    // What the gateway writes, a client's parser reads back (sse_event round trip).
    if (event.find_first_of("\r\n") == std::string::npos) {
      FUZZ_CHECK(events_of({net::sse_event(event)}) == std::vector<std::string>{event});
    }
    if (event == "[DONE]") {
      break;
    }
    check_chunk(event, ApiKind::kChat, false);
    check_chunk(event, ApiKind::kCompletion, false);
    check_responses(event, false);
    check_retry_after(event);
  }
  const std::string body(bytes);
  check_chunk(body, ApiKind::kChat, true);
  check_chunk(body, ApiKind::kCompletion, true);
  check_responses(body, true);
}

}  // namespace tandem::fuzz
