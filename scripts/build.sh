#!/usr/bin/env bash
# Everything needed to build Tandem on a fresh Debian 12 machine, idempotent and incremental:
# Debian packages, llama.cpp and the derived test models (both cached outside the checkout),
# then Tandem itself into build/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

"$root/scripts/install-deps.sh"
llama_prefix=$("$root/scripts/build-llama.sh" | tail -n 1)
test_models=$("$root/scripts/test-models.sh" | tail -n 1)

# CMake caches where it found llama.cpp: a new prefix (another llama.cpp commit or build
# options) needs a fresh configure, not a stale cache.
stamp="$root/build/.llama-prefix"
if [[ -f "$stamp" && "$(cat "$stamp")" != "$llama_prefix" ]]; then
  rm -rf "$root/build/CMakeCache.txt" "$root/build/CMakeFiles"
fi
cmake -S "$root" -B "$root/build" -G Ninja \
  -DCMAKE_BUILD_TYPE="${TANDEM_BUILD_TYPE:-RelWithDebInfo}" \
  -DCMAKE_PREFIX_PATH="$llama_prefix" -DTANDEM_TEST_MODELS_DIR="$test_models" >/dev/null
echo "$llama_prefix" >"$stamp"
cmake --build "$root/build" --parallel "$(nproc)"
