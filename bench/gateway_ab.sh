#!/usr/bin/env bash
# Two (or more) builds of Tandem relaying the same cloud-path traffic, side by side: each binary
# serves on its own port in front of one fast mock upstream (edge disabled, the configuration of
# bench/gateway_bench.sh), all up at once, and wrk loads them in turn for ROUND_SECONDS each, for
# ROUNDS rounds. Per round it records requests/s and the CPU time the binary used per request;
# the report gives each binary's medians and, against the first binary, the median of the
# per-round ratios with their range. Pairing rounds is what makes a 5% difference visible on a
# machine whose speed swings by more than that from one second to the next; a binary against
# itself (an A/A run) shows how wide the ratios spread by chance at the time.
#   bench/gateway_ab.sh OLD_BINARY NEW_BINARY [MORE...]     # ~ROUNDS x binaries x ROUND_SECONDS
# Knobs: ROUNDS=12 ROUND_SECONDS=2 WRK_CONNECTIONS=32. Raw rounds: build/bench/gateway_ab/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=cloud_path.sh
source "$root/bench/cloud_path.sh"
out=$root/build/bench/gateway_ab
rounds=${ROUNDS:-12}
seconds=${ROUND_SECONDS:-2}
connections=${WRK_CONNECTIONS:-32}
upstream_bin=$root/build/tests/support/fault_upstream
if (($# < 2)); then
  echo "usage: bench/gateway_ab.sh OLD_BINARY NEW_BINARY [MORE...]" >&2
  exit 2
fi
for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || {
    echo "gateway_ab: needs $tool" >&2
    exit 1
  }
done
for binary in "$@" "$upstream_bin"; do
  [[ -x "$binary" ]] || {
    echo "gateway_ab: not an executable: $binary (build first: scripts/build.sh)" >&2
    exit 1
  }
done

rm -rf "$out" && mkdir -p "$out"
wait_healthy() {
  for _ in $(seq 100); do
    curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$1/health" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "gateway_ab: port $1 never became healthy" >&2
  exit 1
}
load() {  # load PORT SECONDS: prints wrk's JSON line
  GATEWAY_MODEL=fault-ok wrk -t1 -c"$connections" -d"$2"s -s "$root/bench/gateway_wrk.lua" \
    "http://127.0.0.1:$1/v1/chat/completions" | sed -n 's/^WRK_JSON //p'
}
cpu_ticks() {  # utime + stime of a process, in clock ticks
  awk '{print $14 + $15}' "/proc/$1/stat"
}

start_mock_upstream "$out"
write_cloud_config "$out/tandem.yaml"

ports=()
servers=()
binaries=("$@")
for i in "${!binaries[@]}"; do
  binary=${binaries[$i]}
  port=$(free_port)
  "$binary" serve --config "$out/tandem.yaml" --port "$port" >"$out/tandem-$i.log" 2>&1 &
  servers+=($!)
  pids+=($!)
  ports+=("$port")
done
for port in "${ports[@]}"; do
  wait_healthy "$port"
  load "$port" 1 >/dev/null  # warm: connections pooled, first allocations made
done

tick=$(getconf CLK_TCK)
: >"$out/rounds.tsv"
for round in $(seq "$rounds"); do
  for i in "${!ports[@]}"; do
    before=$(cpu_ticks "${servers[$i]}")
    result=$(load "${ports[$i]}" "$seconds")
    after=$(cpu_ticks "${servers[$i]}")
    printf '%s\t%s\t%s\t%s\t%s\n' "$i" "$round" "$result" "$before" "$after" >>"$out/rounds.tsv"
  done
done

python3 - "$out/rounds.tsv" "$tick" "$@" <<'EOF'
import json, statistics, sys

rounds_file, tick, binaries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
by_binary = {}
for line in open(rounds_file):
    index, round_, result, before, after = line.rstrip("\n").split("\t")
    wrk = json.loads(result)
    bad = wrk["non2xx"] + wrk["connect_errors"] + wrk["read_errors"] + wrk["write_errors"]
    if bad or wrk["requests"] == 0:
        sys.exit(f"gateway_ab: binary {index} round {round_}: {bad} failed requests of {wrk['requests']}")
    cpu_us = (int(after) - int(before)) * 1e6 / tick / wrk["requests"]
    by_binary.setdefault(int(index), []).append((wrk["rps"], cpu_us))

print(f"{len(by_binary[0])} rounds each; ratios are per round against {binaries[0]}\n")
print("| binary | requests/s | CPU per request, µs | requests/s ratio [range] | CPU per request ratio [range] |")
print("| --- | ---: | ---: | ---: | ---: |")
base = by_binary[0]
for index, binary in enumerate(binaries):
    rows = by_binary[index]
    rps = [r for r, _ in rows]
    cpu = [c for _, c in rows]
    rps_ratio = [r / b for (r, _), (b, _) in zip(rows, base)]
    cpu_ratio = [c / b for (_, c), (_, b) in zip(rows, base)]
    print(f"| {binary} | {statistics.median(rps):,.0f} | {statistics.median(cpu):.1f} "
          f"| {statistics.median(rps_ratio):.3f} [{min(rps_ratio):.2f}–{max(rps_ratio):.2f}] "
          f"| {statistics.median(cpu_ratio):.3f} [{min(cpu_ratio):.2f}–{max(cpu_ratio):.2f}] |")
EOF
