#!/usr/bin/env bash
# Installs the Debian packages Tandem builds and tests against, then the npm packages compiled
# into the binary (web/vendor: uPlot for the dashboard's plots). Idempotent: it only calls
# apt-get when a package is missing and npm when web/vendor's lock file changed, so a warm
# machine pays nothing and needs no network.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(
  build-essential cmake ninja-build ccache git ca-certificates jq bc valgrind
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev libre2-dev pkg-config
  libhiredis-dev redis-server chromium
  nlohmann-json3-dev libsimdjson-dev libjemalloc-dev libcli11-dev libssl-dev libboost-dev libyaml-cpp-dev
  nginx-light wrk curl openssl
  clang-format clang-tidy
  clang libclang-rt-14-dev libomp-dev  # scripts/fuzz.sh: libFuzzer, and OpenMP for llama.cpp
  python3-numpy python3-yaml  # scripts/make-test-models.py, through llama.cpp's gguf-py
)

missing=()
# npm fetches llama.cpp's source (node-llama-cpp); a machine may already carry its own Node.
if ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    sudo_cmd=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# web/vendor's packages, exactly as its lock file pins them (npm ci checks their integrity).
# npm ci only when the lock file changed: it wipes node_modules and goes to the registry. The
# stamp lives inside node_modules, so removing node_modules also forces a reinstall.
vendor="$root/web/vendor"
lock_sha=$(sha256sum "$vendor/package-lock.json" | cut -d' ' -f1)
stamp="$vendor/node_modules/.package-lock.sha256"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_sha" ]]; then
  echo "install-deps: installing web/vendor's npm packages (npm ci)"
  npm ci --prefix "$vendor" --no-audit --no-fund --ignore-scripts >&2
  echo "$lock_sha" >"$stamp"
fi
