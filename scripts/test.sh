#!/usr/bin/env bash
# Builds everything from nothing (see build.sh) and runs every test. CI runs exactly this.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

"$root/scripts/build.sh"
"$root/scripts/check-format.sh"
# Serially: llama.cpp's OpenMP threads spin-wait on their cores, so two model-running test
# processes on a 2-core machine slow each other down a hundredfold.
ctest --test-dir "$root/build" --output-on-failure
