#!/usr/bin/env bash
# A load-and-fault soak of `tandem serve` on loopback: mixed traffic (edge, routed, cloud,
# faulty upstreams, clients that leave, malformed requests, review tickets, operator
# endpoints) at a fixed concurrency, every response judged against docs/GATEWAY.md, the
# gateway's fds/threads/connections/RSS before, during and after, and a kill -9 with a restart
# on the same database near the end. bench/soak_driver.py says what is checked and how.
#
#   bench/soak.sh [--duration 600] [--concurrency 8] [--out FILE] [--seed N] [--keep]
#
# Every other flag goes to the driver (bench/soak_driver.py --help). Exit status: 0 every
# verdict passed, 1 one failed, 2 the soak could not run. Binaries: build/tandem and
# build/tests/support/fault_upstream, or $TANDEM_BINARY and $FAULT_UPSTREAM; they are copied
# first, so a rebuild during the run does not swap them. The working directory (config,
# database, logs) is removed at the end unless --keep is given or the soak failed; when the
# gateway crashed, its core file (core_pattern permitting) and the binaries stay there too.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tandem=${TANDEM_BINARY:-$root/build/tandem}
fault_upstream=${FAULT_UPSTREAM:-$root/build/tests/support/fault_upstream}
model=${SOAK_MODEL:-$root/models/stories260K.gguf}

keep=0
args=()
for arg in "$@"; do
  if [[ "$arg" == --keep ]]; then keep=1; else args+=("$arg"); fi
done

for file in "$tandem" "$fault_upstream"; do
  [[ -x "$file" ]] || {
    echo "soak: $file is missing; build it: cmake --build build --target tandem fault_upstream" >&2
    exit 2
  }
done
command -v python3 >/dev/null || { echo "soak: needs python3" >&2; exit 2; }

work=$(mktemp -d /tmp/tandem-soak.XXXXXX)
mkdir -p "$work/bin"
cp "$tandem" "$fault_upstream" "$work/bin/"
driver_pid=
cleanup() {
  local status=$?
  if [[ -n "$driver_pid" ]]; then kill "$driver_pid" 2>/dev/null || true; fi
  if ((keep == 0 && status == 0)); then
    rm -rf "$work"
  elif compgen -G "$work/core*" >/dev/null; then
    echo "soak: the gateway left a core file; it, the binaries, config, database and logs are" \
      "kept in $work (gdb $work/bin/tandem $work/core*)" >&2
  else
    rm -rf "$work/bin"
    echo "soak: config, database and logs kept in $work" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 "$root/bench/soak_driver.py" --tandem "$work/bin/tandem" \
  --fault-upstream "$work/bin/fault_upstream" --model "$model" --workdir "$work" \
  ${args[@]+"${args[@]}"} &
driver_pid=$!
status=0
wait "$driver_pid" || status=$?
driver_pid=
exit "$status"
