#pragma once
// What an operator sees: GET /v1/tandem/status (and `tandem status`, and the dashboard) as
// one JSON document, and GET /metrics in Prometheus' text format. Both read the gateway's
// counters, windows and monitors; neither changes anything.
//
// Thread-safety: may be called from any thread while the gateway serves.

#include <nlohmann/json.hpp>
#include <string>

#include "server/gateway.h"

namespace tandem::server {

// The status document (docs/OPERATIONS.md describes every field). `ready` is /health's
// readiness.
nlohmann::json status_json(Gateway& gateway, bool ready);

// Registers the metrics computed at scrape time (edge queue, circuits, offline flag, device
// state, review queue, gaming, trace writer) on the gateway's registry. Called once, after
// the gateway is created.
void register_scrape_metrics(Gateway& gateway);

// The Prometheus exposition of every metric.
std::string metrics_text(const Gateway& gateway);

}  // namespace tandem::server
