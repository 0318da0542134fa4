#pragma once
// What the prompt-feature tests read: one feature by name, the features of a single user
// message, and the value a count becomes (log1p).

#include <cmath>
#include <string_view>

#include <gtest/gtest.h>

#include "routing/prompt_features.h"

namespace tandem::routing::prompt_test {

inline float feature(const PromptFeatures& features, std::string_view name) {
  const size_t index = feature_index(name);
  EXPECT_LT(index, kFeatureCount) << name;
  return index < kFeatureCount ? features.values[index] : NAN;
}

inline PromptFeatures of(std::string_view user) {
  PromptView view;
  view.last_user = user;
  view.total_chars = user.size();
  return extract_features(view);
}

inline float log_count(double count) {
  return static_cast<float>(std::log1p(count));
}

}  // namespace tandem::routing::prompt_test
