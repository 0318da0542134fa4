#include "server/request_hints.h"

#include <cctype>
#include <charconv>

namespace tandem::server {
namespace {

std::string lower(std::string text) {
  for (auto& c : text) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return text;
}

}  // namespace

std::variant<routing::RequestHints, ApiError> request_hints(const RoutingHeaders& headers,
                                                            const config::ClientKey* key) {
  routing::RequestHints hints;
  if (!headers.privacy.empty()) {
    if (lower(headers.privacy) != "local-only") {
      return invalid_request("X-Tandem-Privacy must be 'local-only', not '" + headers.privacy + "'",
                             "X-Tandem-Privacy");
    }
    hints.privacy_header = true;
  }
  if (!headers.latency_budget.empty()) {
    uint32_t budget = 0;
    const auto* end = headers.latency_budget.data() + headers.latency_budget.size();
    const auto [ptr, ec] = std::from_chars(headers.latency_budget.data(), end, budget);
    if (ec != std::errc() || ptr != end || budget == 0) {
      return invalid_request(
          "X-Tandem-Latency-Budget-Ms must be a positive integer of "
          "milliseconds, not '" +
              headers.latency_budget + "'",
          "X-Tandem-Latency-Budget-Ms");
    }
    hints.latency_budget_ms = budget;
  }
  if (!headers.pattern.empty()) {
    const std::string wanted = lower(headers.pattern);
    std::string names;
    bool known = false;
    for (const char* name : routing::kPatternNames) {
      known = known || wanted == name;
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    if (!known) {
      return invalid_request(
          "X-Tandem-Pattern must be one of " + names + ", not '" + headers.pattern + "'",
          "X-Tandem-Pattern");
    }
    hints.pattern = wanted;
  }
  if (!headers.review.empty()) {
    if (lower(headers.review) != "required") {
      return invalid_request("X-Tandem-Review must be 'required', not '" + headers.review + "'",
                             "X-Tandem-Review");
    }
    hints.review_header = true;
  }
  if (headers.client.size() > 256) {
    return invalid_request("X-Tandem-Client is longer than 256 characters", "X-Tandem-Client");
  }
  hints.client = headers.client;
  if (key != nullptr) {
    // A key identifies its client; the header may only narrow it (several users of one key).
    hints.client = headers.client.empty() ? key->name : key->name + "/" + headers.client;
    hints.key_local_only = key->privacy == "local-only";
  }
  return hints;
}

}  // namespace tandem::server
