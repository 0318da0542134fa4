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
  EXPECT_EQ(bad.status, 400);

  const ApiError too_long = api_error_from(make_error(ErrorCode::kContextOverflow, "too long"));
  EXPECT_EQ(too_long.origin, ErrorOrigin::kClient);
  EXPECT_TRUE(too_long.retryable);
  EXPECT_FALSE(too_long.clients_fault());
  EXPECT_EQ(too_long.code, "context_length_exceeded");

  const ApiError gone = client_gone();
  EXPECT_TRUE(gone.cancelled);
  EXPECT_FALSE(gone.clients_fault());
  EXPECT_EQ(gone.status, 499);

  const ApiError busy = api_error_from(make_error(ErrorCode::kBusy, "queue full"));
  EXPECT_TRUE(busy.retryable);
  EXPECT_EQ(busy.retry_after_seconds, 1);

  const ApiError edge_down =
      unavailable("the edge model is not available", "edge_unavailable", 503, ErrorOrigin::kEdge);
  EXPECT_EQ(edge_down.origin, ErrorOrigin::kEdge);
  EXPECT_TRUE(edge_down.retryable);
  EXPECT_FALSE(edge_down.clients_fault());

  const ApiError fault = internal_error("chatcmpl-1");
  EXPECT_EQ(fault.origin, ErrorOrigin::kGateway);
  EXPECT_FALSE(fault.retryable);
  EXPECT_EQ(fault.status, 500);
  EXPECT_NE(fault.message.find("chatcmpl-1"), std::string::npos);
}

TEST(ApiErrorTest, OriginsHaveNames) {
  EXPECT_STREQ(error_origin_name(ErrorOrigin::kClient), "client");
  EXPECT_STREQ(error_origin_name(ErrorOrigin::kGateway), "gateway");
  EXPECT_STREQ(error_origin_name(ErrorOrigin::kEdge), "edge");
  EXPECT_STREQ(error_origin_name(ErrorOrigin::kCloud), "cloud");
}

}  // namespace
}  // namespace tandem::server
