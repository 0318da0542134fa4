#!/usr/bin/env bash
# What the operations bookkeeping costs per request (GatewayStats::observe, the gaming monitor's
# record() and escalation_capped(), the throttle monitor, a latency window) and per scrape
# (GET /metrics, the status page's sections, the gaming report), beside serialising the decision
# record every response already carries, in one Google Benchmark run: 5 repetitions of each,
# medians reported.
#   bench/run_operations_bench.sh [operations_bench options...]
#     (e.g. --benchmark_filter=Gaming, or --benchmark_repetitions=1 for a quick look)
# SKIP_BUILD=1 uses build/bench/operations_bench as it is; otherwise only that target is built
# (JOBS, default 2, parallel jobs). The raw JSON is kept in build/bench/operations-bench.json.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  if [[ ! -f "$build/build.ninja" ]]; then
    echo "run_operations_bench: $build is not configured; run scripts/build.sh once" >&2
    exit 1
  fi
  ninja -C "$build" -j "${JOBS:-2}" operations_bench >/dev/null
fi
mkdir -p "$build/bench"
raw="$build/bench/operations-bench.json"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"$build/bench/operations_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_format=json "$@" >"$raw"

jq -r --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
  --arg gb "$(dpkg-query -W -f='${Version}' libbenchmark-dev 2>/dev/null || echo '?')" \
  --arg nproc "$(nproc)" --arg load "$load_before" --arg load_after "$(cut -d' ' -f1-3 /proc/loadavg)" '
  def commas: tostring | if length > 3 then (.[:-3] | commas) + "," + .[-3:] else . end;
  def sig3: if . >= 100 then (round | commas)
            elif . >= 10 then (. * 10 | round / 10 | tostring)
            else (. * 100 | round / 100 | tostring) end;
  def ns: if . < 1000 then "\(sig3) ns"
          elif . < 1000000 then "\(. / 1000 | sig3) µs"
          else "\(. / 1000000 | sig3) ms" end;
  def to_ns: . as $r | ($r.time_unit | if . == "ns" then 1 elif . == "us" then 1000
                                        elif . == "ms" then 1000000 else 1000000000 end) as $k
             | {real: ($r.real_time * $k), cpu: ($r.cpu_time * $k)};
  def where: if test("^BM_Baseline") then "baseline (every response)"
             elif test("Observe|GamingRecord/|EscalationCapped|ThrottleRecord|LatencyWindowAdd")
               then "request path"
             elif test("WhileScraped") then "request path during scrapes"
             else "scrape / status page" end;
  def ratio: if . >= 10 then "\(round | commas)x" elif . >= 1 then "\(. * 10 | round / 10)x"
             else "\(. * 1000 | round / 10) %" end;
  def notes: [
      (if .threads > 1 then "\(.threads) threads, \(.items_per_second | round | commas) calls/s in all"
       elif .items_per_second then "\(.items_per_second | round | commas) calls/s" else empty end),
      (if .bytes then "\(.bytes | round | commas) bytes" else empty end),
      (if .samples then "\(.samples | round | commas) samples" else empty end),
      (if .tracked then "\(.tracked | round | commas) clients, \(.flagged | round) flagged"
       elif .clients then "\(.clients | round | commas) clients" else empty end),
      (if .capped_share then "\(.capped_share * 1000 | round / 10) % of calls capped" else empty end),
      (if .p50_us then "per call p50 \(.p50_us * 1000 | ns), p99 \(.p99_us * 1000 | ns), p99.9 \(.p999_us * 1000 | ns), max \(.max_us * 1000 | ns); \(.over_1ms | round) calls over 1 ms, \(.scrapes | round) scrapes per repetition"
       else empty end)
    ] | join("; ");
  .context as $c |
  [.benchmarks[] | select(.aggregate_name == "median")] as $med |
  [.benchmarks[] | select(.aggregate_name == "cv")] as $cv |
  ($med | map(select(.run_name == "BM_Baseline_DecisionRecordJson"))[0]
   | if . then (to_ns | .real) else null end) as $base |
  "Machine: \($nproc) cores (nproc), \($cpu); load average \($load) before the run, \($load_after) after. Google Benchmark \($gb) (its library reports a \($c.library_build_type) build), \($c.num_cpus) CPUs at \($c.mhz_per_cpu) MHz as it reports them. Each benchmark repeated \(.benchmarks[0].repetitions) times; the figures are the medians, CV the coefficient of variation of the real time over the repetitions.",
  "",
  "| benchmark | runs on | median per call | CPU per call | CV | ÷ decision-record JSON | notes |",
  "| --- | --- | ---: | ---: | ---: | ---: | --- |",
  ($med[] | . as $b | (to_ns) as $t |
    # With threads, Google Benchmark divides the wall time by the iterations of all threads: the
    # inverse of the throughput. Per call, as each thread sees it, is that times the threads.
    # CPU time is summed over the threads, so it is already per call.
    ($t.real * $b.threads) as $per_call |
    ($cv | map(select(.run_name == $b.run_name))[0].real_time // null) as $v |
    "| `\($b.run_name | sub("/real_time"; "") | sub("/min_time:[0-9.]+"; ""))` | \($b.run_name | where) | **\($per_call | ns)** | \($t.cpu | ns) | \(if $v then "\($v * 100 | round) %" else "–" end) | \(if $base then ($per_call / $base | ratio) else "–" end) | \($b | notes) |")
' "$raw"
