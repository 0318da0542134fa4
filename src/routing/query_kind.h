#pragma once
// The kind of a query, from its prompt features alone: multiple choice, math word problem,
// code, short factoid question, or open-ended. Calibration fits a cascade threshold per kind
// (a model's confidence means different things on a lettered choice and on an essay), and
// shadow mode reports edge-cloud agreement per kind, so the names are stable (they appear in
// configuration files and reports: config::kQueryKinds).
//
// Thread-safety: pure functions.

#include <cstddef>
#include <optional>
#include <string_view>

#include "routing/prompt_features.h"

namespace tandem::routing {

enum class QueryKind : size_t { kMultipleChoice, kMath, kCode, kFactoid, kOpen };
inline constexpr size_t kQueryKindCount = 5;

// "multiple_choice", "math", "code", "factoid", "open" (config::kQueryKinds, same order).
std::string_view query_kind_name(QueryKind kind);

QueryKind query_kind(const PromptFeatures& features);

// The kind of a name from query_kind_name(); nullopt for anything else.
std::optional<QueryKind> parse_query_kind(std::string_view name);

}  // namespace tandem::routing
