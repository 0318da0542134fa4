#include "upstream/circuit_breaker.h"

#include <gtest/gtest.h>

namespace tandem::upstream {
namespace {

using Clock = CircuitBreaker::Clock;

class CircuitBreakerTest : public ::testing::Test {
 protected:
  Clock::time_point now_ = Clock::time_point(std::chrono::seconds(1000));
  CircuitBreaker breaker_{config::CircuitPolicy{3, 1000}, [this] { return now_; }};
};

TEST_F(CircuitBreakerTest, OpensAfterConsecutiveFailuresOnly) {
  breaker_.record_failure();
  breaker_.record_failure();
  breaker_.record_success();  // resets the count
  breaker_.record_failure();
  breaker_.record_failure();
  EXPECT_EQ(breaker_.state(), CircuitState::kClosed);
  EXPECT_TRUE(breaker_.allow());
  breaker_.record_failure();
  EXPECT_EQ(breaker_.state(), CircuitState::kOpen);
  EXPECT_FALSE(breaker_.allow());
  EXPECT_EQ(breaker_.cooldown_remaining().count(), 1000);
}

TEST_F(CircuitBreakerTest, HalfOpenLetsOneTrialThrough) {
  for (int i = 0; i < 3; ++i) {
    breaker_.record_failure();
  }
  now_ += std::chrono::milliseconds(999);
  EXPECT_FALSE(breaker_.allow());
  now_ += std::chrono::milliseconds(1);
  EXPECT_EQ(breaker_.state(), CircuitState::kHalfOpen);
  EXPECT_TRUE(breaker_.allow());
  EXPECT_FALSE(breaker_.allow());  // only one trial at a time
  breaker_.record_success();
  EXPECT_EQ(breaker_.state(), CircuitState::kClosed);
  EXPECT_TRUE(breaker_.allow());
}

TEST_F(CircuitBreakerTest, FailedTrialReopensForAnotherCooldown) {
  for (int i = 0; i < 3; ++i) {
    breaker_.record_failure();
  }
  now_ += std::chrono::milliseconds(1000);
  EXPECT_TRUE(breaker_.allow());
  breaker_.record_failure();
  EXPECT_EQ(breaker_.state(), CircuitState::kOpen);
  EXPECT_FALSE(breaker_.allow());
  now_ += std::chrono::milliseconds(1000);
  EXPECT_TRUE(breaker_.allow());
}

TEST_F(CircuitBreakerTest, AbandonedTrialFreesTheSlot) {
  for (int i = 0; i < 3; ++i) {
    breaker_.record_failure();
  }
  now_ += std::chrono::milliseconds(1000);
  EXPECT_TRUE(breaker_.allow());
  breaker_.record_abandoned();
  EXPECT_TRUE(breaker_.allow());
}

}  // namespace
}  // namespace tandem::upstream
