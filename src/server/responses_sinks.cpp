#include "server/responses_sinks.h"

#include "net/sse.h"
#include "server/responses_native.h"

namespace tandem::server {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// ResponsesStreamSink

net::awaitable<bool> ResponsesStreamSink::write(const std::vector<json>& events) {
  for (const json& event : events) {
    // The event line names the type, as OpenAI's stream does; the data repeats it.
    const std::string framed =
        "event: " + event["type"].get<std::string>() + "\n" + net::sse_event(dump(event));
    if (!co_await writer_.write(framed)) {
      co_return false;
    }
  }
  co_return true;
}

net::awaitable<bool> ResponsesStreamSink::begin(const DecisionRecord& record) {
  if (!co_await writer_.headers(record.tier)) {
    co_return false;
  }
  begun_ = record;
  // A native upstream's own response.created and response.in_progress follow instead.
  if (record.native_answer) {
    co_return true;
  }
  // Named, not a temporary in the co_await's argument: GCC 12 mishandles those.
  const std::vector<json> events = events_.begin(record);
  const bool written = co_await write(events);
  co_return written;
}

net::awaitable<bool> ResponsesStreamSink::piece(const Piece& piece) {
  const std::vector<json> events = events_.piece(piece);
  const bool written = co_await write(events);
  co_return written;
}

net::awaitable<bool> ResponsesStreamSink::revise(const Revision& revision) {
  const std::vector<json> events = events_.revise(revision.to_json());
  const bool written = co_await write(events);
  co_return written;
}

net::awaitable<void> ResponsesStreamSink::finish(const Outcome& outcome,
                                                 const DecisionRecord& record) {
  if (ended_) {
    co_return;
  }
  ended_ = true;
  std::vector<json> events = events_.finish(outcome, record);
  finished_ = FinishedResponse{events.back()["response"], events_.answer(),
                               !record.may_leave_device, false};
  if (co_await write(events)) {
    co_await writer_.end(/*done_marker=*/false);
  }
}

net::awaitable<bool> ResponsesStreamSink::native_event(const json& event) {
  const std::vector<json> events = events_.native(event, begun_);
  const bool written = co_await write(events);
  co_return written;
}

net::awaitable<void> ResponsesStreamSink::native_finish(const NativeAnswer& answer, const Outcome&,
                                                        const DecisionRecord& record) {
  if (ended_) {
    co_return;
  }
  ended_ = true;
  std::vector<json> events = events_.native_finish(answer, record);
  finished_ = FinishedResponse{events.back()["response"], {}, !record.may_leave_device, true};
  if (co_await write(events)) {
    co_await writer_.end(/*done_marker=*/false);
  }
}

net::awaitable<void> ResponsesStreamSink::fail(const ApiError& error,
                                               const DecisionRecord& record) {
  if (ended_) {
    co_return;
  }
  ended_ = true;
  if (!writer_.began()) {
    failed_before_start_ = error;
    record_ = record;
    co_return;
  }
  // Named, not a temporary in the co_await's argument: GCC 12 mishandles those (here a stream
  // that failed after it began trapped, SIGILL, and took the gateway down).
  const std::vector<json> events = events_.fail(error, record);
  if (co_await write(events)) {
    co_await writer_.end(/*done_marker=*/false);
  }
}

// ---------------------------------------------------------------------------------------------
// ResponsesBufferedSink

net::awaitable<bool> ResponsesBufferedSink::piece(const Piece& piece) {
  answer_.add(upstream::ApiKind::kChat, piece);
  co_return true;
}

net::awaitable<bool> ResponsesBufferedSink::revise(const Revision&) {
  answer_ = WholeAnswer{};
  co_return true;
}

net::awaitable<void> ResponsesBufferedSink::finish(const Outcome& outcome,
                                                   const DecisionRecord& record) {
  if (!ended()) {
    json response =
        response_object(head_, request_, output_items(head_, answer_), &outcome, &record, nullptr);
    finished_ = FinishedResponse{std::move(response), answer_, !record.may_leave_device, false};
    tier_ = record.tier;
  }
  co_return;
}

net::awaitable<void> ResponsesBufferedSink::native_finish(const NativeAnswer& answer,
                                                          const Outcome&,
                                                          const DecisionRecord& record) {
  if (!ended()) {
    json response = relabelled_response(head_, request_, answer.response, &record);
    finished_ = FinishedResponse{std::move(response), {}, !record.may_leave_device, true};
    tier_ = record.tier;
  }
  co_return;
}

net::awaitable<void> ResponsesBufferedSink::fail(const ApiError& error,
                                                 const DecisionRecord& record) {
  if (!ended()) {
    error_ = error;
    error_record_ = record.to_json();
  }
  co_return;
}

}  // namespace tandem::server
