#include "common/log.h"
#include "net/spawn.h"
#include "server/gateway_util.h"
#include "server/http_state.h"
#include "server/responses.h"

namespace tandem::server {

using nlohmann::json;
namespace asio = net::asio;
namespace http = net::http;

Response json_text_response(int status, std::string body, bool keep_alive) {
  Response res{static_cast<http::status>(status), 11};
  res.set(http::field::content_type, "application/json");
  res.set(http::field::server, "tandem");
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response json_response(int status, const json& body, bool keep_alive) {
  return json_text_response(status, dump(body), keep_alive);
}

Response text_response(const std::string& body, std::string_view content_type, bool keep_alive) {
  Response res{http::status::ok, 11};
  res.set(http::field::content_type, std::string(content_type));
  res.set(http::field::server, "tandem");
  res.keep_alive(keep_alive);
  res.body() = body;
  res.prepare_payload();
  return res;
}

Response static_response(const StaticFile& file, bool keep_alive) {
  Response res = text_response(std::string(file.body), file.content_type, keep_alive);
  res.set("Content-Security-Policy",
          "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  res.set("X-Content-Type-Options", "nosniff");
  res.set(http::field::cache_control, "no-cache");
  return res;
}

Response error_response(const ApiError& error, bool keep_alive) {
  Response res = json_response(http_status(error), error_body(error), keep_alive);
  if (error.retry_after_seconds) {
    res.set(http::field::retry_after, std::to_string(*error.retry_after_seconds));
  }
  return res;
}

Response error_response(const ApiError& error, const json& record, bool keep_alive) {
  Response res = error_response(error, keep_alive);
  json body = error_body(error);
  body["tandem"] = record;
  res.body() = dump(body);
  res.prepare_payload();
  return res;
}

ApiError shutting_down_error() {
  return api_error_from(make_error(ErrorCode::kShuttingDown, "the gateway is shutting down"));
}

std::string_view header_of(const HttpRequest& req, http::field field) {
  const auto value = req[field];
  return {value.data(), value.size()};
}

RoutingHeaders routing_headers(const HttpRequest& req) {
  auto field = [&](const char* name) {
    const auto value = req[name];
    return std::string(value.data(), value.size());
  };
  RoutingHeaders h;
  h.privacy = field("X-Tandem-Privacy");
  h.latency_budget = field("X-Tandem-Latency-Budget-Ms");
  h.client = field("X-Tandem-Client");
  h.pattern = field("X-Tandem-Pattern");
  h.review = field("X-Tandem-Review");
  return h;
}

ApiError request_failed(const std::exception_ptr& failure, const std::string& request_id) {
  log_event(LogLevel::kError, "server", "request_failed",
            {{"request_id", request_id}, {"message", net::exception_text(failure)}});
  return internal_error(request_id.empty() ? "(none)" : request_id);
}

}  // namespace tandem::server
