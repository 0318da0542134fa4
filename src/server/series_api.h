#pragma once
// GET /v1/tandem/series: the dashboard's plots as JSON, from the gateway's time series
// (telemetry/time_series.h) and, for flagged clients, the gaming monitor's windows. Columnar,
// as charting libraries take it: one array of times and, per plotted quantity, one array of
// values (null where a point has no data). docs/OPERATIONS.md describes every field.
// Transport-free: the HTTP session checks the operator's key and writes what comes back.
//
// Thread-safety: may be called from any thread while the gateway serves.

#include <cstddef>
#include <string>

#include "server/gateway.h"
#include "server/tandem_api.h"

namespace tandem::server {

// The most points a plot gets: a six-hour window shows minutes, an hour its 10 s buckets.
inline constexpr size_t kSeriesMaxPoints = 360;
// The flagged clients plotted, worst first (the gaming report's order).
inline constexpr size_t kSeriesMaxClients = 5;
// The window when none is asked for.
inline constexpr int64_t kSeriesDefaultWindowS = 3600;

// ?window_s=N (60 up to what the series keeps, default 3600).
ApiResponse series_endpoint(Gateway& gateway, const std::string& query);

}  // namespace tandem::server
