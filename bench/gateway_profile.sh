#!/usr/bin/env bash
# Where a cloud-path request's instructions go: `tandem serve` (edge disabled, the bench's
# configuration) under callgrind, relaying non-streaming chat requests to the fast mock upstream.
#   bench/gateway_profile.sh [BINARY]      # default build/tandem; ~2 minutes
# Unlike requests/s on a shared machine, instruction counts do not move with the load: the same
# binary gives the same figures, so two builds compare exactly. Counting starts after a warm-up
# (connections pooled, statements prepared) and covers SECONDS of wrk -t1 -c2; everything is
# divided by the requests wrk completed. Prints instructions per request, in total and for the
# gateway's own functions (inclusive), and leaves the profile in build/bench/profile/ for
# callgrind_annotate or kcachegrind.
# Knobs: SECONDS_MEASURED=20 WARMUP_SECONDS=5 TANDEM_YAML (appended to the configuration),
# GATEWAY_STREAM=1 (streamed requests: four SSE chunks each), SYSCALLS=1 (instead of
# callgrind: system calls per request by name, strace -c -f over wrk -t1 -c64; strace slows
# the process, the counts do not change), ALLOCS=1 (instead of callgrind: heap allocations per
# request, from jemalloc's own statistics; two runs of the gateway, one with the warm-up alone,
# so what start-up and warm-up allocate is subtracted).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=cloud_path.sh
source "$root/bench/cloud_path.sh"
binary=${1:-$root/build/tandem}
upstream_bin=$root/build/tests/support/fault_upstream
out=$root/build/bench/profile
measured=${SECONDS_MEASURED:-20}
warmup=${WARMUP_SECONDS:-5}
tools=(valgrind callgrind_control callgrind_annotate wrk curl)
[[ -n "${SYSCALLS:-}" ]] && tools=(strace wrk curl)
[[ -n "${ALLOCS:-}" ]] && tools=(wrk curl)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || {
    echo "gateway_profile: needs $tool" >&2
    exit 1
  }
done
[[ -x "$binary" && -x "$upstream_bin" ]] || {
  echo "gateway_profile: build first (scripts/build.sh): $binary, $upstream_bin" >&2
  exit 1
}

rm -rf "$out" && mkdir -p "$out"

start_mock_upstream "$out"
tandem_port=$(free_port)
write_cloud_config "$out/tandem.yaml" "${TANDEM_YAML:-}"
url=http://127.0.0.1:$tandem_port/v1/chat/completions
wrk_requests() {
  GATEWAY_MODEL=fault-ok wrk -t1 -c2 -d"$1"s -s "$root/bench/gateway_wrk.lua" "$url" |
    sed -n 's/^WRK_JSON .*"requests":\([0-9]*\).*/\1/p'
}
wait_healthy() {
  for _ in $(seq 600); do
    curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$tandem_port/health" 2>/dev/null && break
    sleep 0.1
  done
}

# allocations_after SECONDS...: starts the gateway with jemalloc's statistics printed at exit,
# runs wrk for each duration in turn, stops it and prints the allocations it counted in all.
allocations_after() {
  local stats=$out/jemalloc-$#.txt
  MALLOC_CONF=stats_print:true,stats_print_opts:gdablxeh "$binary" serve \
    --config "$out/tandem.yaml" --port "$tandem_port" >"$out/tandem.log" 2>"$stats" &
  local pid=$!
  wait_healthy
  local seconds
  for seconds in "$@"; do
    wrk_requests "$seconds" >>"$out/requests-$#.txt"
  done
  kill -INT "$pid"
  wait "$pid" 2>/dev/null || true
  # jemalloc's merged totals: allocated, nmalloc, (rate), ndalloc, (rate), nrequests, ...
  awk '$1 == "total:" { print $7; exit }' "$stats"
}
if [[ -n "${ALLOCS:-}" ]]; then
  warmup_only=$(allocations_after "$warmup")
  [[ -n "$warmup_only" ]] || {
    echo "gateway_profile: $binary printed no jemalloc statistics (built without jemalloc?)" >&2
    exit 1
  }
  with_measured=$(allocations_after "$warmup" "$measured")
  requests=$(tail -n 1 "$out/requests-2.txt")
  echo "requests measured: $requests (wrk -t1 -c2); heap allocations per request:" \
    "$(((with_measured - warmup_only) / requests))"
  exit 0
fi
if [[ -n "${SYSCALLS:-}" ]]; then
  "$binary" serve --config "$out/tandem.yaml" --port "$tandem_port" >"$out/tandem.log" 2>&1 &
else
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/callgrind.out" \
    "$binary" serve --config "$out/tandem.yaml" --port "$tandem_port" >"$out/tandem.log" 2>&1 &
fi
valgrind_pid=$!
pids+=("$valgrind_pid")
wait_healthy
wrk_requests "$warmup" >/dev/null
if [[ -n "${SYSCALLS:-}" ]]; then
  strace -c -f -o "$out/strace.txt" -p "$valgrind_pid" &
  strace_pid=$!
  sleep 1  # attached to every thread before counting starts
  requests=$(GATEWAY_MODEL=fault-ok wrk -t1 -c64 -d"$measured"s -s "$root/bench/gateway_wrk.lua" \
    "$url" | sed -n 's/^WRK_JSON .*"requests":\([0-9]*\).*/\1/p')
  kill -INT "$strace_pid"
  wait "$strace_pid" 2>/dev/null || true
  echo "requests measured: $requests (wrk -t1 -c64); system calls per request:"
  echo
  echo "| system call | per request |"
  echo "| --- | ---: |"
  # strace -c: % time, seconds, usecs/call, calls, [errors,] name.
  awk -v n="$requests" '$1 ~ /^[0-9.]+$/ && $NF != "total" && $4 / n >= 0.01 {
      printf "| %s | %.2f |\n", $NF, $4 / n }' "$out/strace.txt" | sort -t'|' -k3 -rn
  awk -v n="$requests" '$1 ~ /^[0-9.]+$/ && $NF == "total" {
      printf "| **all** | **%.2f** |\n", $4 / n }' "$out/strace.txt"
  exit 0
fi
callgrind_control -i on "$valgrind_pid" >/dev/null
requests=$(wrk_requests "$measured")
callgrind_control -i off "$valgrind_pid" >/dev/null
callgrind_control -d "$valgrind_pid" >/dev/null
profile=$(ls -t "$out"/callgrind.out* | head -n 1)

total=$(callgrind_annotate "$profile" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
echo "requests measured: $requests; instructions per request: $((total / requests))"
echo
echo "| Tandem function (inclusive) | instructions per request |"
echo "| --- | ---: |"
# The gateway's own functions from src/, the outermost 40 by inclusive cost, names shortened.
callgrind_annotate --inclusive=yes --threshold=100 "$profile" 2>/dev/null |
  awk -v n="$requests" '/^ *[0-9,]+ .*\/src\// {
      cost = $1; gsub(",", "", cost); name = $0; sub(/^.*\/src\//, "", name);
      gsub(/\(anonymous namespace\)/, "{anon}", name); sub(/\(.*/, "", name);
      sub(/ \[.*/, "", name);
      if (name ~ /:_Z/) { sub(/:_Z.*/, ": a coroutine body", name) }  # mangled frame names
      if (!(name in seen)) { seen[name] = 1; printf "| %s | %.1fk |\n", name, cost / n / 1000 }
    }' | head -n 40
echo
echo "Profile: $profile (callgrind_annotate --inclusive=yes $profile)"
