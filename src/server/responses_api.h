#pragma once
// The Responses API (POST /v1/responses) on top of chat completions: a request becomes a chat
// completions body that the same routing and executors answer, and the answer becomes a
// Response object or the Responses event stream. JSON only, no I/O: responses_sinks.h writes
// what this builds and store/response_store.h keeps what it returns.
//
// Thread-safety: the free functions are reentrant; a ResponsesEvents belongs to one stream.

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "server/api_error.h"
#include "server/gateway.h"
#include "server/responses.h"

namespace tandem::server {

// A checked /v1/responses request, before its previous response is looked up.
struct ResponsesRequest {
  std::string model;
  bool stream = false;
  bool store = true;
  std::string previous_response_id;  // empty: none
  std::string instructions;          // a system message of this turn only (not carried over)
  nlohmann::json input = nlohmann::json::array();         // this turn's items as chat messages
  nlohmann::json chat_fields = nlohmann::json::object();  // tools, response_format... (chat form)
  nlohmann::json echo = nlohmann::json::object();         // what the Response object repeats
  // The previous response's conversation (chat messages, and items kept for a native upstream,
  // which have no role), once looked up.
  nlohmann::json history = nlohmann::json::array();
  // The body as the client sent it: what a native Responses upstream receives
  // (responses_native.h).
  nlohmann::json body = nlohmann::json::object();
  // The fields only a native Responses upstream honours ("tools[1].type": a built-in tool):
  // such a request goes nowhere else.
  std::vector<std::string> native_only;
};

// Whether a model is served by an upstream that speaks the Responses API (`api: responses`).
using ServedNatively = std::function<bool(const std::string& model)>;

// Parses and checks a body; `default_store` applies when it has no `store`. An error names
// the field at fault (param) and says what would be accepted. For a model `served_natively`
// names, built-in tools are accepted (named in native_only, left out of the chat translation)
// and so are input items of the types a built-in tool produces (kept for a native upstream,
// skipped in chat).
std::variant<ResponsesRequest, ApiError> parse_responses_request(
    std::string_view body, bool default_store, const ServedNatively& served_natively = nullptr);

// The chat completions body that answers the request: its instructions as a system message,
// then its history (the previous response's conversation), then its input.
std::string chat_completions_body(const ResponsesRequest& request);

// What identifies one response.
struct ResponseHead {
  std::string id;  // "resp_…"
  int64_t created_at = 0;
  std::string model;  // as the client named it
};

ResponseHead new_response_head(const std::string& model);

// The Response's output items for a whole answer: a message with its text (when there is
// text), then one function_call item per tool call. Item ids derive from the response id.
nlohmann::json output_items(const ResponseHead& head, const WholeAnswer& answer);

// The Response object. `status`: "in_progress", "completed", "incomplete" (the answer hit
// max_output_tokens or a content filter: from `outcome`) or "failed" (with `error`). `record`
// becomes its `tandem` member when given.
nlohmann::json response_object(const ResponseHead& head, const ResponsesRequest& request,
                               const nlohmann::json& output, const Outcome* outcome,
                               const DecisionRecord* record, const ApiError* error);

// The conversation a stored response keeps for the next turn: the request's history, its input
// and the answer, as chat messages (instructions are not carried over, as OpenAI does).
nlohmann::json conversation_after(const ResponsesRequest& request, const WholeAnswer& answer);

// The same after a native Responses upstream's answer: its output items in chat form (messages
// and function calls as chat messages; reasoning left out), and other items (a built-in tool's
// call) kept as they are for the next native turn, which sends them again. An item that cannot
// be read as input is left out.
nlohmann::json conversation_after_native(const ResponsesRequest& request,
                                         const nlohmann::json& output);

// Turns a stream's sink calls into Responses events, in order: response.created and
// response.in_progress; for text, output_item.added (a message), content_part.added and
// output_text.delta events; for each tool call, output_item.added (a function_call) and
// function_call_arguments.delta events; at the end the .done events of every open item and
// response.completed (or response.failed). Each event carries its type and sequence_number.
class ResponsesEvents {
 public:
  ResponsesEvents(ResponseHead head, const ResponsesRequest& request);

  std::vector<nlohmann::json> begin(const DecisionRecord& record);
  std::vector<nlohmann::json> piece(const Piece& piece);
  // The text and calls so far are withdrawn (a cascade's revision): a tandem.revision event,
  // after which the open items start again empty.
  std::vector<nlohmann::json> revise(const nlohmann::json& revision);
  std::vector<nlohmann::json> finish(const Outcome& outcome, const DecisionRecord& record);
  std::vector<nlohmann::json> fail(const ApiError& error, const DecisionRecord& record);

  // A native Responses upstream's answer (responses_native.cpp): each of its events as Tandem
  // relays it — numbered in this stream's sequence, the response's id Tandem's — and the final
  // event with the decision record. `begun` is the record at begin(), for response.created.
  std::vector<nlohmann::json> native(nlohmann::json event, const DecisionRecord& begun);
  std::vector<nlohmann::json> native_finish(const NativeAnswer& answer,
                                            const DecisionRecord& record);

  // The answer as streamed (after any revision), for the response store.
  const WholeAnswer& answer() const { return answer_; }
  // The output items as streamed, each one whole.
  nlohmann::json output() const;
  bool answered_natively() const { return native_; }

 private:
  struct Item {
    bool message = false;  // else a function call
    size_t call_index = 0;
    bool done = false;
  };

  nlohmann::json event(const char* type, nlohmann::json fields);
  nlohmann::json item_json(size_t output_index, const char* status) const;
  void open_message(std::vector<nlohmann::json>& events);
  void close_items(std::vector<nlohmann::json>& events);

  ResponseHead head_;
  const ResponsesRequest& request_;
  int64_t sequence_ = 0;
  std::vector<Item> items_;
  std::optional<size_t> message_;  // the open message item's output index
  WholeAnswer answer_;
  // A native upstream answers: the items it finished so far (response.output_item.done), for
  // the Response of a stream that fails.
  bool native_ = false;
  nlohmann::json native_output_ = nlohmann::json::array();
};

}  // namespace tandem::server
