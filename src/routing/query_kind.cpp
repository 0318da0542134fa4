#include "routing/query_kind.h"

#include <cmath>

#include "config/config.h"

namespace tandem::routing {
namespace {

static_assert(std::size(config::kQueryKinds) == kQueryKindCount,
              "query kinds and their configuration names disagree");

// Features are log1p'd counts; the rules read counts.
double count(const PromptFeatures& features, std::string_view name) {
  return std::expm1(static_cast<double>(features.values[feature_index(name)]));
}

}  // namespace

std::string_view query_kind_name(QueryKind kind) {
  return config::kQueryKinds[static_cast<size_t>(kind)];
}

std::optional<QueryKind> parse_query_kind(std::string_view name) {
  for (size_t k = 0; k < kQueryKindCount; ++k) {
    if (name == config::kQueryKinds[k]) {
      return static_cast<QueryKind>(k);
    }
  }
  return std::nullopt;
}

QueryKind query_kind(const PromptFeatures& features) {
  // Order matters: a multiple-choice question about code is answered as a choice (one
  // letter), a word problem quoting a number list is still math.
  if (count(features, "choice_options") >= 3) {
    return QueryKind::kMultipleChoice;
  }
  if (count(features, "code_keywords") >= 2 && count(features, "code_symbols") >= 4) {
    return QueryKind::kCode;
  }
  // Numbers with arithmetic around them, or a problem to reason through whose numbers are
  // written as words ("three pounds and the other seven").
  const double numbers = count(features, "numbers");
  const double math_terms = count(features, "math_terms");
  if (numbers >= 2 && (math_terms >= 1 || count(features, "math_symbols") >= 1 || numbers >= 3)) {
    return QueryKind::kMath;
  }
  if (math_terms >= 1 && count(features, "reasoning_cues") >= 2) {
    return QueryKind::kMath;
  }
  if (count(features, "log_words") <= 60 &&
      (count(features, "question_marks") >= 1 || count(features, "factoid_cues") >= 1)) {
    return QueryKind::kFactoid;
  }
  return QueryKind::kOpen;
}

}  // namespace tandem::routing
