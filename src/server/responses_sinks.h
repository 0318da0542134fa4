#pragma once
// The Responses API's answers (responses_api.h): a stream of Responses events, or one Response
// object. Thread-safety: a sink belongs to one request, driven by its session's coroutine.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "net/asio.h"
#include "server/gateway.h"
#include "server/responses_api.h"
#include "server/sse_writer.h"

namespace tandem::server {

// What a finished response leaves to keep: the Response object and the answer.
struct FinishedResponse {
  nlohmann::json response;
  WholeAnswer answer;         // empty when a native upstream answered: its output items say it
  bool private_data = false;  // the routing kept it on the device: never stored
  bool native = false;        // a native Responses upstream answered (responses_native.h)
};

class ResponsesStreamSink final : public ResponseSink {
 public:
  ResponsesStreamSink(SseWriter writer, ResponseHead head, const ResponsesRequest& request)
      : writer_(writer), events_(std::move(head), request) {}

  net::awaitable<bool> begin(const DecisionRecord& record) override;
  net::awaitable<bool> piece(const Piece& piece) override;
  net::awaitable<bool> revise(const Revision& revision) override;
  net::awaitable<void> finish(const Outcome& outcome, const DecisionRecord& record) override;
  net::awaitable<void> fail(const ApiError& error, const DecisionRecord& record) override;
  net::awaitable<bool> native_event(const nlohmann::json& event) override;
  net::awaitable<void> native_finish(const NativeAnswer& answer, const Outcome& outcome,
                                     const DecisionRecord& record) override;

  bool began() const { return writer_.began(); }
  bool broken() const { return writer_.broken(); }
  // When the request failed before anything was sent, the session answers with a plain
  // error response instead.
  const std::optional<ApiError>& failed_before_start() const { return failed_before_start_; }
  const DecisionRecord& record() const { return record_; }
  const std::optional<FinishedResponse>& finished() const { return finished_; }

 private:
  net::awaitable<bool> write(const std::vector<nlohmann::json>& events);

  SseWriter writer_;
  ResponsesEvents events_;
  DecisionRecord begun_;  // the record at begin(), for a native response.created
  bool ended_ = false;
  std::optional<ApiError> failed_before_start_;
  DecisionRecord record_;
  std::optional<FinishedResponse> finished_;
};

class ResponsesBufferedSink final : public ResponseSink {
 public:
  ResponsesBufferedSink(ResponseHead head, const ResponsesRequest& request)
      : head_(std::move(head)), request_(request) {}

  net::awaitable<bool> begin(const DecisionRecord&) override { co_return true; }
  net::awaitable<bool> piece(const Piece& piece) override;
  net::awaitable<bool> revise(const Revision&) override;
  net::awaitable<void> finish(const Outcome& outcome, const DecisionRecord& record) override;
  net::awaitable<void> fail(const ApiError& error, const DecisionRecord& record) override;
  // A whole native Response arrives with native_finish() alone.
  net::awaitable<bool> native_event(const nlohmann::json&) override { co_return true; }
  net::awaitable<void> native_finish(const NativeAnswer& answer, const Outcome& outcome,
                                     const DecisionRecord& record) override;

  bool ended() const { return error_.has_value() || finished_.has_value(); }
  const std::optional<ApiError>& error() const { return error_; }
  const nlohmann::json& error_record() const { return error_record_; }
  const std::optional<FinishedResponse>& finished() const { return finished_; }
  const std::string& tier() const { return tier_; }

 private:
  ResponseHead head_;
  const ResponsesRequest& request_;
  WholeAnswer answer_;
  std::optional<FinishedResponse> finished_;
  std::optional<ApiError> error_;
  nlohmann::json error_record_;
  std::string tier_;
};

}  // namespace tandem::server
