#pragma once
// Shadow mode's arithmetic ("start in the cloud, move to the edge"): which requests are
// sampled, how alike two answers are, and — from the per-kind counts shadow mode collected —
// which query kinds the edge already answers as the cloud does, with a confidence bound
// rather than a raw rate, so that a kind moves on evidence and not on a lucky handful.
//
// Verdict per kind, at the configured target agreement and minimum sample count:
//   move_to_edge       samples >= min_samples and Wilson 95% lower bound >= target
//   stay_in_cloud      Wilson 95% upper bound < target (the edge is worse, whatever comes)
//   need_more_samples  otherwise, with an estimate of how many more samples would decide,
//                      assuming the agreement seen so far holds
//
// Thread-safety: pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "config/config.h"

namespace tandem::routing {

// The standard normal quantile for a two-sided 95% interval.
inline constexpr double kWilsonZ95 = 1.959963984540054;

struct Interval {
  double lower = 0.0;
  double upper = 1.0;
};

// The Wilson score interval of `successes` out of `trials` (both may be fractional, for the
// sample-size estimate); [0, 1] for no trials.
Interval wilson_interval(double successes, double trials, double z = kWilsonZ95);

// Whether shadow mode samples the request with this id, for a share in [0, 1]: a hash of the
// id against the share, so the same id always gets the same answer, 0 samples nothing and 1
// everything.
bool shadow_sampled(std::string_view request_id, double share);

// Token-overlap F1 of two answers (SQuAD-style, for information beside the agreement): tokens
// are runs of ASCII letters and digits, lower-cased, and each non-ASCII character on its own
// (so Chinese is compared character by character). 1 when both are empty, 0 when one is.
double token_f1(std::string_view a, std::string_view b);

enum class ShadowVerdict { kMoveToEdge, kStayInCloud, kNeedMoreSamples };
const char* shadow_verdict_name(ShadowVerdict verdict);  // "move_to_edge", ...

// What shadow mode counted for one kind (sums over its samples; see store/shadow_log.h).
struct ShadowCounts {
  std::string kind;
  int64_t compared = 0;  // samples where both tiers answered
  int64_t agreed = 0;
  int64_t edge_busy = 0;    // samples skipped: no free edge slot
  int64_t edge_failed = 0;  // samples the edge could not answer
  double sum_f1 = 0.0;
  double sum_edge_confidence = 0.0;
  double sum_edge_ms = 0.0;
  double sum_cloud_ms = 0.0;
  int64_t sum_edge_tokens = 0;
  int64_t requests = 0;  // routed requests of this kind while shadow mode was on
  int64_t shadowed = 0;  // of which the cloud answered because of shadow mode
};

struct ShadowKindReport {
  std::string kind;  // "overall" for the line over all kinds
  int64_t samples = 0;
  int64_t agreed = 0;
  int64_t edge_busy = 0;
  int64_t edge_failed = 0;
  double agreement = 0.0;  // agreed / samples; 0 without samples
  Interval bounds;         // Wilson 95%
  double mean_f1 = 0.0;
  double mean_edge_confidence = 0.0;
  double mean_edge_ms = 0.0;
  double mean_cloud_ms = 0.0;
  double mean_edge_tokens = 0.0;
  int64_t requests = 0;
  int64_t shadowed = 0;
  double traffic_share = 0.0;  // requests / all routed requests
  double movable_share = 0.0;  // shadowed / all routed requests: what moving it moves
  ShadowVerdict verdict = ShadowVerdict::kNeedMoreSamples;
  // need_more_samples: the further samples that would decide if the agreement seen so far
  // holds (min_samples when there are none yet); nullopt when no number would (the rate equals
  // the target, or the target is 1).
  std::optional<int64_t> more_samples;
};

struct ShadowReport {
  double target_quality = 0.95;
  uint32_t min_samples = 30;
  std::vector<ShadowKindReport> kinds;  // config::kQueryKinds order, then any other kind
  ShadowKindReport overall;
  int64_t requests = 0;  // all routed requests counted
  int64_t shadowed = 0;
  std::vector<std::string> move_to_edge;  // kinds whose verdict is move_to_edge
  double edge_share_if_moved = 0.0;       // sum of their movable_share
};

ShadowReport shadow_report(const std::vector<ShadowCounts>& counts,
                           const config::ShadowConfig& config);

// The start of a report window: a duration back from `now_unix_ms` ("90s", "30m", "24h", "7d",
// "2w"), a UTC date or time ("2025-06-01", "2025-06-01T12:00", "2025-06-01T12:00:00Z") or unix
// milliseconds ("1748736000000"). kInvalidArgument naming the accepted forms otherwise.
Result<int64_t> parse_since(std::string_view text, int64_t now_unix_ms);

}  // namespace tandem::routing
