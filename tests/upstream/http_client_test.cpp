#include "upstream/http_client.h"

#include <gtest/gtest.h>

namespace tandem::upstream {
namespace {

TEST(BaseUrlTest, ParsesSchemesHostsPortsAndPaths) {
  auto a = parse_base_url("https://api.openai.com/v1");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->tls);
  EXPECT_EQ(a->host, "api.openai.com");
  EXPECT_EQ(a->port, "443");
  EXPECT_EQ(a->base_path, "/v1");
  auto b = parse_base_url("http://127.0.0.1:8081/");
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->tls);
  EXPECT_EQ(b->port, "8081");
  EXPECT_EQ(b->base_path, "");
  auto c = parse_base_url("http://[::1]:9000/v1");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, "9000");
  EXPECT_FALSE(parse_base_url("ftp://x").ok());
  EXPECT_FALSE(parse_base_url("http://:80").ok());
  EXPECT_FALSE(parse_base_url("http://host:port/").ok());
}

TEST(RetryAfterTest, SecondsAndHttpDates) {
  EXPECT_EQ(parse_retry_after("3")->count(), 3000);
  EXPECT_EQ(parse_retry_after("0")->count(), 0);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")->count(), 0);  // in the past
  EXPECT_FALSE(parse_retry_after("soon").has_value());
  EXPECT_FALSE(parse_retry_after("").has_value());
}

}  // namespace
}  // namespace tandem::upstream
