// Labelled routing traces ("routing trace v1", JSONL): parse_traces(), which load_traces() reads
// files with, must give rows within the format (finite numbers, scores in [0, 1]) or an error
// naming the line; then the evaluator turns the rows into samples with the default router, as
// `tandem eval` and `tandem calibrate` do.

#include <cmath>
#include <memory>
#include <sstream>
#include <string>

#include "eval/samples.h"
#include "eval/trace_data.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/property_check.h"
#include "routing/router.h"

namespace tandem::fuzz {
namespace {

constexpr const char* kSource = "fuzz.jsonl";
constexpr uint64_t kSeed = 7;

bool finite_or_absent(const std::optional<double>& value) {
  return !value || std::isfinite(*value);
}

void check_rows(const std::vector<eval::TraceRow>& rows) {
  for (const auto& row : rows) {
    FUZZ_CHECK(row.location.rfind(std::string(kSource) + ":", 0) == 0);
    for (const auto& [model, answer] : row.answers) {
      FUZZ_CHECK_MSG(std::isfinite(answer.score) && answer.score >= 0.0 && answer.score <= 1.0,
                     row.location + ": " + model + " score " + std::to_string(answer.score));
      FUZZ_CHECK(finite_or_absent(answer.confidence));
      FUZZ_CHECK(finite_or_absent(answer.cost_usd));
      FUZZ_CHECK(finite_or_absent(answer.tokens_out));
      FUZZ_CHECK(row.score(model).has_value());
    }
  }
}

const routing::Router& default_router() {
  static const std::shared_ptr<const routing::Router> router =
      routing::Router::create(config::RoutingConfig{}).value();
  return *router;
}

// The evaluator over the rows, with the first two models as edge and cloud.
void check_samples(const std::vector<eval::TraceRow>& rows) {
  const std::vector<std::string> models = eval::models_in(rows);
  if (models.size() < 2) {
    return;
  }
  eval::SampleOptions options;
  options.edge = models[0];
  options.cloud = models[1];
  options.seed = kSeed;
  const auto set = eval::make_samples(rows, options, default_router());
  if (!set) {
    FUZZ_CHECK(set.error().code == ErrorCode::kInvalidArgument);
    return;
  }
  FUZZ_CHECK(set->rows_read == rows.size());
  FUZZ_CHECK(set->samples.size() + set->rows_skipped == set->rows_read);
  FUZZ_CHECK(!set->samples.empty());
  for (const auto& sample : set->samples) {
    FUZZ_CHECK(sample.hash == eval::row_hash(sample.id, kSeed));
    FUZZ_CHECK(std::isfinite(sample.complexity) && sample.complexity >= 0.0 &&
               sample.complexity <= 1.0);
    for (const size_t tier : {eval::kEdgeTier, eval::kCloudTier}) {
      FUZZ_CHECK(sample.score[tier] >= 0.0 && sample.score[tier] <= 1.0);
      FUZZ_CHECK(std::isfinite(sample.cost[tier]));
    }
  }
}

}  // namespace

void fuzz_routing_traces(const uint8_t* data, size_t size) {
  std::istringstream in{std::string(as_text(data, size))};
  const auto rows = eval::parse_traces(in, kSource);
  if (!rows) {
    FUZZ_CHECK(rows.error().code == ErrorCode::kInvalidArgument);
    FUZZ_CHECK_MSG(rows.error().message.rfind(std::string(kSource) + ":", 0) == 0,
                   rows.error().message);
    return;
  }
  check_rows(rows.value());
  check_samples(rows.value());
}

}  // namespace tandem::fuzz
