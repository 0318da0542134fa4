#pragma once
// Canary prompts (seed 000, model version skew): at an interval, the same fixed prompts go to
// the edge and to the cloud, greedy, and their final answers are compared (common/
// answer_match.h). Agreement over time shows when an edge or cloud model update changed
// behaviour: the cloud provider swapped a snapshot, a fleet got a re-quantized edge model.
// Results go to the skew monitor (telemetry/skew_monitor.h) with both model identities.
//
// Thread-safety: canary_forever() runs on a strand of its own (Operations::start), a one-off run
// on the request's; each run's state is its own, and what it records is thread-safe.

#include <string>
#include <vector>

#include "common/cancel.h"
#include "net/asio.h"
#include "telemetry/skew_monitor.h"

namespace tandem::server {

class Gateway;

// Short prompts with one unambiguous answer each, used when operations.canary.prompts is
// empty. Replace them with prompts from your own traffic: agreement on them is what matters.
const std::vector<std::string>& default_canary_prompts();

// Runs every canary prompt once on both tiers and returns the run (not yet recorded). Prompts
// run one after another, so a canary never takes more than one edge slot.
net::awaitable<telemetry::CanaryRun> run_canary(Gateway& gateway, CancelSignal& cancel);

// Runs a canary every operations.canary.interval_s, recording each run, until `stop` fires.
net::awaitable<void> canary_forever(Gateway& gateway, CancelSignal& stop);

}  // namespace tandem::server
