#include "server/api_error.h"

#include <gtest/gtest.h>

#include "server/gateway_util.h"

namespace tandem::server {
namespace {

// The gateway's tier loop decides on these, never on HTTP statuses: a request the client got
// wrong is not retried on another tier; one too long for a context, or a tier that is down, is.
TEST(ApiErrorTest, OriginAndRetryabilityDecideWhatAnotherTierMayDo) {
  const ApiError bad = invalid_request("messages: must be a list", "messages");
  EXPECT_EQ(bad.origin, ErrorOrigin::kClient);
  EXPECT_TRUE(bad.clients_fault());
  EXPECT_EQ(http_status(bad), 400);

  const ApiError too_long = api_error_from(make_error(ErrorCode::kContextOverflow, "too long"));
  EXPECT_EQ(too_long.origin, ErrorOrigin::kClient);
  EXPECT_TRUE(too_long.retryable);
  EXPECT_FALSE(too_long.clients_fault());
  EXPECT_EQ(too_long.code, "context_length_exceeded");

  const ApiError gone = client_gone();
  EXPECT_TRUE(gone.cancelled());
  EXPECT_FALSE(gone.clients_fault());
  EXPECT_EQ(http_status(gone), 499);

  const ApiError busy = api_error_from(make_error(ErrorCode::kBusy, "queue full"));
  EXPECT_TRUE(busy.retryable);
  EXPECT_EQ(busy.retry_after_seconds, 1);

  const ApiError edge_down =
      unavailable("the edge model is not available", "edge_unavailable", ErrorOrigin::kEdge);
  EXPECT_EQ(edge_down.origin, ErrorOrigin::kEdge);
  EXPECT_TRUE(edge_down.retryable);
  EXPECT_FALSE(edge_down.clients_fault());

  const ApiError fault = internal_error("chatcmpl-1");
  EXPECT_EQ(fault.origin, ErrorOrigin::kGateway);
  EXPECT_FALSE(fault.retryable);
  EXPECT_EQ(http_status(fault), 500);
  EXPECT_NE(fault.message.find("chatcmpl-1"), std::string::npos);
}

// The one mapping: every kind has its status and OpenAI type, and the same public code can mean
// different things (nothing configured is 503, every upstream failing 502).
TEST(ApiErrorTest, EachKindHasOneStatusAndType) {
  struct Case {
    ErrorKind kind;
    int status;
    const char* type;
    const char* name;
  };
  const Case cases[] = {
      {ErrorKind::kInvalidRequest, 400, "invalid_request_error", "invalid_request"},
      {ErrorKind::kUnauthenticated, 401, "invalid_request_error", "unauthenticated"},
      {ErrorKind::kForbidden, 403, "permission_error", "forbidden"},
      {ErrorKind::kNotFound, 404, "invalid_request_error", "not_found"},
      {ErrorKind::kMethodNotAllowed, 405, "invalid_request_error", "method_not_allowed"},
      {ErrorKind::kRequestTimeout, 408, "invalid_request_error", "request_timeout"},
      {ErrorKind::kConflict, 409, "invalid_request_error", "conflict"},
      {ErrorKind::kBodyTooLarge, 413, "invalid_request_error", "body_too_large"},
      {ErrorKind::kRateLimited, 429, "rate_limit_error", "rate_limited"},
      {ErrorKind::kHeadersTooLarge, 431, "invalid_request_error", "headers_too_large"},
      {ErrorKind::kCancelled, 499, "server_error", "cancelled"},
      {ErrorKind::kInternal, 500, "server_error", "internal"},
      {ErrorKind::kUpstreamFailed, 502, "server_error", "upstream_failed"},
      {ErrorKind::kUnavailable, 503, "server_error", "unavailable"},
  };
  for (const Case& c : cases) {
    const ApiError e = make_api_error(c.kind, ErrorOrigin::kGateway, "m", "");
    EXPECT_EQ(http_status(e), c.status) << c.name;
    EXPECT_STREQ(error_type(e), c.type) << c.name;
    EXPECT_STREQ(error_kind_name(c.kind), c.name);
    EXPECT_EQ(error_body(e)["error"]["type"], c.type) << c.name;
  }
  EXPECT_EQ(http_status(unavailable("none configured", "cloud_unavailable")), 503);
  EXPECT_EQ(http_status(upstream_failed("all failed", "cloud_unavailable")), 502);
  EXPECT_EQ(upstream_failed("all failed", "cloud_unavailable").origin, ErrorOrigin::kCloud);
}

// An upstream's refusal of the request is relayed with its own status, and only a 4xx is: a
// status outside that range in a refusal is the gateway's bug, answered as a plain 400.
TEST(ApiErrorTest, AnUpstreamRefusalKeepsItsOwnStatus) {
  ApiError refused = invalid_request("unprocessable");
  refused.kind = ErrorKind::kUpstreamRefused;
  for (int status : {400, 404, 422, 499}) {
    refused.upstream_status = status;
    EXPECT_EQ(http_status(refused), status);
  }
  for (int status : {0, 200, 399, 500, 503}) {
    refused.upstream_status = status;
    EXPECT_EQ(http_status(refused), 400) << status;
  }
  EXPECT_STREQ(error_type(refused), "invalid_request_error");
}

TEST(ApiErrorTest, TheEgressGuardsRefusalIsForbiddenAndAnAuditOutageUnavailable) {
  EXPECT_EQ(http_status(egress_refused({"private_data", "an e-mail address"})), 403);
  EXPECT_STREQ(error_type(egress_refused({"private_data", "x"})), "permission_error");
  EXPECT_EQ(http_status(egress_refused({"audit_unavailable", "the audit is down"})), 503);
}

TEST(ApiErrorTest, OriginsHaveNames) {
  EXPECT_STREQ(error_origin_name(ErrorOrigin::kClient), "client");
  EXPECT_STREQ(error_origin_name(ErrorOrigin::kGateway), "gateway");
  EXPECT_STREQ(error_origin_name(ErrorOrigin::kEdge), "edge");
  EXPECT_STREQ(error_origin_name(ErrorOrigin::kCloud), "cloud");
}

}  // namespace
}  // namespace tandem::server
