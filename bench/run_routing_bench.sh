#!/usr/bin/env bash
# The router's ingress decision (privacy scan, prompt features, complexity classifier, policy)
# on prompts of 100, 2,000 and 20,000 characters, beside the floor of a router that makes one
# network call per request (HTTP/1.1 over an open loopback connection), in one run.
#   bench/run_routing_bench.sh [routing_bench options...]    (e.g. -n 5000 for a quick look)
# SKIP_BUILD=1 uses build/bench/routing_bench as it is; otherwise only that target is built
# (JOBS, default 2, parallel jobs). The raw JSON is kept in build/bench/routing-bench.json.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  if [[ ! -f "$build/build.ninja" ]]; then
    echo "run_routing_bench: $build is not configured; run scripts/build.sh once" >&2
    exit 1
  fi
  ninja -C "$build" -j "${JOBS:-2}" routing_bench >/dev/null
fi
mkdir -p "$build/bench"
raw="$build/bench/routing-bench.json"
"$build/bench/routing_bench" "$@" >"$raw"

jq -r --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
  --arg nproc "$(nproc)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" '
  def commas: tostring | if length > 3 then (.[:-3] | commas) + "," + .[-3:] else . end;
  def n: round | commas;
  def us: if . < 10 then (. * 100 | round / 100 | tostring)
          elif . < 100 then (. * 10 | round / 10 | tostring)
          else n end;
  def prompt_name: if .variant == "en" then "English"
             elif .variant == "en-ascii" then "English, ASCII only"
             elif .variant == "en+card" then "English + card at end"
             elif .variant == "zh" then "Chinese" elif .variant == "ja" then "Japanese"
             elif .variant == "ko" then "Korean" elif .variant == "ru" then "Russian"
             elif .variant == "ar" then "Arabic" elif .variant == "hi" then "Hindi"
             elif .variant == "vi" then "Vietnamese" elif .variant == "th" then "Thai"
             elif .variant == "he" then "Hebrew" elif .variant == "bn" then "Bengali"
             elif .variant == "el" then "Greek"
             else .variant end;
  def route: "\(.tier) (\(.reason))";
  . as $all |
  "Machine: \($nproc) cores (nproc), \($cpu); load average before the summary \($load). One thread, unpinned; steady_clock, \(.clock_overhead_ns | round) ns per reading (inside every figure). \(.iterations | commas) timed decisions per case up to 2,000 characters, \(.long_iterations | commas) at 20,000, after \(.warmup | commas) (\(.warmup / 10 | round | commas) at 20,000) untimed.",
  "",
  "**The decision** (`Router::signals` on the parsed request body + `Router::decide`, each timed on its own):",
  "",
  "| config | prompt | chars | bytes | p50 µs | p90 µs | p99 µs | max µs | over 1 ms | decisions per CPU-second | route |",
  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  (.results[] |
    "| \(.config) | \(prompt_name) | \(.chars | commas) | \(.bytes | commas) | \(.decision.p50_us | us) | \(.decision.p90_us | us) | **\(.decision.p99_us | us)** | \(.decision.max_us | us) | \(.over_1ms) / \(.iterations | commas) | \(.decisions_per_cpu_second | n) | \(route) |"),
  "",
  "**Where the time goes** (p50 of each stage, µs, timed stage by stage in the same loop):",
  "",
  "| config | prompt | chars | privacy scan (every field of the body) | features | classifier | policy | sum | decision p50 | for comparison: scan of the message text alone |",
  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  (.results[] | .stages_p50_us as $s |
    "| \(.config) | \(prompt_name) | \(.chars | commas) | \($s.privacy_scan | us) | \($s.features | us) | \($s.classifier | us) | \($s.policy | us) | \(($s.privacy_scan + $s.features + $s.classifier + $s.policy) | us) | \(.decision.p50_us | us) | \($s.privacy_scan_text_only | us) |"),
  "",
  "**Against the floor of a network call** (HTTP/1.1 POST of the prompt, tiny fixed response, over an already open loopback TCP connection to a server thread in the same process; no DNS, TLS, connection set-up, JSON or model: a lower bound, not a model of any real router):",
  "",
  "| chars | Tandem decision p50 / p99 µs (default, English) | Tandem decision p50 / p99 µs (configured, English) | loopback HTTP p50 / p99 µs | loopback ÷ Tandem at p50 (default) |",
  "| ---: | ---: | ---: | ---: | ---: |",
  (.loopback_http[] | . as $l |
    ($all.results | map(select(.variant == "en" and .chars == $l.chars))) as $r |
    ($r | map(select(.config == "default"))[0]) as $d |
    ($r | map(select(.config == "configured"))[0]) as $c |
    "| \($l.chars | commas) | \(if $d then "\($d.decision.p50_us | us) / \($d.decision.p99_us | us)" else "–" end) | \(if $c then "\($c.decision.p50_us | us) / \($c.decision.p99_us | us)" else "–" end) | \($l.round_trip.p50_us | us) / \($l.round_trip.p99_us | us) | \(if $d then "\($l.round_trip.p50_us / $d.decision.p50_us * 10 | round / 10)x" else "–" end) |")
' "$raw"
