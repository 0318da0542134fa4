#pragma once
// Small helpers the gateway's source files share (gateway, tiers, patterns, Tandem's API).
// Internal to the server component.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_error.h"
#include "upstream/egress.h"

namespace tandem::server {

inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Wall-clock milliseconds since the epoch, for what is stored (tickets, the memory).
inline int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Token counts add up without overflowing: an upstream may report any count up to INT32_MAX,
// several times in one request (fallbacks, hand-offs, a verification).
inline int add_tokens(int a, int b) {
  const int64_t sum = static_cast<int64_t>(a) + b;
  return static_cast<int>(std::clamp<int64_t>(sum, 0, INT32_MAX));
}

inline std::string join(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) {
      out += separator;
    }
    out += item;
  }
  return out;
}

// Whom the routing-gaming monitor judges for a request's client. With API keys the client is
// "key" or "key/<X-Tandem-Client>", and the key is accountable: a key holder who sends a new
// X-Tandem-Client with every request would otherwise become many small clients, none with
// enough requests to judge. Without keys the client is whatever the caller says.
inline std::string gaming_identity(const std::string& client, bool keyed) {
  return keyed ? client.substr(0, client.find('/')) : client;
}

// A tier cannot answer now (retryable): nothing is configured, running or free to take it.
inline ApiError unavailable(std::string message, std::string code,
                            ErrorOrigin origin = ErrorOrigin::kGateway) {
  ApiError e = make_api_error(ErrorKind::kUnavailable, origin, std::move(message), std::move(code));
  e.retryable = true;
  return e;
}

// A cloud upstream was asked and failed (retryable: another upstream or tier may answer).
inline ApiError upstream_failed(std::string message, std::string code) {
  ApiError e = make_api_error(ErrorKind::kUpstreamFailed, ErrorOrigin::kCloud, std::move(message),
                              std::move(code));
  e.retryable = true;
  return e;
}

// What the client hears when the egress guard kept a cloud request on the device: forbidden
// for what the request carries, unavailable when the audit could not record the send (a
// passing condition).
inline ApiError egress_refused(const upstream::EgressRefusal& refusal) {
  ApiError e = unavailable("the cloud tier was not asked: " + refusal.message, refusal.code);
  if (refusal.code != "audit_unavailable") {
    e.kind = ErrorKind::kForbidden;
  }
  return e;
}

// A fault inside the gateway (a bug, never the client's or an upstream's doing). The client is
// told it is logged under the request's id, never what it was.
inline ApiError internal_error(const std::string& request_id) {
  return make_api_error(ErrorKind::kInternal, ErrorOrigin::kGateway,
                        "the gateway failed while answering this request; the failure is "
                        "logged with request id " +
                            request_id,
                        "internal_error");
}

inline ApiError client_gone() {
  return api_error_from(make_error(ErrorCode::kCancelled, "the client went away"));
}

// The value of `key` in a query string ("a=1&b=2"), without percent-decoding: the values
// this API takes are plain words and numbers.
inline std::optional<std::string> query_value(const std::string& query, const std::string& key) {
  size_t start = 0;
  while (start <= query.size()) {
    const size_t end = std::min(query.find('&', start), query.size());
    const std::string_view pair(query.data() + start, end - start);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) {
      return eq == std::string_view::npos ? std::string() : std::string(pair.substr(eq + 1));
    }
    start = end + 1;
  }
  return std::nullopt;
}

// An integer query parameter in [min, max] into `out` (left alone when the parameter is
// absent); an error naming it when it is not one.
inline std::optional<std::string> read_integer(const std::string& query, const std::string& key,
                                               int64_t min, int64_t max, int64_t& out) {
  const auto text = query_value(query, key);
  if (!text) {
    return std::nullopt;
  }
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < min || value > max) {
    return "query parameter '" + key + "' must be an integer between " + std::to_string(min) +
           " and " + std::to_string(max) + ", not '" + *text + "'";
  }
  out = value;
  return std::nullopt;
}

}  // namespace tandem::server
