# shellcheck shell=bash disable=SC2154  # root and pids come from the sourcing script
# Sourced by bench/gateway_profile.sh and bench/gateway_ab.sh: the fast mock upstream and
# Tandem's configuration in front of it, as those benches measure the cloud path (edge
# disabled, no retries, no health probes). The caller defines `root`; sourcing this file arms
# an exit trap that kills every process whose pid the bench adds to `pids`.

pids=()
stop_started() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_started EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_mock_upstream DIR: starts tests/support/fault_upstream with one thread, logs into DIR,
# adds its pid to `pids` and sets `upstream_port` once it listens.
start_mock_upstream() {
  local dir=$1
  "$root/build/tests/support/fault_upstream" --port 0 --port-file "$dir/upstream.port" \
    --threads 1 >"$dir/upstream.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do [[ -s "$dir/upstream.port" ]] && break; sleep 0.1; done
  upstream_port=$(tr -d '[:space:]' <"$dir/upstream.port")
}

# write_cloud_config FILE [EXTRA_YAML]: Tandem relaying model fault-ok to that upstream.
write_cloud_config() {
  cat >"$1" <<YAML
server: {threads: 2}
edge: {enabled: false}
cloud:
  upstreams:
    - name: mock
      base_url: http://127.0.0.1:$upstream_port/v1
      models: {fault-ok: fault-ok}
      retry: {max_retries: 0}
      health: {interval_ms: 0}
${2:-}
YAML
}
