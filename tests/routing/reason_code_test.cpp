#include "routing/reason_code.h"

#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace tandem::routing {
namespace {

// Every code, by its underlying value: the enum is dense from 0 to kModelCloud.
std::vector<ReasonCode> all_codes() {
  std::vector<ReasonCode> codes;
  for (int i = 0; i <= static_cast<int>(ReasonCode::kModelCloud); ++i) {
    codes.push_back(static_cast<ReasonCode>(i));
  }
  return codes;
}

// Traces store these names and replay compares them: a shipped name never changes.
TEST(ReasonCodeTest, NamesAreTheShippedOnesAndReadBack) {
  const std::vector<std::string_view> shipped = {"privacy.detected",
                                                 "privacy.header",
                                                 "privacy.key_policy",
                                                 "privacy.opaque_content",
                                                 "privacy.opaque_refused",
                                                 "privacy.needs_cloud",
                                                 "privacy.edge_only",
                                                 "review.rule",
                                                 "capability.cloud_only",
                                                 "no_tier",
                                                 "edge.unavailable",
                                                 "cloud.not_configured",
                                                 "cloud.offline",
                                                 "latency.budget",
                                                 "gaming.capped",
                                                 "device.throttled",
                                                 "consistency.memory",
                                                 "pattern.cascade",
                                                 "pattern.speculative",
                                                 "pattern.collaborate",
                                                 "pattern.edge",
                                                 "pattern.cloud",
                                                 "ingress.complex",
                                                 "ingress.simple",
                                                 "shadow.cloud",
                                                 "model.edge",
                                                 "model.cloud"};
  const std::vector<ReasonCode> codes = all_codes();
  ASSERT_EQ(codes.size(), shipped.size());
  for (size_t i = 0; i < codes.size(); ++i) {
    EXPECT_EQ(reason_code_name(codes[i]), shipped[i]);
    EXPECT_EQ(parse_reason_code(shipped[i]), codes[i]) << shipped[i];
  }
  EXPECT_EQ(parse_reason_code("ingress"), std::nullopt);
  EXPECT_EQ(parse_reason_code(""), std::nullopt);
  EXPECT_EQ(reason_code_name(static_cast<ReasonCode>(200)), "unknown");
}

// A preference is what the pattern, the classifier or the consistency memory chose: the codes
// named pattern.*, ingress.* and consistency.memory, and nothing a rule decides.
TEST(ReasonCodeTest, PreferencesAreThePatternTheClassifierAndTheMemory) {
  std::set<std::string_view> preferences;
  for (const ReasonCode code : all_codes()) {
    if (is_preference(code)) {
      preferences.insert(reason_code_name(code));
    }
  }
  EXPECT_EQ(preferences,
            (std::set<std::string_view>{"consistency.memory", "ingress.complex", "ingress.simple",
                                        "pattern.cascade", "pattern.cloud", "pattern.collaborate",
                                        "pattern.edge", "pattern.speculative"}));
}

}  // namespace
}  // namespace tandem::routing
